"""pytest: real PostgreSQL and Redis, fast password hashing."""

from .base import *  # noqa: F403
from .base import env

DEBUG = False
# Tests log hundreds of users in; PBKDF2 at full strength would dominate the run time.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MEDIA_ROOT = env("MEDIA_ROOT", default="/tmp/seckill-test-media")
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_TASK_DEFAULT_QUEUE", default="seckill-test")
SERVE_MEDIA = True  # product images on the live test server
SMS_BACKEND = "users.sms.LocmemSmsBackend"  # tests read users.sms.outbox
