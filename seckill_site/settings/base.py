"""Settings shared by every environment; everything external is configured by URL."""

import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import environ
from celery.schedules import crontab
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from seckill_site.broker import is_amqp, task_queues

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

# The key of `make run` and the tests when SECRET_KEY is unset; production.py refuses it.
DEV_SECRET_KEY = "dev-only-not-secret-" + "x" * 40
DEBUG = False  # local.py reads DEBUG from the environment; production never does
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    # Before the admin, whose forms it extends: goods' texts in each of LANGUAGES.
    "modeltranslation",
    "seckill_site.apps.SiteConfig",
    "seckill_site.apps.ShopAdminConfig",
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
    "sales",
    "seckill",
    "orders",
    "waitingroom",
]

MIDDLEWARE = [
    # First, so they time and log every request, the sold-out answers below included.
    "seckill_site.metrics.RequestMetricsMiddleware",
    "seckill_site.logs.RequestLogMiddleware",
    "seckill_site.errors.RequestBodyLimitMiddleware",
    # Outside every answer that may come as JSON or a page, the outage's and sold-out's too.
    "seckill_site.http.NegotiatedVaryMiddleware",
    # Around everything that may touch Redis or PostgreSQL: an outage is a 503, never a 500.
    "seckill_site.errors.ServiceUnavailableMiddleware",
    "seckill.middleware.SoldOutMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "seckill_site.csp.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Outside everything that may set a cookie: none leaves with an answer an edge shares.
    "seckill_site.shared.SharedAnswerMiddleware",
    "users.middleware.SessionMiddleware",
    "users.middleware.SlidingSessionMiddleware",
    "seckill_site.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "seckill_site.messages.LazyMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


# Own origin only (and the payment providers', below), inline scripts and styles by the
# request's nonce; e2e/ fails on any violation.
_CSP_DIRECTIVES: dict[str, list[object]] = {
    "default-src": [SELF],
    "script-src": [SELF, NONCE],
    "style-src": [SELF, NONCE],
    "img-src": [SELF, "data:", "blob:"],
    "media-src": [SELF, "blob:"],
    "font-src": [SELF],
    "connect-src": [SELF],
    "object-src": [NONE],
    "base-uri": [NONE],
    "frame-ancestors": [NONE],
    "form-action": [SELF],
}
CONTENT_SECURITY_POLICY = {"DIRECTIVES": _CSP_DIRECTIVES}

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
# Seconds libpq may take to connect (TCP and the startup exchange); a connect_timeout in
# DATABASE_URL's query wins. Without a bound, a database host that takes packets and never
# answers (a partition, a leader lost mid-failover) holds a request or task for minutes, or for
# good, where a bounded one gets its 503 "busy, retry" or its retry.
DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
    "connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=3)
)
# A kept connection to a host that vanished (a leader powered off, a link cut) is found dead in
# about 11 s rather than the kernel's minutes: TCP keepalives while it waits for an answer, and
# tcp_user_timeout (ms) while what it sent goes unacknowledged. libpq ignores both on a Unix
# socket; values in DATABASE_URL's query win.
for _option, _value in {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3,
                        "tcp_user_timeout": 10_000}.items():  # fmt: skip
    DATABASES["default"]["OPTIONS"].setdefault(_option, _value)
# "pgbouncer" (transaction mode): no server-side cursors, which outlive their transaction.
DATABASE_POOLER = env("DATABASE_POOLER", default="")
if DATABASE_POOLER == "pgbouncer":
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
elif DATABASE_POOLER:
    raise environ.ImproperlyConfigured(f"DATABASE_POOLER={DATABASE_POOLER!r}: only 'pgbouncer' is known")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# redis[s]:// or redis[s]+cluster:// (seckill_site/redis/connection.py): cache, sessions, counters.
