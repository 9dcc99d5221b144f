"""Developer machine: `make run` (DEBUG off: the shop's own error pages) and `make dev` (DEBUG=1)."""

from .base import *  # noqa: F403
from .base import DEV_SECRET_KEY, env

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default=DEV_SECRET_KEY)
# Product images from the web process, DEBUG or not.
SERVE_MEDIA = env.bool("SERVE_MEDIA", default=True)
