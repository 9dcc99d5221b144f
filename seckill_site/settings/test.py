"""pytest: real PostgreSQL and Redis, fast password hashing."""

import os
import re

from seckill_site.broker import task_queues

from .base import *  # noqa: F403
from .base import CELERY_BROKER_URL, DEV_SECRET_KEY, env

# This run's own key prefix, inherited by the processes it starts: it deletes only its own keys.
# Each pytest-xdist worker adds its name, as pytest-django does to the test database's.
REDIS_KEY_PREFIX = os.environ.setdefault("REDIS_KEY_PREFIX", f"test{os.getpid()}:")
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker and not REDIS_KEY_PREFIX.endswith(f"{_worker}:"):
    REDIS_KEY_PREFIX = os.environ["REDIS_KEY_PREFIX"] = f"{REDIS_KEY_PREFIX}{_worker}:"
CACHES["default"]["KEY_PREFIX"] = f"{REDIS_KEY_PREFIX}cache"  # noqa: F405
# The payment stand-ins are shared by every run and worker; their trade numbers must not be.
# Digits (the run's pid, the worker's number): pages show trade numbers, the language tests
# read letters as untranslated words.
PAYMENT_TRADE_PREFIX = "_".join(re.findall(r"\d+", REDIS_KEY_PREFIX)) + "_"

DEBUG = False
SECRET_KEY = env("SECRET_KEY", default=DEV_SECRET_KEY)
# Tests log hundreds of users in; PBKDF2 at full strength would dominate the run time.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MEDIA_ROOT = env("MEDIA_ROOT", default="/tmp/seckill-test-media")
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
# This run's own queue, so runs sharing a RabbitMQ never take each other's messages; RabbitMQ
# deletes it after 15 idle minutes.
CELERY_TASK_DEFAULT_QUEUE = os.environ.setdefault("CELERY_TASK_DEFAULT_QUEUE", f"seckill-test-{os.getpid()}")
CELERY_QUEUE_EXPIRES_MS = 15 * 60 * 1000
CELERY_TASK_QUEUES = task_queues(
    CELERY_TASK_DEFAULT_QUEUE, broker_url=CELERY_BROKER_URL, expires_ms=CELERY_QUEUE_EXPIRES_MS
)
SERVE_MEDIA = True  # product images on the live test server
# Tests read users.sms.outbox; a worker a test starts may be given another (testutils/sms_backends.py).
SMS_BACKEND = env("TEST_SMS_BACKEND", default="users.sms.LocmemSmsBackend")
# Captchas are drawn in the request unless a test fills the pool: filling it is slow.
SECKILL_CAPTCHA_POOL = env.int("SECKILL_CAPTCHA_POOL", default=0)
