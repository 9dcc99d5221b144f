"""The project's Redis layer: one client, what every key shares (`keys`: PREFIX) and the Lua
scripts, found in every installed app's `lua/` folders and run by SHA. Apps use Redis only
through here, single server or cluster alike; each app names its own keys and scripts, a sale's
are sales.sale_state's."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django_redis import get_redis_connection
from redis import Redis
from redis._parsers.base import BaseParser
from redis.cluster import RedisCluster
from redis.commands.core import Script
from redis.exceptions import MovedError, ReadOnlyError, RedisClusterException, RedisError, ResponseError

from seckill_site.redis import keys

__all__ = [
    "REDIS_FAILURES",
    "LockNotAcquired",
    "NotDurable",
    "client",
    "durable_set",
    "is_cluster",
    "keys",
    "lock",
    "lock_try",
    "now",
    "script",
    "script_durable",
    "script_names",
    "scripts_load",
    "server_time",
]


# What a failing Redis call may raise: a RedisError, or RedisClusterException (not one) from a
# cluster client that reaches no node to re-read its slot map.
REDIS_FAILURES = (RedisError, RedisClusterException)


class NotDurable(ReadOnlyError):
    """A write no replica confirmed in time, or refused for want of replicas (NOREPLICAS). A
    ReadOnlyError, like a demoted primary's refusal: answered 503, retried by Celery tasks."""


# Every NOREPLICAS reply parses as NotDurable rather than a bare ResponseError (a 500).
BaseParser.EXCEPTION_CLASSES["NOREPLICAS"] = NotDurable


@cache
def client() -> Redis | RedisCluster:
    return get_redis_connection("default")


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def is_cluster() -> bool:
    return isinstance(client(), RedisCluster)


@cache
def _script_paths() -> dict[str, Path]:
    """Every Lua script of the installed apps by name, its file's stem, which must be unique."""
    paths: dict[str, Path] = {}
    for app in apps.get_app_configs():
        for path in sorted(Path(app.path).glob("**/lua/*.lua")):
            if paths.setdefault(path.stem, path) != path:
                raise ImproperlyConfigured(f"two Lua scripts are named {path.stem}: {paths[path.stem]} and {path}")
    return paths


def script_names() -> list[str]:
    return sorted(_script_paths())


class _Script(Script):
    """redis-py's Script, raising NotDurable for a NOREPLICAS met inside the script too."""

    def __call__(self, keys=None, args=None, client=None):
        try:
            return super().__call__(keys=keys, args=args, client=client)
        except ResponseError as error:
            if "NOREPLICAS" in str(error):
                raise NotDurable(str(error)) from error
            raise


@cache
def script(name: str) -> Script:
    return _Script(client(), _script_paths()[name].read_text())


def scripts_load() -> list[str]:
    """Load every script now (on every primary of a cluster); returns their names."""
    names = script_names()
    for name in names:
        loaded = script(name)
        loaded.sha = client().script_load(loaded.script)
    return names


def _primary_of(key: str) -> Redis:
    """The client of `key`'s server: WAIT counts only its own connection's writes."""
    redis = client()
    if isinstance(redis, RedisCluster):
        return redis.get_redis_connection(redis.get_node_from_key(key))
    return redis


def _durably(key: str, queue) -> tuple[object, bool]:
    """Run `queue(pipeline)`'s command and WAIT on `key`'s server; (answer, confirmed)."""
    replicas = settings.REDIS_WAIT_REPLICAS
    for attempt in (1, 2):
        pipeline = _primary_of(key).pipeline(transaction=False)
        queue(pipeline)
        pipeline.execute_command("WAIT", replicas, settings.REDIS_WAIT_TIMEOUT_MS)
        try:
            answer, confirmed = pipeline.execute()
        except MovedError:
            redis = client()
            if attempt == 2 or not isinstance(redis, RedisCluster):
                raise
            redis.nodes_manager.initialize()
            continue
        except ResponseError as error:
            if "NOREPLICAS" in str(error):  # raised inside a script: the script's error wraps it
                raise NotDurable(str(error)) from error
            raise
        return answer, int(confirmed) >= replicas
    raise AssertionError("unreachable")


def script_durable(name: str, *, keys: list[str], args: list) -> tuple[Any, bool]:
    """Run a script whose answer the caller will promise; (answer, confirmed by
    REDIS_WAIT_REPLICAS replicas, always with 0). Unconfirmed, the caller must undo or refuse.
    Raises NotDurable when the primary refused the write (nothing was written)."""
    if settings.REDIS_WAIT_REPLICAS <= 0:
        return script(name)(keys=keys, args=args), True
    return _durably(keys[0], lambda pipeline: script(name)(keys=keys, args=args, client=pipeline))


def durable_set(key: str, value: str | bytes, *, attempts: int = 3) -> None:
    """SET that a replica has confirmed when it returns (a revocation); raises NotDurable when
    none confirmed after `attempts` writes: the caller fails closed, it never reports done."""
    if settings.REDIS_WAIT_REPLICAS <= 0:
        client().set(key, value)
        return
    for _ in range(attempts):
        _, confirmed = _durably(key, lambda pipeline: pipeline.set(key, value))
        if confirmed:
            return
    raise NotDurable(f"no replica confirmed the write of {key} in {attempts} tries")


def server_time() -> float:
    """Redis's clock in epoch seconds (one round trip): what decides a sale window."""
    seconds, microseconds = client().time()
    return seconds + microseconds / 1_000_000


# How far Redis's clock is from this process's, re-measured every CLOCK_REFRESH_SECONDS.
CLOCK_REFRESH_SECONDS = 10.0
_clock_offset: tuple[float, float] = (0.0, float("-inf"))  # (offset, measured at monotonic)


def now() -> float:
    """Epoch seconds by Redis's clock without a round trip per call: this process's clock plus
    its measured offset, so every node counts down by the shop's time. While Redis cannot be
    asked, the last offset (at first none) stands."""
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
    """Hold `key` for at most `ttl` seconds if nobody else does; yields the owner token, or None
    (and releases nothing). The release (compare-and-delete) never deletes another's lock."""
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
