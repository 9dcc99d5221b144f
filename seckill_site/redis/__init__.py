"""The project's Redis layer: one client, the key registry (`keys`) and the Lua scripts.

Every app uses Redis through here, single server or Redis Cluster alike (connection.py says
how the URL chooses); a sale's keys and scripts through seckill_site.sale_state, which owns
them. Scripts live in `lua/` (and the sale's in `../sale_state/lua/`) and run by SHA: redis-py's Script sends
EVALSHA and, on NOSCRIPT (a restarted server, or a replica promoted after a failover that
never saw SCRIPT LOAD), loads the source — on every primary of a cluster — and retries, so
each call is one round trip in the common case.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from django_redis import get_redis_connection
from redis import Redis
from redis.cluster import RedisCluster
from redis.commands.core import Script
from redis.exceptions import RedisError

from seckill_site.redis import keys

__all__ = [
    "LockNotAcquired",
    "client",
    "is_cluster",
    "keys",
    "lock",
    "lock_try",
    "now",
    "script",
    "script_names",
    "scripts_load",
    "server_time",
]

LUA_DIR = Path(__file__).parent / "lua"
# Every directory of Lua scripts; a script's name is its file's stem, unique across them.
SCRIPT_DIRECTORIES = (LUA_DIR, Path(__file__).parent.parent / "sale_state" / "lua")


@cache
def client() -> Redis | RedisCluster:
    return get_redis_connection("default")


def text(value: bytes | str) -> str:
    """A reply as text: the client answers bytes (decode_responses is off, for the binary values)."""
    return value.decode() if isinstance(value, bytes) else value


def is_cluster() -> bool:
    return isinstance(client(), RedisCluster)


def _script_paths() -> dict[str, Path]:
    return {path.stem: path for directory in SCRIPT_DIRECTORIES for path in directory.glob("*.lua")}


def script_names() -> list[str]:
    return sorted(_script_paths())


@cache
def script(name: str) -> Script:
    return client().register_script(_script_paths()[name].read_text())


def scripts_load() -> list[str]:
    """Load every script now (on every primary of a cluster); their names. Start-up and
    readiness checks call it so the first buyer does not pay for the load."""
    names = script_names()
    for name in names:
        loaded = script(name)
        loaded.sha = client().script_load(loaded.script)
    return names


def server_time() -> float:
    """Redis's clock in epoch seconds (one round trip): what decides a sale window."""
    seconds, microseconds = client().time()
    return seconds + microseconds / 1_000_000


# How far Redis's clock is from this process's, re-measured every CLOCK_REFRESH_SECONDS.
CLOCK_REFRESH_SECONDS = 10.0
_clock_offset: tuple[float, float] = (0.0, float("-inf"))  # (offset, measured at monotonic)


def now() -> float:
    """Epoch seconds by Redis's clock without a round trip per call: this process's clock plus
    its measured offset from Redis. A web node whose clock is 30 s off still shows countdowns
    and answers "not started" by the shop's time; reserve.lua reads TIME itself for the last
    word. While Redis cannot be asked, the last offset (at first none) stands."""
    global _clock_offset
    offset, measured = _clock_offset
    if time.monotonic() - measured >= CLOCK_REFRESH_SECONDS:
        try:
            before = time.time()
            server = server_time()
            offset = server - (before + time.time()) / 2
        except RedisError:
            pass
        _clock_offset = (offset, time.monotonic())
    return time.time() + offset


class LockNotAcquired(Exception):
    pass


@contextmanager
def lock_try(key: str, *, ttl: float) -> Iterator[str | None]:
    """Hold `key` for at most `ttl` seconds if nobody else does: yields the owner token, or
    None when someone else holds it (then nothing is released on exit either).

    The owner token and a compare-and-delete release (unlock.lua) mean that neither a caller
    that did not get the lock nor a holder that outlived its ttl ever deletes the lock of the
    one holding it now.
    """
    token = secrets.token_hex(8)
    if not client().set(key, token, nx=True, px=int(ttl * 1000)):
        yield None
        return
    started = time.monotonic()
    try:
        yield token
    finally:
        if time.monotonic() - started < ttl:  # past it the key is gone or another's: no round trip
            script("unlock")(keys=[key], args=[token])


@contextmanager
def lock(key: str, *, ttl: float) -> Iterator[str]:
    """Hold `key` for at most `ttl` seconds; raises LockNotAcquired if someone else holds it."""
    with lock_try(key, ttl=ttl) as token:
        if token is None:
            raise LockNotAcquired(key)
        yield token
