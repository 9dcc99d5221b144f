"""A per-process circuit breaker in front of every Redis connection, single server or cluster.

Without it, a web node cut off from Redis (but not from its balancer) held each request for
64-98 s (`make partition-test`, fault 2): every command waited out its socket timeout, and
redis-py's cluster client then re-read the slot map from every seed, on each of its retries,
each unreachable seed costing another timeout. The balancer answered 504 and took the node out
only after ~90 s, its health checks queued behind the held requests.

With it, the first connection or timeout error on a node (at most the 2 s socket timeout)
starts one probe: a PING of every node this process knows, in parallel, under one deadline
(REDIS_PROBE_TIMEOUT). A node that does not answer is *open* for REDIS_BREAKER_SECONDS: every
command and connection to it fails at once with RedisUnavailable, without touching the
network. When no node answered, the whole process is open: every Redis access fails at once,
whatever the address (the seeds and replicas it has not talked to yet included). After the
period, the first caller probes again (the others keep failing fast meanwhile): the nodes that
answer are closed again.

Per node rather than one switch for the process: a single primary killed or behind a lossy
link (faults 4 and 5) must not fail the requests of the other shards, and a probe that finds
a node slow but answering opens nothing (a socket timeout on a lossy link is not an outage).

RedisUnavailable is a redis ConnectionError, so everything that handles an outage handles it
(seckill_site.errors answers 503 "busy, retry" with Retry-After, Celery tasks retry, the cluster
client re-reads its slot map from the nodes still in reach after a failover), but retry loops
never retry it: BreakerRetry gives up on it at once.

A TLS node (a `rediss://` URL) is probed through a TLS handshake made exactly as its own
connections make it (same CA, client certificate, hostname check): a bare PING on a TLS port
gets no answer, and an answering node would be refused as out of reach.

The closed state, the hot path, costs one attribute test per command; locks are taken only by
the one thread that probes.
"""

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

# PINGs sent to each node at once by one probe (see _ping_all).
PROBE_ATTEMPTS = 2
# Errors that say nothing about the network: they never start a probe.
NOT_AN_OUTAGE = (AuthenticationError, MaxConnectionsError)


class RedisUnavailable(RedisConnectionError):
    """Redis (this node, or every node) is out of this process's reach: raised without touching
    the network while the breaker is open. Answered 503 "busy, retry"."""


# A TLS handshake on a node's freshly connected socket: the socket to send commands on.
Handshake = Callable[[socket.socket], socket.socket]


class Node(NamedTuple):
    """How the probe reaches one node: its address, and the TLS handshake its connections make
    (None: plain TCP)."""

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
        """Probe `host:port` from now on, through `tls` when its connections speak TLS."""
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
        """A connection or timeout error on `address` (reached through `tls`, if given): probe,
        unless a probe runs already."""
        if isinstance(error, (RedisUnavailable, *NOT_AN_OUTAGE)) or getattr(error, "_breaker_seen", False):
            return
        error._breaker_seen = True  # type: ignore[attr-defined]  # a handshake error also fails its connect
        # A breaker made afresh (after a fork) has not met the connections made before it.
        self._nodes.setdefault(address, Node(*_host_port(address), tls))
        self.probe()

    def probe(self) -> bool:
        """PING every known node in parallel under one deadline and open those that did not
        answer (all of them: the whole process); False if another thread probes already."""
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
    """The addresses that answered PING within `timeout`, asked in parallel on sockets of their
    own (never stopped by the breaker they decide). A bare inline PING, two round trips with
    the connect: redis-py's handshake (HELLO, CLIENT SETINFO) would take four, and a node behind
    a 200 ms link must still count as answering. Any reply counts, an error too (-NOAUTH,
    -LOADING): the node is in reach, and the shop's own commands meet whatever it refuses.
    Each node is asked twice at once, and either answer counts: over fault 4's link (5 % loss
    each way) one lost packet of four failed a single PING's second, and the node, answering,
    was refused for a whole period (82 of that row's 95 answers of 503). A TLS node's PING goes
    through its handshake first (one more round trip with TLS 1.3), under the same deadline."""
    answered: set[str] = set()

    def ping(address: str, node: Node) -> None:
        try:
            with _probe_socket(node, timeout) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(64)[:1] in (b"+", b"-"):
                    answered.add(address)
        except (OSError, RedisError):  # refused, reset, timed out, or a failed handshake: did not answer
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
    """A socket to `node` that a command can be written to: connected and, for a TLS node,
    through its handshake. Each blocking step is bounded by `timeout`; on an error nothing is
    left open (a failed handshake closes the socket it took over)."""
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
    """The breaker in front of a redis-py TCP connection, plain or TLS: refused at once while
    its node is open; a connection or timeout error starts a probe. It goes first in the bases
    (`BreakerSSLConnection(BreakerMixin, SSLConnection)`), so every transport shares one breaker
    behaviour; deriving from Connection only gives it Connection's attributes and types."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._address = f"{self.host}:{self.port}"
        self._tls = self._probe_handshake()
        breaker().known(self.host, self.port, self._tls)

    def _probe_handshake(self) -> Handshake | None:
        """What the probe must do on a fresh socket to this node before its PING: nothing for
        plain TCP."""
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
    """redis-py's TLS connection (`rediss://`, with its `ssl_*` options), through the breaker,
    whose probe makes this connection's own handshake before its PING."""

    def _probe_handshake(self) -> Handshake | None:
        # redis-py's own wrapping (its context from ssl_cert_reqs, ssl_ca_certs, ssl_certfile,
        # ssl_keyfile, ssl_check_hostname, ...; the server name from the host): a probe that
        # built its own context could pass where the shop's connections fail, or the reverse.
        # It reads only this connection's settings, never its socket.
        return self._wrap_socket_with_ssl


class BreakerRetry(Retry):
    """redis-py's retry loop, which gives up at once on RedisUnavailable: retrying an open
    circuit would only sleep its backoff before failing the same way."""

    def call_with_retry(self, do, fail, is_retryable=None, with_failure_count=False):  # redis-py's signature
        def retryable(error: Exception) -> bool:
            return not isinstance(error, RedisUnavailable) and (is_retryable is None or is_retryable(error))

        return super().call_with_retry(do, fail, retryable, with_failure_count)
