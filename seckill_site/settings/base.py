"""Settings shared by every environment; everything external is configured by URL."""

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import environ
from csp.constants import NONCE, NONE, SELF

from seckill_site.broker import is_amqp, task_queues

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

# The key of `make run` and the tests, taken by local.py and test.py when SECRET_KEY is unset.
# Not a setting here: production.py must never inherit a default key (it refuses this one).
DEV_SECRET_KEY = "dev-only-not-secret-" + "x" * 40
DEBUG = False  # local.py reads DEBUG from the environment; production never does
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "seckill_site.apps.SiteConfig",  # connects the Celery worker's signal handlers
    "seckill_site.apps.ShopAdminConfig",  # django.contrib.admin, with login limits
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "csp",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "users",
    "goods",
    "seckill",
    "orders",
]

MIDDLEWARE = [
    # First: they time and log every request, the sold-out answers below included
    # (seckill_site/metrics.py, seckill_site/logs.py: a few microseconds, no network call).
    "seckill_site.metrics.RequestMetricsMiddleware",
    "seckill_site.logs.RequestLogMiddleware",
    # Before anything reads a body (SoldOutMiddleware reads the buy form's goodsId): an
    # oversized Content-Length is refused unread. A header lookup, no network call.
    "seckill_site.errors.RequestBodyLimitMiddleware",
    # Around everything that may touch Redis or PostgreSQL, SoldOutMiddleware's window read
    # included: an outage is a 503, never a 500.
    "seckill_site.errors.ServiceUnavailableMiddleware",
    # Then: a buy request for a sale this process knows is sold out costs nothing more.
    "seckill.middleware.SoldOutMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every answer (CONTENT_SECURITY_POLICY below), built once per
    # process where no nonce is asked for (seckill_site/csp.py).
    "seckill_site.csp.CSPMiddleware",
    # Static files from the web process itself (compressed, cached forever when hashed):
    # `make run` and a node behind a balancer need no separate file server.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "users.middleware.SessionMiddleware",
    "users.middleware.SlidingSessionMiddleware",
    # Django's, the language worked out once per header pair (seckill_site/locale.py).
    "seckill_site.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "seckill_site.messages.LazyMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# The pages load scripts and styles from the shop's own origin only; the few inline bits
# left (the API docs' start-up script) carry the request's nonce (`request.csp_nonce`). No
# 'unsafe-inline', no inline event handlers (static/js/nav.js submits the language form). The
# browser tests (e2e/) fail on any violation a page reports.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        # blob: the captcha's picture and sound, fetched by static/js/seckill.js (so a refusal
        # shows its message instead of a broken image) and shown from memory.
        "img-src": [SELF, "data:", "blob:"],
        "media-src": [SELF, "blob:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}

ROOT_URLCONF = "seckill_site.urls"
WSGI_APPLICATION = "seckill_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "users.verification.views.sms_demo_hint",
                "seckill_site.context.time_zone",
            ],
        },
    },
]

DATABASES = {"default": env.db_url("DATABASE_URL")}
# Reuse connections, but check them first so a restarted database heals by itself.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# DATABASE_POOLER=pgbouncer: PostgreSQL behind PgBouncer in transaction mode, where consecutive
# transactions of one client may run on different server connections: no server-side cursors
# (they outlive their transaction) and nothing that relies on session state (the shop takes
# no session advisory locks; its reconcile lock lives in Redis).
DATABASE_POOLER = env("DATABASE_POOLER", default="")
if DATABASE_POOLER == "pgbouncer":
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
elif DATABASE_POOLER:
    raise environ.ImproperlyConfigured(f"DATABASE_POOLER={DATABASE_POOLER!r}: only 'pgbouncer' is known")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# redis://host:port/0 for one server, redis+cluster://host:port,host:port for a Redis Cluster,