REDIS_URL = env("REDIS_URL")
REDIS_IS_CLUSTER = REDIS_URL.startswith(("redis+cluster://", "rediss+cluster://"))
# Before every Redis key and the cache's KEY_PREFIX; each test run sets its own.
REDIS_KEY_PREFIX = env("REDIS_KEY_PREFIX", default="")
# Replicas that must confirm a promised write (Redis WAIT; docs/deploy.md); 0 without replicas.
REDIS_WAIT_REPLICAS = env.int("REDIS_WAIT_REPLICAS", default=0)
REDIS_WAIT_TIMEOUT_MS = env.int("REDIS_WAIT_TIMEOUT_MS", default=500)  # below SOCKET_TIMEOUT (2 s)
# Retries of a Redis Cluster command after a connection error, moved slot or cluster-down answer.
REDIS_CLUSTER_RETRIES = env.int("REDIS_CLUSTER_RETRIES", default=10)
# Circuit breaker (seckill_site/redis/breaker.py): seconds a node stays refused; PING deadline.
REDIS_BREAKER_SECONDS = env.float("REDIS_BREAKER_SECONDS", default=3.0)
REDIS_PROBE_TIMEOUT = env.float("REDIS_PROBE_TIMEOUT", default=1.0)
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

# Sessions live in Redis only, so the gate reads the user id without touching PostgreSQL.
SESSION_ENGINE = "users.sessions"
SESSION_CACHE_ALIAS = "default"
SESSION_COOKIE_AGE = 30 * 60
# Sliding expiry: users.middleware re-saves a session at most once per refresh (seconds).
SESSION_SAVE_EVERY_REQUEST = False
SESSION_SLIDING_REFRESH_SECONDS = 60

AUTH_USER_MODEL = "users.User"
# A name, reversed in the language active (its page under /zh-hans/ for a Chinese page).
LOGIN_URL = "users:index"
AUTHENTICATION_BACKENDS = ["users.backends.MobileBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "users.passwords.MinimumLengthValidator", "OPTIONS": {"min_length": 6}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# A merchant's texts (goods' names, titles, descriptions; an order's snapshot of the name) are
# kept in each language, `name_en`, `name_zh_hans` (goods/translation.py); a visitor reads theirs,
# else the other's: a text written in one language only is shown in both.
MODELTRANSLATION_DEFAULT_LANGUAGE = "en"
MODELTRANSLATION_FALLBACK_LANGUAGES = {"default": ("en", "zh-hans")}  # the asked one first, then these


def MODELTRANSLATION_BUILD_LOCALIZED_VERBOSE_NAME(verbose_name, language):  # noqa: N802 (a setting)
    """A text's label in one language: "name (English)", "名称（简体中文）"."""
    from seckill_site.translated import label_in  # after the settings, as modeltranslation reads them

    return label_in(verbose_name, language)


TIME_ZONE = env("TIME_ZONE", default="Asia/Shanghai")
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
MEDIA_URL = "/media/"
MEDIA_ROOT = env("MEDIA_ROOT", default=str(BASE_DIR / "media"))

# Proxies trusted to name the client (seckill_site.http.client_ip): networks, or a count.
SECKILL_TRUSTED_PROXIES = env.list("SECKILL_TRUSTED_PROXIES", default=[])
SECKILL_TRUSTED_PROXY_COUNT = env.int("SECKILL_TRUSTED_PROXY_COUNT", default=0)

# Bytes: a whole request (refused unread), form fields without files, an upload kept in memory.
SECKILL_MAX_REQUEST_BYTES = env.int("SECKILL_MAX_REQUEST_BYTES", default=3 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

# WSGI wrappers, outermost first, as dotted paths seckill_site/wsgi.py imports after Django's
# setup (seckill/tests/test_fastpath_wiring.py checks they name seckill.fastpath.FastPath);
# SECKILL_FASTPATH=0 turns the fast path off.
WSGI_MIDDLEWARE = ["seckill.fastpath.FastPath"] if env.bool("SECKILL_FASTPATH", default=True) else []
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

RATELIMIT_USE_CACHE = "default"
RATELIMIT_VIEW = "seckill_site.errors.ratelimited"
RATELIMIT_IP_META_KEY = "seckill_site.http.client_ip"
# Per-IP limits count an IPv6 client by its network of this prefix (seckill_site.http.ip_bucket).
RATELIMIT_IPV6_PREFIX = env.int("RATELIMIT_IPV6_PREFIX", default=64)
RATELIMIT_IPV6_MASK = RATELIMIT_IPV6_PREFIX

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "users.authentication.CachedTokenAuthentication",
        "users.authentication.SessionIdAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["users.permissions.IsShopper"],
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


def _next_redis_database(url: str) -> str:
    """The Redis database after the cache's: flushing the cache must never drop queued tasks."""
    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{database + 1}"))


if REDIS_IS_CLUSTER:
    # Celery's Redis transport cannot use a cluster, and a cluster has no second database.
    CELERY_BROKER_URL = env("CELERY_BROKER_URL")
else:
    CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=_next_redis_database(REDIS_URL))
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_TASK_DEFAULT_QUEUE", default="celery")
CELERY_TASK_QUEUES = task_queues(CELERY_TASK_DEFAULT_QUEUE, broker_url=CELERY_BROKER_URL)
if is_amqp(CELERY_BROKER_URL):
    # A task that fails for good is rejected, so RabbitMQ dead-letters it instead of dropping it.
    CELERY_TASK_ACKS_ON_FAILURE_OR_TIMEOUT = False
    # Each process walks the failover list in its own order: a lost node moves only its clients.
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
# Stops Celery's fixup closing the connection around every task (seckill_site/db.py).
CELERY_DB_REUSE_MAX = 1_000_000
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Redis broker: seconds before an unacknowledged message is redelivered.
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=300),
    # Look for those every 5 s and scan each time (kombu's default scans every 10th look).
    "unacked_restore_interval": 5,
    "unacked_restore_throttle": 1,
    # Seconds: a publish to a silent broker fails fast, so the gate can give the unit back.
    "socket_timeout": env.float("CELERY_BROKER_SOCKET_TIMEOUT", default=2.0),
    "socket_connect_timeout": 2.0,
    # AMQP broker: wait for the broker's confirm so a lost publish is seen and undone.
    "confirm_publish": True,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
