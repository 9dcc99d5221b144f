"""pytest: real PostgreSQL and Redis, fast password hashing."""

import os

from seckill_site.broker import task_queues

from .base import *  # noqa: F403
from .base import CELERY_BROKER_URL, DEV_SECRET_KEY, env

# A key prefix of this run's own, inherited by the gunicorn and Celery processes the tests
# start: the run deletes its own keys between tests instead of flushing a whole database.
REDIS_KEY_PREFIX = os.environ.setdefault("REDIS_KEY_PREFIX", f"test{os.getpid()}:")
CACHES["default"]["KEY_PREFIX"] = f"{REDIS_KEY_PREFIX}cache"  # noqa: F405

DEBUG = False
SECRET_KEY = env("SECRET_KEY", default=DEV_SECRET_KEY)
# Tests log hundreds of users in; PBKDF2 at full strength would dominate the run time.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MEDIA_ROOT = env("MEDIA_ROOT", default="/tmp/seckill-test-media")
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
# A queue of this run's own, as the Redis key prefix above: two runs on one machine share its
# RabbitMQ, and a worker of one took the other's messages (for sales in another database). Unused
# for 15 minutes, RabbitMQ deletes it.
CELERY_TASK_DEFAULT_QUEUE = os.environ.setdefault("CELERY_TASK_DEFAULT_QUEUE", f"seckill-test-{os.getpid()}")
CELERY_QUEUE_EXPIRES_MS = 15 * 60 * 1000
CELERY_TASK_QUEUES = task_queues(
    CELERY_TASK_DEFAULT_QUEUE, broker_url=CELERY_BROKER_URL, expires_ms=CELERY_QUEUE_EXPIRES_MS
)
SERVE_MEDIA = True  # product images on the live test server
SMS_BACKEND = "users.sms.LocmemSmsBackend"  # tests read users.sms.outbox
# Captchas are drawn in the request unless a test fills the pool (test_captcha_pool.py): a
# pool of 1,000 is nine seconds of drawing wherever a test warms or runs beat.
SECKILL_CAPTCHA_POOL = env.int("SECKILL_CAPTCHA_POOL", default=0)
