"""The Redis client for the seckill counters and the Lua scripts, loaded once per process.

redis-py's Script runs EVALSHA and reloads the source by itself if Redis lost it
(for example after a restart), so each call is one round trip.
"""

from functools import cache
from pathlib import Path

from django_redis import get_redis_connection
from redis import Redis
from redis.commands.core import Script

LUA_DIR = Path(__file__).parent / "lua"


@cache
def client() -> Redis:
    return get_redis_connection("default")


@cache
def script(name: str) -> Script:
    return client().register_script((LUA_DIR / f"{name}.lua").read_text())