# Seconds between beat's top-ups of the captcha pool (SECKILL_CAPTCHA_POOL, below).
SECKILL_CAPTCHA_POOL_SECONDS = env.float("SECKILL_CAPTCHA_POOL_SECONDS", default=10.0)
# Seconds between the sweeps that send messages to shoppers (users.notices).
NOTICE_SWEEP_SECONDS = env.float("NOTICE_SWEEP_SECONDS", default=30.0)
CELERY_BEAT_SCHEDULE = {
    "seckill-reconcile": {"task": "seckill.reconcile", "schedule": 60.0},
    # The order writer's backstop for a lost flush message (seckill.services.writer).
    "seckill-flush-sweep": {
        "task": "seckill.flush_sweep",
        "schedule": env.float("SECKILL_WRITER_SWEEP_SECONDS", default=5.0),
    },
    # A draw sale's draw, for one whose ETA task was lost (seckill.services.draw.draws_due).
    "seckill-draw-sweep": {
        "task": "seckill.draw_sweep",
        "schedule": env.float("SECKILL_DRAW_SWEEP_SECONDS", default=5.0),
    },
    # Expires with its period: after a worker outage a backlog would delay the order writer.
    "seckill-captcha-pool": {
        "task": "seckill.captcha_pool_fill",
        "schedule": SECKILL_CAPTCHA_POOL_SECONDS,
        "options": {"expires": SECKILL_CAPTCHA_POOL_SECONDS},
    },
    "orders-expire-unpaid": {
        "task": "orders.expire_unpaid",
        "schedule": env.int("SECKILL_EXPIRE_SWEEP_SECONDS", default=30),
    },
    # Attempts whose notification was lost, and refunds whose task was (orders.payments).
    "orders-payments-sync": {"task": "orders.payments_sync", "schedule": env.int("PAYMENT_SYNC_SECONDS", default=30)},
    "orders-refunds-resend": {"task": "orders.refunds_resend", "schedule": 60.0},
    "orders-payments-reconcile": {"task": "orders.payments_reconcile", "schedule": crontab(hour=3, minute=30)},
    # Shipped orders complete by themselves ORDER_AUTO_COMPLETE_DAYS after shipping; a day's
    # precision is plenty, so every ten minutes is ample.
    "orders-auto-complete": {
        "task": "orders.auto_complete",
        "schedule": env.float("ORDER_AUTO_COMPLETE_SWEEP_SECONDS", default=600.0),
        "options": {"expires": 600},
    },
    # Messages to shoppers (users.notices): each sweep sends what is due and finishes what a
    # dead sender left; a message is sent once however often they run. Expire with their
    # period: a backlog after an outage would only repeat the same sweep.
    "goods-sale-reminders": {
        "task": "goods.sale_reminders_send",
        "schedule": NOTICE_SWEEP_SECONDS,
        "options": {"expires": NOTICE_SWEEP_SECONDS},
    },
    "seckill-draw-winners": {
        "task": "seckill.draw_winners_sweep",
        "schedule": NOTICE_SWEEP_SECONDS,
        "options": {"expires": NOTICE_SWEEP_SECONDS},
    },
    "orders-pay-reminders": {
        "task": "orders.pay_reminders_send",
        "schedule": NOTICE_SWEEP_SECONDS,
        "options": {"expires": NOTICE_SWEEP_SECONDS},
    },
    "orders-order-news": {
        "task": "orders.order_news_send",
        "schedule": NOTICE_SWEEP_SECONDS,
        "options": {"expires": NOTICE_SWEEP_SECONDS},
    },
    "orders-merchant-replies": {
        "task": "orders.merchant_replies_send",
        "schedule": NOTICE_SWEEP_SECONDS,
        "options": {"expires": NOTICE_SWEEP_SECONDS},
    },
    # A notice that waited for the hour's budget past its time is skipped, with its reason.
    "users-notices-expire": {
        "task": "users.notices_expire",
        "schedule": NOTICE_SWEEP_SECONDS,
        "options": {"expires": NOTICE_SWEEP_SECONDS},
    },
}

