"""What every app's Redis keys share: PREFIX, which each key starts with before any hash tag
(settings.REDIS_KEY_PREFIX, "" in production), so a test run deletes only its own keys and
never needs FLUSHDB; and `jittered`, for lifetimes. Each app names its own keys in its own
module (docs/architecture.md, "Redis keys")."""

import random

from django.conf import settings

PREFIX: str = settings.REDIS_KEY_PREFIX


def jittered(seconds: float) -> int:
    """`seconds` plus up to a fifth more at random, so entries written together expire apart."""
    return int(seconds + random.uniform(0, seconds / 5))
