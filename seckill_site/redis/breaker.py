"""A per-process circuit breaker in front of every Redis connection, single server or cluster,
so a node cut off from Redis answers 503 at once instead of waiting out a timeout per retry.

The first connection or timeout error starts one probe: a PING of every known node in parallel
within REDIS_PROBE_TIMEOUT. A node that does not answer is refused (RedisUnavailable, a redis
ConnectionError) for REDIS_BREAKER_SECONDS, then probed again; with none answering, so is every
address. Per node, so one lost primary does not fail the other shards (docs/deploy.md)."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

from django.conf import settings
from redis.connection import Connection, SSLConnection
from redis.exceptions import AuthenticationError, MaxConnectionsError, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

logger = logging.getLogger(__name__)

PROBE_ATTEMPTS = 2
# Errors that say nothing about the network: they never start a probe.
NOT_AN_OUTAGE = (AuthenticationError, MaxConnectionsError)


class RedisUnavailable(RedisConnectionError):
    """Redis (this node, or every node) is out of reach: raised off the network while open."""


Handshake = Callable[[socket.socket], socket.socket]


class Node(NamedTuple):
    """How the probe reaches one node: its address and TLS handshake (None: plain TCP)."""

    host: str
    port: int
    tls: Handshake | None = None


class Breaker:
    def __init__(self, *, seconds: float, probe_timeout: float) -> None:
        self.seconds, self.probe_timeout = seconds, probe_timeout
        self._open: dict[str, float] = {}  # address -> when its period ends (monotonic)
        self._everything_until = 0.0  # no node answered: every address is open until then
        self._nodes: dict[str, Node] = {}  # address -> how to PING it
        self._probing = threading.Lock()

    def known(self, host: str, port: int, tls: Handshake | None = None) -> None:
        self._nodes[f"{host}:{port}"] = Node(host, port, tls)

    def is_open(self) -> bool:
        """Is the whole process cut off (no node answered the last probe, within its period)?"""
        return time.monotonic() < self._everything_until

    def open_nodes(self) -> list[str]:
        now = time.monotonic()
        return sorted(address for address, until in self._open.items() if until > now)

    def check(self, address: str) -> None:
        """Raise RedisUnavailable if `address` is open; past its period, probe first."""
        if not self._open and not self._everything_until:
            return  # closed: the hot path
        until = max(self._everything_until, self._open.get(address, 0.0))
        if not until:
            return
        if time.monotonic() < until:
            raise RedisUnavailable(f"Redis {address} out of reach (circuit open)")
        if not self.probe():  # another thread probes: keep failing fast meanwhile
            raise RedisUnavailable(f"Redis {address} out of reach (circuit open, probing)")
        now = time.monotonic()
        if self._everything_until > now or self._open.get(address, 0.0) > now:
            raise RedisUnavailable(f"Redis {address} out of reach (circuit open)")

    def failed(self, address: str, error: Exception, tls: Handshake | None = None) -> None:
        """A connection or timeout error on `address`: probe, unless a probe runs already."""
        if isinstance(error, (RedisUnavailable, *NOT_AN_OUTAGE)) or getattr(error, "_breaker_seen", False):
            return
        error._breaker_seen = True  # type: ignore[attr-defined]  # a handshake error also fails its connect
        # A breaker made afresh (after a fork) has not met the connections made before it.
        self._nodes.setdefault(address, Node(*_host_port(address), tls))
        self.probe()

    def probe(self) -> bool:
        """PING every node, opening those that did not answer; False if another thread probes."""
        if not self._probing.acquire(blocking=False):
            return False
        try:
            nodes = dict(self._nodes)
            answered = _ping_all(nodes, self.probe_timeout)
            until = time.monotonic() + self.seconds
            was_open = set(self.open_nodes())
            self._open = {address: until for address in nodes if address not in answered}
            self._everything_until = 0.0 if answered or not nodes else until
            if set(self._open) != was_open:
                logger.warning(
                    "Redis circuit: open %s, closed %s%s",
                    sorted(self._open) or "none",
                    sorted(answered) or "none",
                    " (no node in reach: every Redis access fails at once)" if self._everything_until else "",
                )
            return True
        finally:
            self._probing.release()

    def reset(self) -> None:
        self._open, self._everything_until = {}, 0.0


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def _ping_all(nodes: dict[str, Node], timeout: float) -> set[str]:
    """The addresses that answered a bare inline PING within `timeout`, each asked PROBE_ATTEMPTS
    times at once so one lost packet does not open a node; any reply counts, an error too."""
    answered: set[str] = set()

    def ping(address: str, node: Node) -> None:
        try:
            with _probe_socket(node, timeout) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(64)[:1] in (b"+", b"-"):
                    answered.add(address)
        except (OSError, RedisError):
            pass

    threads = [
        threading.Thread(target=ping, args=(address, node), daemon=True, name=f"redis-probe-{address}")
        for address, node in nodes.items()
        for _ in range(PROBE_ATTEMPTS)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return set(answered)


def _probe_socket(node: Node, timeout: float) -> socket.socket:
    """A socket to `node`, connected and through its TLS handshake if any; closed on an error."""
    sock = socket.create_connection((node.host, node.port), timeout=timeout)
    if node.tls is None:
        return sock
    try:
        return node.tls(sock)
    except BaseException:
        sock.close()
        raise


@cache
def breaker() -> Breaker:
    return Breaker(seconds=settings.REDIS_BREAKER_SECONDS, probe_timeout=settings.REDIS_PROBE_TIMEOUT)


# A process forked while a probe held the lock would keep it held forever: start afresh.
os.register_at_fork(after_in_child=breaker.cache_clear)


class BreakerMixin(Connection):
    """The breaker in front of a redis-py connection, plain or TLS: refused at once while its
    node is open; a connection or timeout error starts a probe. Goes first in the bases."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._address = f"{self.host}:{self.port}"
        self._tls = self._probe_handshake()
        breaker().known(self.host, self.port, self._tls)

    def _probe_handshake(self) -> Handshake | None:
        return None

    def _watched(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError) as error:
            breaker().failed(self._address, error, self._tls)
            raise

    def connect(self) -> None:
        breaker().check(self._address)
        self._watched(super().connect)

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        breaker().check(self._address)
        self._watched(super().send_packed_command, command, check_health)

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        return self._watched(super().read_response, *args, **kwargs)


class BreakerConnection(BreakerMixin, Connection):
    """redis-py's plain TCP connection (`redis://`), through the breaker."""


class BreakerSSLConnection(BreakerMixin, SSLConnection):
    """redis-py's TLS connection (`rediss://`) through the breaker; a bare PING on a TLS port
    gets no answer, so the probe makes this connection's own handshake first."""

    def _probe_handshake(self) -> Handshake | None:
        # redis-py's own wrapping: a context of the probe's own could pass where the shop's fail.
        return self._wrap_socket_with_ssl


class BreakerRetry(Retry):
    """redis-py's retry loop, giving up at once on RedisUnavailable (an open circuit)."""

    def call_with_retry(self, do, fail, is_retryable=None, with_failure_count=False):
        def retryable(error: Exception) -> bool:
            return not isinstance(error, RedisUnavailable) and (is_retryable is None or is_retryable(error))

        return super().call_with_retry(do, fail, retryable, with_failure_count)