# Orders the order writer writes per transaction (seckill/services/writer.py).
SECKILL_WRITER_BATCH_SIZE = env.int("SECKILL_WRITER_BATCH_SIZE", default=500)
# ms before a writer's claim on a batch lapses, so another flush may take over from a dead writer.
SECKILL_WRITER_CLAIM_MS = env.int("SECKILL_WRITER_CLAIM_MS", default=30_000)
# ms before a pending flush's mark lapses, so a lost flush message is replaced by the next buy.
SECKILL_WRITER_FLUSH_MARK_MS = env.int("SECKILL_WRITER_FLUSH_MARK_MS", default=5000)
# The result poll's ticket (seckill.tickets), the cookie a queued buy sets for /seckill/result
# alone. Seconds: the poll's fast first minute (static/js/poll.js) and the reconciler's two
# minutes for a stalled order, with room; later polls, every 10 s, are cheap through Django.
SECKILL_RESULT_TICKET_SECONDS = env.int("SECKILL_RESULT_TICKET_SECONDS", default=5 * 60)
SECKILL_RESULT_TICKET_COOKIE = "seckill_result"
SECKILL_RESULT_TICKET_PATH = "/seckill/result"
# Seconds before an unpaid seckill order is cancelled.
SECKILL_ORDER_TTL = env.int("SECKILL_ORDER_TTL", default=15 * 60)
# A draw's seed is derived from its stored nonce under this key, which the database never holds
# (sales.draw_seed); unset, it is derived from SECRET_KEY. Keep a rotated key among the fallbacks
# until every draw made under it is drawn.
DRAW_SEED_KEY = env("DRAW_SEED_KEY", default="")
DRAW_SEED_KEY_FALLBACKS = env.list("DRAW_SEED_KEY_FALLBACKS", default=[])
# Draw-sale entry shards, 1..64, one cluster slot each; fixed per sale when loaded (docs/draw.md).
SECKILL_DRAW_SHARDS = env.int("SECKILL_DRAW_SHARDS", default=1)
# Text messages (users.sms): the backend class, and the file FileSmsBackend appends to.
SMS_BACKEND = env("SMS_BACKEND", default="users.sms.ConsoleSmsBackend")
SMS_FILE_PATH = env("SMS_FILE_PATH", default=str(BASE_DIR / ".run" / "sms.log"))
# SMS limits (users.verification): per requester and hour, per number and day, shop-wide per hour.
SMS_SENDS_PER_IP_PER_HOUR = env.int("SMS_SENDS_PER_IP_PER_HOUR", default=20)
SMS_SENDS_PER_NUMBER_PER_DAY = env.int("SMS_SENDS_PER_NUMBER_PER_DAY", default=20)
SMS_SENDS_PER_HOUR = env.int("SMS_SENDS_PER_HOUR", default=1000)
# Of each hour's SMS_SENDS_PER_HOUR, the messages only sign-up and login codes may take: notices
# (a sale's reminders, up to thousands at once) wait for the next hour rather than use them.
SMS_CODE_RESERVE_PER_HOUR = env.int("SMS_CODE_RESERVE_PER_HOUR", default=200)
# Messages to shoppers (users.notices). Seconds a sender's claim on one lasts before another may
# take it over (well above a provider's timeout), and how often a provider's failure is retried.
NOTICE_CLAIM_SECONDS = env.int("NOTICE_CLAIM_SECONDS", default=120)
NOTICE_SEND_TRIES = env.int("NOTICE_SEND_TRIES", default=3)
# Seconds before a sale opens that its reminders go, and before an order's deadline to pay
# that its buyer is warned.
SALE_REMINDER_LEAD_SECONDS = env.int("SALE_REMINDER_LEAD_SECONDS", default=10 * 60)
PAY_REMINDER_LEAD_SECONDS = env.int("PAY_REMINDER_LEAD_SECONDS", default=5 * 60)
# After-sales (orders.fulfilment.returns): a shipped order completes by itself this many days
# after shipping unless a return is under way (Taobao's 10), and a delivered one may be sent
# back for a refund for this many days after delivery (China's seven days without a reason).
ORDER_AUTO_COMPLETE_DAYS = env.int("ORDER_AUTO_COMPLETE_DAYS", default=10)
RETURN_WINDOW_DAYS = env.int("RETURN_WINDOW_DAYS", default=7)
# Per shopper, sale and minute, across all web nodes: captchas drawn, answers tried.
SECKILL_CAPTCHAS_PER_MINUTE = env.int("SECKILL_CAPTCHAS_PER_MINUTE", default=20)
SECKILL_PATHS_PER_MINUTE = env.int("SECKILL_PATHS_PER_MINUTE", default=10)
# Captchas drawn ahead (seckill.services.paths), ~17 KiB each: an opening minute's worth; 0: off.
SECKILL_CAPTCHA_POOL = env.int("SECKILL_CAPTCHA_POOL", default=1000)
SECKILL_CAPTCHA_POOL_FILL_SECONDS = env.float("SECKILL_CAPTCHA_POOL_FILL_SECONDS", default=2.0)
GOODS_LIST_CACHE_SECONDS = env.int("GOODS_LIST_CACHE_SECONDS", default=60)
# The edge caches seckill_site.edge purges by surrogate key (deploy/edge.vcl); none: no edge.
EDGE_PURGE_URLS = env.list("EDGE_PURGE_URLS", default=[])

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    # The one-line-per-request log is for production's JSON logs (settings/production.py).
    "loggers": {"django.server": {"level": "WARNING"}, "seckill.request": {"level": "WARNING"}},
}
CSRF_FAILURE_VIEW = "seckill_site.errors.csrf_failure"
DEFAULT_EXCEPTION_REPORTER_FILTER = "seckill_site.errors.SensitiveDataFilter"
SERVE_MEDIA = env.bool("SERVE_MEDIA", default=False)

