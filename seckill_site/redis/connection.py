"""One Redis connection for the whole project, single server or Redis Cluster, chosen by URL.

    REDIS_URL=redis://host:6379/0                        one server (the embedded mode)
    REDIS_URL=redis+cluster://host:7000,host:7001,...    Redis Cluster: any seed nodes
    REDIS_URL=rediss://…, rediss+cluster://…             either over TLS (redis-py's `ssl_*` options)

The django-redis cache (sessions, rate limits) and the shop's own calls share it through
`ClusterAwareConnectionFactory`; `ClusterAwareClient` makes `get_many` work across hash slots.
Every connection goes through the circuit breaker (breaker.py), which probes TCP addresses only."""

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
BREAKER_CLASSES: dict[str, type[BreakerMixin]] = {
    "redis": BreakerConnection,
    "rediss": BreakerSSLConnection,
    CLUSTER_SCHEME: BreakerConnection,
    TLS_CLUSTER_SCHEME: BreakerSSLConnection,
}


def is_cluster_url(url: str) -> bool:
    return url.startswith((f"{CLUSTER_SCHEME}://", f"{TLS_CLUSTER_SCHEME}://"))


def breaker_class(url: str) -> type[BreakerMixin]:
    """The breaker's connection class for `url`, TLS for `rediss`; ValueError for any other
    scheme (`unix://`), which the breaker could not probe."""
    scheme = urlsplit(url).scheme
    if scheme not in BREAKER_CLASSES:
        raise ValueError(f"{url!r}: REDIS_URL must start with one of {', '.join(f'{s}://' for s in BREAKER_CLASSES)}")
    return BREAKER_CLASSES[scheme]


def cluster_from_url(url: str, **options: Any) -> RedisCluster:
    """A RedisCluster client from `redis[s]+cluster://[user:password@]host:port[,host:port...]`,
    query options typed as for a single server; `options` win over them. Raises ValueError for
    a database other than 0, which a cluster lacks: ignoring it would share keys silently."""
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
    if "connection_class" not in options:
        if parts.scheme == TLS_CLUSTER_SCHEME:
            options.setdefault("ssl", True)  # redis-py's own SSLConnection, for every node
        return RedisCluster(startup_nodes=nodes, **options)
    # redis-py hands the nodes' pools a connection class only for a client made from a URL; a
    # `redis://` one even for TLS, or redis-py would swap in its own SSLConnection.
    first, *others = nodes
    return RedisCluster(url=f"redis://{first.host}:{first.port}", startup_nodes=others, **options)


def _breaker_knows(node: ClusterNode) -> None:
    """Register `node` with the breaker without a round trip: a connection made, never connected."""
    pool = node.redis_connection.connection_pool
    pool.connection_class(**pool.connection_kwargs)


class ClusterAwareConnectionFactory(ConnectionFactory):
    """django-redis's factory plus `redis[s]+cluster://` URLs, every connection through the breaker."""

    _clusters: dict[str, RedisCluster] = {}

    def make_connection_params(self, url: str) -> dict[str, Any]:
        params = super().make_connection_params(url)
        # The class replaces the one redis-py picks from the scheme, so it must be TLS for TLS.
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
            # Bounded retries: a node cut off from Redis answers 503 before the balancer gives up.
            backoff = ExponentialWithJitterBackoff(base=0.01, cap=1)
            options["retry"] = BreakerRetry(backoff, retries=settings.REDIS_CLUSTER_RETRIES)
            self._clusters[url] = cluster = cluster_from_url(url, **options)
            # Probe every slot-map node, replicas too: an unknown one cost a timeout per re-read.
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
