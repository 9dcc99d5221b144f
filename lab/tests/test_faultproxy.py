"""The fault suite's TCP proxy on loopback, in front of a small echo server: each mode does to
a connection what `make faults` relies on, and the database helpers aim it at PostgreSQL."""

import socket
import threading
import time

import pytest

from lab.faultproxy import FaultProxy, database_proxy, database_url


@pytest.fixture
def echo():
    """A loopback echo server: its port, while the test runs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def serve(connection: socket.socket) -> None:
        with connection:
            while data := connection.recv(4096):
                connection.sendall(data)

    def accept() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


@pytest.fixture
def proxy(echo):
    proxy = FaultProxy(upstream_port=echo).start()
    yield proxy
    proxy.stop()


def connected(proxy: FaultProxy) -> socket.socket:
    return socket.create_connection(("127.0.0.1", proxy.port), timeout=2)


def round_trip(sock: socket.socket, data: bytes = b"ping") -> bytes:
    sock.sendall(data)
    return sock.recv(4096)


def test_pass_forwards_both_ways(proxy):
    with connected(proxy) as sock:
        assert round_trip(sock, b"hello") == b"hello"
        assert round_trip(sock, b"again") == b"again"


def test_cut_drops_open_connections_and_refuses_new_ones_until_pass(proxy):
    sock = connected(proxy)
    assert round_trip(sock) == b"ping"
    proxy.set_mode("cut")
    try:  # the open one is shut down: an empty read or a reset
        assert sock.recv(4096) == b""
    except ConnectionResetError:
        pass
    sock.close()
    with connected(proxy) as refused:  # accepted by the kernel, then closed by the proxy
        refused.settimeout(2)
        try:
            assert refused.recv(4096) == b""
        except ConnectionResetError:
            pass
    proxy.set_mode("pass")
    with connected(proxy) as again:
        assert round_trip(again) == b"ping"


def test_blackhole_keeps_the_connection_and_answers_nothing(proxy):
    with connected(proxy) as sock:
        proxy.set_mode("blackhole")
        sock.settimeout(0.5)
        sock.sendall(b"anyone?")
        with pytest.raises(socket.timeout):
            sock.recv(4096)
        proxy.set_mode("pass")
        sock.settimeout(2)
        assert round_trip(sock) == b"ping"  # what was swallowed stays swallowed


def test_delay_holds_each_chunk_for_the_delay(proxy):
    proxy.delay = 0.3
    proxy.set_mode("delay")
    with connected(proxy) as sock:
        started = time.monotonic()
        assert round_trip(sock) == b"ping"
        assert time.monotonic() - started >= 0.55  # once on the way there, once on the way back


def test_an_unknown_mode_is_refused(proxy):
    with pytest.raises(ValueError, match="'drop'"):
        proxy.set_mode("drop")
    assert proxy.mode == "pass"


def test_an_upstream_that_is_down_closes_the_client(echo):
    proxy = FaultProxy(upstream_port=echo).start()
    try:
        with socket.socket() as probe:  # a port nobody listens on
            probe.bind(("127.0.0.1", 0))
            proxy.upstream = probe.getsockname()
            with connected(proxy) as sock:
                assert sock.recv(4096) == b""
    finally:
        proxy.stop()


def test_a_unix_socket_upstream_is_reached(tmp_path):
    path = str(tmp_path / "upstream.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)

    def answer() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.sendall(connection.recv(100).upper())

    threading.Thread(target=answer, daemon=True).start()
    proxy = FaultProxy(0, upstream_unix=path).start()
    try:
        with connected(proxy) as sock:
            assert round_trip(sock, b"over unix") == b"OVER UNIX"
    finally:
        proxy.stop()
        listener.close()


def test_the_database_proxy_follows_tcp_or_a_socket_directory():
    tcp = database_proxy({"HOST": "127.0.0.1", "PORT": "5499"})
    unix = database_proxy({"HOST": "/run/pg", "PORT": ""})
    default = database_proxy({"HOST": "", "PORT": None})
    try:
        assert (tcp.upstream, tcp.upstream_unix) == (("127.0.0.1", 5499), "")
        assert unix.upstream_unix == "/run/pg/.s.PGSQL.5432"
        assert default.upstream == ("127.0.0.1", 5432)
    finally:
        for proxy in (tcp, unix, default):
            proxy.stop()


def test_the_database_url_goes_through_the_proxy_with_the_password_quoted():
    proxy = FaultProxy(5432)
    try:
        database = {"USER": "shop", "PASSWORD": "p@ss/word", "NAME": "seckill"}
        assert database_url(database, proxy) == f"postgres://shop:p%40ss%2Fword@127.0.0.1:{proxy.port}/seckill"
        assert database_url(database | {"PASSWORD": ""}, proxy) == f"postgres://shop@127.0.0.1:{proxy.port}/seckill"
    finally:
        proxy.stop()