# Payments (orders/payments): Alipay's open platform and Stripe, each on when its keys are set.
# With none set, `make run` and the tests start local stand-ins that speak their protocols
# (tools/services.py: localstripe, and tools/alipay_gateway) and set these to match.
# The providers the shop may take money through: name -> its Provider subclass (the name is
# stored on every payment and names its notification address, /payments/<name>/...). Each is on
# when its own settings below are set; the order page offers them in this order
# (orders.payments.providers.registry, docs/payments.md).
PAYMENT_PROVIDERS = {
    "alipay": "orders.payments.providers.alipay.AlipayProvider",
    "stripe": "orders.payments.providers.stripe.StripeProvider",
}
PAYMENT_CURRENCY = env("PAYMENT_CURRENCY", default="CNY")
# The shop's address as the providers reach it (notify and return URLs); empty: the request's.
PAYMENT_PUBLIC_URL = env("PAYMENT_PUBLIC_URL", default="")
# The shop's address in the links text messages carry (users.notices): no request to take it from.
SHOP_PUBLIC_URL = env("SHOP_PUBLIC_URL", default=PAYMENT_PUBLIC_URL or "http://127.0.0.1:8000").rstrip("/")
# Put before every trade number this shop sends (letters, digits, _): shops or environments
# that share one provider account (a staging shop on the production app) never collide.
PAYMENT_TRADE_PREFIX = env("PAYMENT_TRADE_PREFIX", default="")
if not re.fullmatch(r"[A-Za-z0-9_]{0,24}", PAYMENT_TRADE_PREFIX):
    raise ImproperlyConfigured("PAYMENT_TRADE_PREFIX: at most 24 letters, digits or _ (what Alipay takes)")
