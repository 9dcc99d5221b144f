"""Readiness checks for the load balancer: can this web node serve a purchase right now?

Every check runs in its own daemon thread under one deadline (READINESS_TIMEOUT), so a frozen
dependency fails as "timed out" instead of hanging the probe; a stuck check is abandoned."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import connections
from redis.cluster import RedisCluster

from celery_app import app
from seckill_site.redis import client, script, script_names, scripts_load
from seckill_site.redis.breaker import breaker


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    milliseconds: float
    error: str = ""


def check_draining() -> None:
    """Fails while seckill_site.serve drains the node (WEB_DRAIN_FILE exists), so the balancer
    takes it out before it stops."""
    path = os.environ.get("WEB_DRAIN_FILE")
    if path and os.path.exists(path):
        raise RuntimeError("stopping: draining before shutdown")


def check_postgres() -> None:
    # A thread has its own database connection: open, ask, close (nothing lingers per probe).
    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connection.close()


def check_redis() -> None:
    if breaker().is_open():
        raise RuntimeError(f"no Redis node in reach (circuit open for {breaker().seconds:g} s)")
    if not client().ping():
        raise RuntimeError("PING was not answered")
    evicting = eviction_policies() - {"noeviction"}
    if evicting:
        # An evicted auth epoch, reservation or result would be a revocation or a sale forgotten.
        raise RuntimeError(f"Redis may evict keys (maxmemory-policy {', '.join(sorted(evicting))}): set noeviction")


def eviction_policies() -> set[str]:
    """The maxmemory-policy of the Redis server, or of every primary of a cluster."""
    redis = client()
    if isinstance(redis, RedisCluster):
        replies = redis.info("memory", target_nodes=RedisCluster.PRIMARIES)
        return {reply["maxmemory_policy"] for reply in replies.values()}
    return {redis.info("memory")["maxmemory_policy"]}


def check_lua_scripts() -> None:
    """Loads the Lua scripts if Redis lost them (a restart), so the first buyer does not pay."""
    names = script_names()
    loaded = client().script_exists(*[script(name).sha for name in names])
    if not all(loaded):
        scripts_load()


def check_broker() -> None:
    """A connection to the broker (Redis or RabbitMQ) within the broker's connect timeout: to
    any one of its nodes, as the node's own publishes fail over (a `;`-separated broker URL)."""
    with app.connection_for_write() as connection:
        # One attempt per node, none waited for: the probe is repeated by the balancer, and a
        # retry of the same node only hides its outage. Only the first would mark every web node
        # unready when that one RabbitMQ node is down, though the others take the publishes.
        connection.ensure_connection(
            max_retries=max(0, len(connection.alt) - 1), interval_start=0, timeout=settings.READINESS_TIMEOUT
        )


CHECKS: dict[str, Callable[[], None]] = {
    "draining": check_draining,
    "postgres": check_postgres,
    "redis": check_redis,
    "lua": check_lua_scripts,
    "broker": check_broker,
}

# Reported, but no reason to take the node out of the balancer. Every node reaches the same
# PostgreSQL leader through the same pooler, so no other node would do better during its
# failover, while the gate, which needs only Redis, goes on queueing buys for the writer.
ADVISORY = frozenset({"postgres"})


def unready(results: list[CheckResult]) -> list[str]:
    """The names of the failed checks that make this node unready (not ADVISORY ones)."""
    return [result.name for result in results if not result.ok and result.name not in ADVISORY]


def readiness(*, timeout: float | None = None) -> list[CheckResult]:
    """Run every check in parallel; each one that raised or missed the deadline failed."""
    timeout = settings.READINESS_TIMEOUT if timeout is None else timeout
    results: dict[str, CheckResult] = {}
    started = time.monotonic()

    def run(name: str, check: Callable[[], None]) -> None:
        begun = time.monotonic()
        try:
            check()
            results[name] = CheckResult(name, True, (time.monotonic() - begun) * 1000)
        except Exception as error:  # any failure is a "not ready", with its reason
            results[name] = CheckResult(
                name, False, (time.monotonic() - begun) * 1000, f"{type(error).__name__}: {error}"
            )

    threads = [
        threading.Thread(target=run, args=item, daemon=True, name=f"readyz-{item[0]}") for item in CHECKS.items()
    ]
    for thread in threads:
        thread.start()
    deadline = started + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [
        results.get(name) or CheckResult(name, False, timeout * 1000, f"timed out after {timeout:g} s")
        for name in CHECKS
    ]
