"""Redis as the tests see it: this run's keys deleted, and a cache with no server behind it."""

from seckill_site.redis import client

DEAD_REDIS = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1: a real refused connection
        "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.2, "SOCKET_TIMEOUT": 0.2},
    }
}


def redis_keys_delete(prefix: str) -> None:
    assert prefix, "tests run under a REDIS_KEY_PREFIX of their own"
    redis = client()
    found = list(redis.scan_iter(match=f"{prefix}*", count=1000))
    for start in range(0, len(found), 500):
        redis.delete(*found[start : start + 500])  # a cluster client splits these by slot
