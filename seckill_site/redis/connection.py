"""One Redis connection for the whole project, single server or Redis Cluster, chosen by URL.

    REDIS_URL=redis://host:6379/0                        one server (the embedded mode)
    REDIS_URL=redis+cluster://host:7000,host:7001,...    Redis Cluster: any seed nodes; the
                                                         client discovers the rest itself
    REDIS_URL=rediss://host:6380/0?ssl_ca_certs=/ca.pem  either over TLS: `rediss`, with
    REDIS_URL=rediss+cluster://host:7000,...?ssl_...     redis-py's `ssl_*` query options

The django-redis cache (and with it sessions and rate limits) and the shop's own calls share
it: django-redis builds its client through `ClusterAwareConnectionFactory` (its
CONNECTION_FACTORY hook), and `ClusterAwareClient` replaces the one cache method whose
command crosses hash slots (`get_many`'s MGET). Everything else django-redis sends is a
single-key command, a pipeline (which redis-py's cluster client splits by node), or a
DEL/EXISTS that redis-py's cluster client splits by slot itself.

Every connection, of any kind, goes through the circuit breaker (breaker.py): a node out of
reach answers RedisUnavailable at once instead of holding requests for its timeouts. The
breaker's connection class follows the URL's scheme (`breaker_class`): the TLS one for
`rediss`, whose probe makes the same TLS handshake. A `unix://` socket is refused: the breaker
probes TCP addresses.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from django.conf import settings
from django_redis.client import DefaultClient
from django_redis.pool import ConnectionFactory
from redis import Redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.connection import URL_QUERY_ARGUMENT_PARSERS

from seckill_site.redis.breaker import BreakerConnection, BreakerMixin, BreakerRetry, BreakerSSLConnection

CLUSTER_SCHEME = "redis+cluster"
TLS_CLUSTER_SCHEME = "rediss+cluster"
# The breaker's connection class for each transport a URL may name, TLS or plain TCP.
BREAKER_CLASSES: dict[str, type[BreakerMixin]] = {
    "redis": BreakerConnection,
    "rediss": BreakerSSLConnection,
    CLUSTER_SCHEME: BreakerConnection,
    TLS_CLUSTER_SCHEME: BreakerSSLConnection,
}


def is_cluster_url(url: str) -> bool:
    return url.startswith((f"{CLUSTER_SCHEME}://", f"{TLS_CLUSTER_SCHEME}://"))


def breaker_class(url: str) -> type[BreakerMixin]:
    """The connection class for `url`: the breaker's TLS one for `rediss://` and
    `rediss+cluster://`, its plain TCP one for `redis://` and `redis+cluster://`. Any other
    scheme (`unix://`) raises ValueError: the breaker could not probe it."""
    scheme = urlsplit(url).scheme
    if scheme not in BREAKER_CLASSES:
        raise ValueError(f"{url!r}: REDIS_URL must start with one of {', '.join(f'{s}://' for s in BREAKER_CLASSES)}")
    return BREAKER_CLASSES[scheme]


def cluster_from_url(url: str, **options: Any) -> RedisCluster:
    """A RedisCluster client from `redis[s]+cluster://[user:password@]host:port[,host:port...]`,
    over TLS to every node with `rediss+cluster`. Query options are typed as redis-py types a
    single server's (`ssl_check_hostname=false` is False); `options` win over them.

    A cluster has database 0 only, so a path other than `/` or `/0` is refused rather than
    silently ignored: code that relied on a second database would share keys with the first.
    """
    parts = urlsplit(url)
    credentials, _, hosts = parts.netloc.rpartition("@")
    if parts.path.strip("/") not in ("", "0"):
        raise ValueError(f"{url!r}: a Redis Cluster has database 0 only")
    nodes = []
    for host_port in hosts.split(","):
        host, _, port = host_port.strip().rpartition(":")
        nodes.append(ClusterNode(host.strip("[]") or "127.0.0.1", int(port or 6379)))
    if credentials:
        username, _, password = credentials.partition(":")
        options.setdefault("username", unquote(username) or None)
        options.setdefault("password", unquote(password) or None)
    for name, values in parse_qs(parts.query).items():
        parse = URL_QUERY_ARGUMENT_PARSERS.get(name)
        options.setdefault(name, parse(values[-1]) if callable(parse) else values[-1])
    # On a moved slot or a failed-over primary, the client re-reads the slot map and retries
    # (redis-py's default: 3 attempts with backoff).
    if "connection_class" not in options:
        if parts.scheme == TLS_CLUSTER_SCHEME:
            options.setdefault("ssl", True)  # redis-py's own SSLConnection, for every node
        return RedisCluster(startup_nodes=nodes, **options)
    # redis-py hands a connection class to the nodes' pools only for a client made from a URL:
    # the first seed as that URL, the others as startup nodes. A `redis://` URL even for TLS:
    # redis-py would replace the class given with its own SSLConnection for `rediss://`.
    first, *others = nodes
    return RedisCluster(url=f"redis://{first.host}:{first.port}", startup_nodes=others, **options)


def _breaker_knows(node: ClusterNode) -> None:
    """Have the breaker probe `node` from the first outage on, as its connections reach it (a
    TLS handshake or none). A connection of its pool's class, made but never connected,
    registers its node (BreakerMixin): no round trip."""
    pool = node.redis_connection.connection_pool
    pool.connection_class(**pool.connection_kwargs)


class ClusterAwareConnectionFactory(ConnectionFactory):
    """django-redis's connection factory, plus `redis[s]+cluster://` URLs (one cluster client
    per URL and process: it holds a pool per node and the slot map). Every connection it makes
    is the breaker's, over TLS when the URL's scheme says so (`breaker_class`)."""

    _clusters: dict[str, RedisCluster] = {}

    def make_connection_params(self, url: str) -> dict[str, Any]:
        params = super().make_connection_params(url)
        # One server: its pool makes breaker connections, whose retries (redis-py's defaults:
        # 10, with backoff from 10 ms to 1 s) give up at once on an open circuit. The class
        # given replaces the one redis-py picks from the scheme, so it must be TLS for TLS.
        params["connection_class"] = breaker_class(url)
        params["retry"] = BreakerRetry(ExponentialWithJitterBackoff(base=0.01, cap=1), retries=10)
        return params

    def connect(self, url: str) -> Redis | RedisCluster:
        if not is_cluster_url(url):
            return super().connect(url)
        if url not in self._clusters:
            params = self.make_connection_params(url)
            options = {
                name: params[name]
                for name in ("socket_timeout", "socket_connect_timeout", "username", "password")
                if name in params
            }
            options["connection_class"] = params["connection_class"]
            # Bounded retries (REDIS_CLUSTER_RETRIES): a node cut off from Redis answers 503 in
            # seconds rather than holding the request past the balancer's timeout.
            backoff = ExponentialWithJitterBackoff(base=0.01, cap=1)
            options["retry"] = BreakerRetry(backoff, retries=settings.REDIS_CLUSTER_RETRIES)
            self._clusters[url] = cluster = cluster_from_url(url, **options)
            # Every node of the slot map, replicas included, is probed from the first outage on:
            # a node the breaker had not met yet cost a 2 s connect timeout per slot-map re-read
            # (make partition-test, fault 1: web1 on the minority side held requests 7-10 s).
            for node in cluster.get_nodes():
                _breaker_knows(node)
        return self._clusters[url]

    def disconnect(self, connection: Redis | RedisCluster) -> None:
        if isinstance(connection, RedisCluster):
            connection.disconnect_connection_pools()
        else:
            super().disconnect(connection)


class ClusterAwareClient(DefaultClient):
    """django-redis's default client whose `get_many` works across hash slots."""

    def get_many(self, keys, version=None, client=None):
        if client is None:
            client = self.get_client(write=False)
        if not isinstance(client, RedisCluster):
            return super().get_many(keys, version=version, client=client)
        if not keys:
            return {}
        made = {self.make_key(key, version=version): key for key in keys}
        values = client.mget_nonatomic(list(made))
        return {made[key]: self.decode(value) for key, value in zip(made, values, strict=True) if value is not None}
