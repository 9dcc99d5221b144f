"""Developer machine: `make run` (DEBUG off, so the shop's own 404 and 500 pages show, as
shoppers would see them) and `make dev` (tools/run.py sets DEBUG=1: Django's debug pages)."""

from .base import *  # noqa: F403
from .base import DEV_SECRET_KEY, env

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default=DEV_SECRET_KEY)
# Product images from the web process in the demo, DEBUG or not (production: the proxy).
SERVE_MEDIA = env.bool("SERVE_MEDIA", default=True)
