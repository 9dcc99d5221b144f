"""Developer machine: `make run`."""

from .base import *  # noqa: F403
from .base import DEV_SECRET_KEY, env

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env("SECRET_KEY", default=DEV_SECRET_KEY)