# rediss://… and rediss+cluster://… for either over TLS (seckill_site/redis/connection.py): cache,
# sessions, rate limits and the shop's counters alike.
REDIS_URL = env("REDIS_URL")
REDIS_IS_CLUSTER = REDIS_URL.startswith(("redis+cluster://", "rediss+cluster://"))
# Before every key (seckill_site/redis/keys.py and the cache's KEY_PREFIX); tests set their own.
REDIS_KEY_PREFIX = env("REDIS_KEY_PREFIX", default="")
# Writes whose acknowledgment promises durability (a reservation told "queued", a revocation)
# wait for this many replicas to confirm them (Redis WAIT) and are undone or refused otherwise
# (seckill_site.redis.script_durable / durable_set). 0, the default, for one Redis with no
# replica; a Redis Cluster with replicas sets 1 (deploy/cluster.env): a primary cut off on the
# minority side then cannot acknowledge what its promoted replica will not have.
REDIS_WAIT_REPLICAS = env.int("REDIS_WAIT_REPLICAS", default=0)
REDIS_WAIT_TIMEOUT_MS = env.int("REDIS_WAIT_TIMEOUT_MS", default=500)  # below SOCKET_TIMEOUT (2 s)
# How often a Redis Cluster client retries a command that met a connection error, a moved slot
# or a cluster-down answer, re-reading the slot map each time (redis-py's default: 10, with
# backoff). Each retry that met an unreachable node cost a connect timeout per seed it asked: a
# web node cut off from Redis held requests for 64-93 s (make partition-test, fault 2) until the
# circuit breaker below refused the unreachable nodes at once, retries and seeds alike.
REDIS_CLUSTER_RETRIES = env.int("REDIS_CLUSTER_RETRIES", default=10)
# The circuit breaker in front of every Redis connection (seckill_site/redis/breaker.py): a node
# that fails a command and then a PING (all nodes pinged at once, within REDIS_PROBE_TIMEOUT)
# is refused at once, without a round trip, for REDIS_BREAKER_SECONDS, then probed again. A web
# node cut off from Redis answers 503 in ~3 s (one socket timeout plus the probe), not ~90 s.
REDIS_BREAKER_SECONDS = env.float("REDIS_BREAKER_SECONDS", default=3.0)
REDIS_PROBE_TIMEOUT = env.float("REDIS_PROBE_TIMEOUT", default=1.0)  # a PING over a 200 ms link (fault 4) must fit
CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        # A list: django-redis would split a string at the commas of a cluster URL's seed nodes.
        "LOCATION": [REDIS_URL],
        "OPTIONS": {
            "CLIENT_CLASS": "seckill_site.redis.connection.ClusterAwareClient",
            "CONNECTION_FACTORY": "seckill_site.redis.connection.ClusterAwareConnectionFactory",
            "SOCKET_CONNECT_TIMEOUT": env.float("REDIS_CONNECT_TIMEOUT", default=2.0),
            "SOCKET_TIMEOUT": 2,
        },
        "KEY_PREFIX": f"{REDIS_KEY_PREFIX}cache",
    }
}

# Sessions live in Redis only: the seckill gate reads the user id from the session
# without touching PostgreSQL (seed 000 keeps the user by token in Redis for this reason).
# users.sessions: Django's cache engine, but an unreadable store answers 503, not "log in".
SESSION_ENGINE = "users.sessions"
SESSION_CACHE_ALIAS = "default"
SESSION_COOKIE_AGE = 30 * 60
# Sliding expiry is done by users.middleware.SlidingSessionMiddleware, which re-saves a
# session at most once a minute instead of on every request (the gate must stay cheap).
SESSION_SAVE_EVERY_REQUEST = False
SESSION_SLIDING_REFRESH_SECONDS = 60

