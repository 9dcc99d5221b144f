"""Production: every secret from the environment; passes `manage.py check --deploy`."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import DEV_SECRET_KEY, env

DEBUG = False  # whatever the environment says: DEBUG pages show settings and tracebacks
SECRET_KEY = env("SECRET_KEY")  # no default: unset is an error, never a fallback key
if SECRET_KEY == DEV_SECRET_KEY or SECRET_KEY.startswith("dev-only"):
    raise ImproperlyConfigured("SECRET_KEY is the development key; production needs its own secret.")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
# Every cookie: https only and out of scripts' reach (pages take the CSRF token from their forms).
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
CSRF_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SECURE = env.bool("LANGUAGE_COOKIE_SECURE", default=True)
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
# HSTS as the preload list requires (a year, subdomains included); an operator who cannot
# promise https for every subdomain sets SECURE_HSTS_PRELOAD=false.
HSTS_PRELOAD_MIN_SECONDS = 365 * 24 * 60 * 60
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=HSTS_PRELOAD_MIN_SECONDS)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
if SECURE_HSTS_PRELOAD and SECURE_HSTS_SECONDS < HSTS_PRELOAD_MIN_SECONDS:
    raise ImproperlyConfigured(
        f"SECURE_HSTS_PRELOAD needs SECURE_HSTS_SECONDS >= {HSTS_PRELOAD_MIN_SECONDS} (a year); "
        "set SECURE_HSTS_PRELOAD=false for a shorter max-age."
    )
SECURE_CONTENT_TYPE_NOSNIFF = True

# Probes and scrapes come over plain HTTP inside the network: a redirect would fail them.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]

# One JSON object per line with the request's fields (seckill_site.logs); Celery workers too.
LOG_JSON = True
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_context": {"()": "seckill_site.logs.RequestContextFilter"}},
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
            "timestamp": False,
        }
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "json", "filters": ["request_context"]},
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.server": {"level": "WARNING"},
        "seckill.request": {"level": env("REQUEST_LOG_LEVEL", default="INFO")},
    },
}