# Seconds a call to a provider may take before it counts as unreachable.
PAYMENT_GATEWAY_TIMEOUT = env.float("PAYMENT_GATEWAY_TIMEOUT", default=5.0)
# An attempt still open this long is asked about (its notification may be lost).
PAYMENT_QUERY_AFTER_SECONDS = env.int("PAYMENT_QUERY_AFTER_SECONDS", default=60)
ALIPAY_APP_ID = env("ALIPAY_APP_ID", default="")
ALIPAY_SELLER_ID = env("ALIPAY_SELLER_ID", default="")
# PEM text, or the path of a PEM file.
ALIPAY_APP_PRIVATE_KEY = env("ALIPAY_APP_PRIVATE_KEY", default="")
ALIPAY_PUBLIC_KEY = env("ALIPAY_PUBLIC_KEY", default="")
ALIPAY_GATEWAY = env("ALIPAY_GATEWAY", default="https://openapi.alipay.com/gateway.do")
STRIPE_SECRET_KEY = env("STRIPE_SECRET_KEY", default="")
STRIPE_PUBLISHABLE_KEY = env("STRIPE_PUBLISHABLE_KEY", default="")
STRIPE_WEBHOOK_SECRET = env("STRIPE_WEBHOOK_SECRET", default="")
STRIPE_API_BASE = env("STRIPE_API_BASE", default="https://api.stripe.com")
STRIPE_JS_URL = env("STRIPE_JS_URL", default="https://js.stripe.com/v3/")
# The card form runs Stripe's script, which calls Stripe's API and may frame its 3-D Secure
# page; Alipay's cashier is reached by a form whose answer redirects there.
_STRIPE_ORIGINS = sorted({_origin(STRIPE_JS_URL), _origin(STRIPE_API_BASE)})
_CSP_DIRECTIVES["script-src"] += [_origin(STRIPE_JS_URL)]
_CSP_DIRECTIVES["connect-src"] += _STRIPE_ORIGINS
_CSP_DIRECTIVES["frame-src"] = [SELF, *_STRIPE_ORIGINS]
_CSP_DIRECTIVES["form-action"] += [_origin(ALIPAY_GATEWAY)]

# /readyz: every dependency must answer within this many seconds (seckill_site/health.py).
READINESS_TIMEOUT = env.float("READINESS_TIMEOUT", default=2.0)
# Who may read /metrics and /readyz's details (seckill_site.metrics.metrics_allowed); none by default.
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=[])
METRICS_TOKEN = env("METRICS_TOKEN", default="")