AUTH_USER_MODEL = "users.User"
LOGIN_URL = "/user/index"
AUTHENTICATION_BACKENDS = ["users.backends.MobileBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 6}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
# The seeds' shoppers read Chinese; the language comes from the switcher's cookie, else the
# browser's Accept-Language.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env("TIME_ZONE", default="Asia/Shanghai")
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
MEDIA_URL = "/media/"
MEDIA_ROOT = env("MEDIA_ROOT", default=str(BASE_DIR / "media"))

# Who may tell the app the client's address (seckill_site.http.client_ip, behind every per-IP
# limit; docs/deploy.md, "Behind a load balancer"). Networks of the proxies in front of the app
# (e.g. "10.0.0.0/8,fd00::/8"), or their number when their addresses are not known in advance.
# Neither set: REMOTE_ADDR only, X-Forwarded-For ignored.
SECKILL_TRUSTED_PROXIES = env.list("SECKILL_TRUSTED_PROXIES", default=[])
SECKILL_TRUSTED_PROXY_COUNT = env.int("SECKILL_TRUSTED_PROXY_COUNT", default=0)

# Request bodies. A whole request may be at most SECKILL_MAX_REQUEST_BYTES, refused by its
# Content-Length before it is read (seckill_site.errors.RequestBodyLimitMiddleware): a 2 MB
# product image plus the form around it. Form fields without files: 1 MB; uploads up to the
# image limit stay in memory, larger ones could not pass anyway.
SECKILL_MAX_REQUEST_BYTES = env.int("SECKILL_MAX_REQUEST_BYTES", default=3 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

# WSGI wrappers around Django's handler, by dotted path, the first outermost (seckill_site/wsgi.py).
# The fast path gives the answers that sell nothing below Django; SECKILL_FASTPATH=0 turns it off.
WSGI_MIDDLEWARE = ["seckill.fastpath.FastPath"] if env.bool("SECKILL_FASTPATH", default=True) else []
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# Rate limits (django-ratelimit) count in the Redis cache.
RATELIMIT_USE_CACHE = "default"
RATELIMIT_VIEW = "seckill_site.errors.ratelimited"
# key="ip" in any django-ratelimit call means the same address as every other limit.
RATELIMIT_IP_META_KEY = "seckill_site.http.client_ip"
# Per-IP limits count an IPv6 client by its /64 (seckill_site.http.ip_bucket): anyone holds a
# whole /64 and can send from any of its addresses. django-ratelimit's own key="ip" alike.
RATELIMIT_IPV6_PREFIX = env.int("RATELIMIT_IPV6_PREFIX", default=64)
RATELIMIT_IPV6_MASK = RATELIMIT_IPV6_PREFIX

# The REST API (/api/v1/, seckill_site/api.py): tokens cached in Redis or the browser's
# session, the pages' envelope and error codes, no DB read to authenticate the gate.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "users.authentication.CachedTokenAuthentication",
        "users.authentication.SessionIdAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["users.permissions.IsShopper"],
    # Bodies are capped in size (and JSON in depth) before they are parsed (seckill_site.api).
    # Multipart goes through Django's parser, which applies DATA_UPLOAD_MAX_MEMORY_SIZE itself.
    "DEFAULT_PARSER_CLASSES": [
        "seckill_site.api.BoundedJSONParser",
        "seckill_site.api.BoundedFormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PAGINATION_CLASS": "seckill_site.api.EnvelopePagination",
    "EXCEPTION_HANDLER": "seckill_site.api.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Seckill API",
    "DESCRIPTION": (
        "Flash-sale shop API. Every answer is an envelope `{code, msg, data}`: `code` 0 on success, "
        "else an error code with a message for people. Authenticate with `Authorization: Token <key>` "
        "from `POST /api/v1/users/login`, or a browser session (unsafe methods then need the CSRF token)."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Celery -----------------------------------------------------------------------------


def _next_redis_database(url: str) -> str:
    """The broker defaults to the Redis database after the cache's: flushing the cache
    (tests, an operator) must never drop queued order writes."""
    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{database + 1}"))


if REDIS_IS_CLUSTER:
    # Celery's Redis transport cannot use a cluster, and a cluster has no second database.
    CELERY_BROKER_URL = env("CELERY_BROKER_URL")
else:
    CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=_next_redis_database(REDIS_URL))
# Production: RabbitMQ quorum queues and a dead-letter queue (seckill_site/broker.py).
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_TASK_DEFAULT_QUEUE", default="celery")
CELERY_TASK_QUEUES = task_queues(CELERY_TASK_DEFAULT_QUEUE, broker_url=CELERY_BROKER_URL)
if is_amqp(CELERY_BROKER_URL):
    # A task that fails for good is rejected, so RabbitMQ dead-letters it instead of dropping it.
    CELERY_TASK_ACKS_ON_FAILURE_OR_TIMEOUT = False
    # Each process walks the failover list in its own order, so losing one RabbitMQ node
    # moves a third of the clients, not all of them at once (make cluster-test).
    CELERY_BROKER_FAILOVER_STRATEGY = "shuffle"
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A message is acknowledged only after its task finished, and re-queued if the worker
# process dies mid-task; the order writer is idempotent, so redelivery is harmless.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Connection reuse in workers is handled like Django's requests (celery_app.py); this only
# stops Celery's fixup from closing every connection around every task.
CELERY_DB_REUSE_MAX = 1_000_000
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Redis broker: an unacknowledged message is redelivered after this many seconds.
    # Order writes take milliseconds, so 5 minutes only matters after a frozen worker.
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=300),
    # kombu looks for such messages every 10 s but, by default, scans only on every 10th look:
    # a crashed worker's orders would wait ~100 s past the timeout. Scan on every look, every 5 s.
    "unacked_restore_interval": 5,
    "unacked_restore_throttle": 1,
    # Redis broker: a publish to an unreachable or silent broker fails within seconds, so
    # the gate can give the unit back while the shopper still waits for an answer.
    "socket_timeout": env.float("CELERY_BROKER_SOCKET_TIMEOUT", default=2.0),
    "socket_connect_timeout": 2.0,
    # AMQP broker: wait for the broker's confirm so a lost publish is seen and undone.
    "confirm_publish": True,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
# How often beat tops the captcha pool up (SECKILL_CAPTCHA_POOL, below).
SECKILL_CAPTCHA_POOL_SECONDS = env.float("SECKILL_CAPTCHA_POOL_SECONDS", default=10.0)
CELERY_BEAT_SCHEDULE = {
    "seckill-reconcile": {"task": "seckill.reconcile", "schedule": 60.0},
    # The order writer's backstop for a lost flush message (seckill.services.writer.flushes_lapsed_publish).
    "seckill-flush-sweep": {
        "task": "seckill.flush_sweep",
        "schedule": env.float("SECKILL_WRITER_SWEEP_SECONDS", default=5.0),
    },
    # A draw sale's draw, for one whose ETA task was lost (seckill.services.draw.draws_due).
    "seckill-draw-sweep": {
        "task": "seckill.draw_sweep",
        "schedule": env.float("SECKILL_DRAW_SWEEP_SECONDS", default=5.0),
    },
    # Captchas drawn ahead of the opening (seckill.services.paths.captcha_pool_fill). A message
    # older than its period is dropped: the next one does the same, and after a worker outage a
    # backlog of them would each draw for seconds ahead of the order writer's flushes.
    "seckill-captcha-pool": {
        "task": "seckill.captcha_pool_fill",
        "schedule": SECKILL_CAPTCHA_POOL_SECONDS,
        "options": {"expires": SECKILL_CAPTCHA_POOL_SECONDS},
    },
    "orders-expire-unpaid": {
        "task": "orders.expire_unpaid",
        "schedule": env.int("SECKILL_EXPIRE_SWEEP_SECONDS", default=30),
    },
}

# --- The shop ---------------------------------------------------------------------------
# How accepted buys become orders: the reservations Redis holds are the outbox; the gate
# publishes one "flush sale N" message when none is pending for the sale, and a worker claims
# and writes up to SECKILL_WRITER_BATCH_SIZE orders per transaction until none are left
# (seckill/services/writer.py).
SECKILL_WRITER_BATCH_SIZE = env.int("SECKILL_WRITER_BATCH_SIZE", default=500)
# A claim on a batch of reservations lapses after this long, so another flush (the sweep's, the
# reconciler's) may take over from a writer that died. A redelivered message takes its own
# claims back at once (its task id is the claim's token), so this bounds only the rare rest.
SECKILL_WRITER_CLAIM_MS = env.int("SECKILL_WRITER_CLAIM_MS", default=30_000)
# A pending flush's mark lapses after this long even if its message was lost, so a later buy
# publishes another (a lost one is otherwise only caught by the reconciler, minutes later).
SECKILL_WRITER_FLUSH_MARK_MS = env.int("SECKILL_WRITER_FLUSH_MARK_MS", default=5000)
# Unpaid seckill orders are cancelled after this many seconds (seed 004: 15 minutes).
SECKILL_ORDER_TTL = env.int("SECKILL_ORDER_TTL", default=15 * 60)
# A draw sale's entries are spread over this many sets, each under its own hash tag (another
# Redis Cluster slot): one primary takes some 30 to 45 thousand entries a second (docs/draw.md),
# so an opening of 10^6 entrants in 10 s needs several. Fixed per sale when Redis first loads it
# as a draw sale; 1 keeps every key of the sale on its one slot. 1..64.
SECKILL_DRAW_SHARDS = env.int("SECKILL_DRAW_SHARDS", default=1)
# Text messages (users.sms): the backend class, and the file FileSmsBackend appends to.
SMS_BACKEND = env("SMS_BACKEND", default="users.sms.ConsoleSmsBackend")
SMS_FILE_PATH = env("SMS_FILE_PATH", default=str(BASE_DIR / ".run" / "sms.log"))
# Limits (users.verification): per requester (client IP, IPv6 /64) and hour; per number and
# day, all requesters together (those that once entered a code sent to it exempt); and the
# whole shop's messages per hour, a bound on what SMS pumping can cost (alert in deploy/).
SMS_SENDS_PER_IP_PER_HOUR = env.int("SMS_SENDS_PER_IP_PER_HOUR", default=20)
SMS_SENDS_PER_NUMBER_PER_DAY = env.int("SMS_SENDS_PER_NUMBER_PER_DAY", default=20)
SMS_SENDS_PER_HOUR = env.int("SMS_SENDS_PER_HOUR", default=1000)
# Per shopper and per sale, across all web nodes (Redis counters, one-minute windows): how
# many captchas one may draw and how many answers one may try. A person needs two or three.
SECKILL_CAPTCHAS_PER_MINUTE = env.int("SECKILL_CAPTCHAS_PER_MINUTE", default=20)
SECKILL_PATHS_PER_MINUTE = env.int("SECKILL_PATHS_PER_MINUTE", default=10)
# Captchas drawn ahead of the opening (seckill.services.paths), about 17 KiB of Redis each:
# shoppers draw theirs when they press "buy", so size it to the shoppers of an opening minute.
# Beat tops it up every SECKILL_CAPTCHA_POOL_SECONDS, drawing for at most
# SECKILL_CAPTCHA_POOL_FILL_SECONDS a run (a worker's core, ~9 ms a captcha); 0 turns it off.
SECKILL_CAPTCHA_POOL = env.int("SECKILL_CAPTCHA_POOL", default=1000)
SECKILL_CAPTCHA_POOL_FILL_SECONDS = env.float("SECKILL_CAPTCHA_POOL_FILL_SECONDS", default=2.0)
GOODS_LIST_CACHE_SECONDS = env.int("GOODS_LIST_CACHE_SECONDS", default=60)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    # The one-line-per-request log is for production's JSON logs (settings/production.py).
    "loggers": {"django.server": {"level": "WARNING"}, "seckill.request": {"level": "WARNING"}},
}
CSRF_FAILURE_VIEW = "seckill_site.errors.csrf_failure"
# Passwords and texted codes (the views marked sensitive) stay hidden on the DEBUG page too.
DEFAULT_EXCEPTION_REPORTER_FILTER = "seckill_site.errors.SensitiveDataFilter"
SERVE_MEDIA = env.bool("SERVE_MEDIA", default=False)
PAYMENT_PROVIDER = env("PAYMENT_PROVIDER", default="orders.payments.SimulatedProvider")

# --- Operations -------------------------------------------------------------------------
# /readyz: every dependency must answer within this many seconds (seckill_site/health.py).
READINESS_TIMEOUT = env.float("READINESS_TIMEOUT", default=2.0)
# /metrics, and /readyz's details, answer only these networks (REMOTE_ADDR) or
# `Authorization: Bearer <METRICS_TOKEN>`. Neither by default, loopback included: a reverse
# proxy on the same host would make every request a loopback one.
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=[])
METRICS_TOKEN = env("METRICS_TOKEN", default="")
