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
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 30)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
