"""`make bench`: the production settings on plain-http loopback, plus the bench-only URLs.

Everything else (DEBUG off, sessions in Redis, middleware, Celery) is production's, so the
figures are the product's. The naive baseline and the floor view live in
`lab.bench.urls`, which only this module routes: no bench URL or setting lives in seckill_site.
"""

from seckill_site.broker import task_queues
from seckill_site.settings.production import *  # noqa: F403
from seckill_site.settings.production import env

ROOT_URLCONF = "lab.bench.urls"

# Loopback without TLS: no redirect to https, cookies sent over http.
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
SECURE_HSTS_SECONDS = 0

# A queue of its own, so a `make run` worker on the same broker never takes the bench's orders.
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_TASK_DEFAULT_QUEUE", default="seckill-bench")
CELERY_TASK_QUEUES = task_queues(CELERY_TASK_DEFAULT_QUEUE, broker_url=CELERY_BROKER_URL)  # noqa: F405

# The `bare` scenario: a fixed answer in the same server and process (lab/bench/bare.py), outermost.
WSGI_MIDDLEWARE = ["lab.bench.bare.wrap", *WSGI_MIDDLEWARE]  # noqa: F405
