"""A small TCP fault proxy (toxiproxy is not available here): loopback in, loopback out.

proxy = FaultProxy(upstream_port=6380); proxy.start()   # listens on proxy.port
proxy = FaultProxy(0, upstream_unix="/run/pg/.s.PGSQL.5432")  # to a Unix socket instead
proxy.mode = "cut"        # drop every connection and refuse new ones
proxy.mode = "blackhole"  # accept and keep connections, forward nothing
proxy.mode = "delay"      # forward after proxy.delay seconds per chunk
proxy.mode = "pass"       # back to normal
"""

from __future__ import annotations

import select
import socket
import threading
import time

MODES = ("pass", "cut", "blackhole", "delay")


class FaultProxy:
    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1", *, upstream_unix: str = "") -> None:
        """Forwards to upstream_host:upstream_port, or to the Unix socket at `upstream_unix` when
        one is named (an embedded PostgreSQL listens on nothing else); listens on loopback TCP."""
        self.upstream = (upstream_host, upstream_port)
        self.upstream_unix = upstream_unix
        self.mode = "pass"
        self.delay = 0.5
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(256)
        self.port = self._listener.getsockname()[1]
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    def start(self) -> FaultProxy:
        threading.Thread(target=self._accept, name="fault-proxy", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._listener.close()
        self.cut_all()

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        if mode == "cut":
            self.cut_all()

    def cut_all(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, set()
        for sock in connections:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.mode == "cut":
                client.close()  # refused, as far as the client can tell
                continue
            try:
                upstream = self._upstream_connect()
            except OSError:
                client.close()
                continue
            with self._lock:
                self._connections |= {client, upstream}
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()

    def _upstream_connect(self) -> socket.socket:
        if not self.upstream_unix:
            return socket.create_connection(self.upstream, timeout=5)
        upstream = socket.socket(socket.AF_UNIX)
        upstream.settimeout(5)
        try:
            upstream.connect(self.upstream_unix)
        except OSError:
            upstream.close()
            raise
        return upstream

    def _pipe(self, client: socket.socket, upstream: socket.socket) -> None:
        peers = {client: upstream, upstream: client}
        try:
            while not self._stopped.is_set():
                readable, _, _ = select.select(list(peers), [], [], 0.5)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if self.mode == "blackhole":
                        continue  # swallowed: the sender waits for an answer that never comes
                    if self.mode == "delay":
                        time.sleep(self.delay)
                    peers[sock].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            with self._lock:
                self._connections -= {client, upstream}
            client.close()
            upstream.close()


def database_proxy(database: dict) -> FaultProxy:
    """A proxy in front of Django's DATABASES entry `database`: its TCP address, or its Unix
    socket (an embedded PostgreSQL's) when HOST is a directory."""
    host, port = database["HOST"] or "127.0.0.1", int(database.get("PORT") or 5432)
    if host.startswith("/"):
        return FaultProxy(0, upstream_unix=f"{host}/.s.PGSQL.{port}")
    return FaultProxy(port, host)


def database_url(database: dict, proxy: FaultProxy) -> str:
    """A DATABASE_URL for `database` that reaches it through `proxy`."""
    from urllib.parse import quote

    # safe="": a "/" left as it is would end the URL's host part inside the password.
    password = f":{quote(str(database['PASSWORD']), safe='')}" if database.get("PASSWORD") else ""
    return f"postgres://{database['USER']}{password}@127.0.0.1:{proxy.port}/{database['NAME']}"
