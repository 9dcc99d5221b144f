"""The PostgreSQL of the cluster topology: three database hosts, each Patroni and the PostgreSQL
it manages (Debian's PostgreSQL 15 binaries, deploy/patroni.yml), and three etcd hosts, the
consensus store Patroni keeps its leader key in.

    pg1..pg3       Patroni REST :8008, PostgreSQL :5432
    etcd1..etcd3   etcd :2379 (peers :2380)

etcd runs apart from the database hosts: with a member on each, losing two database hosts would
take etcd's quorum along, and no standby could be promoted however healthy.

Synchronous mode: a commit returns once the synchronous standby has it, and only that standby
may be promoted. HAProxy (deploy/haproxy.cfg, `listen postgres`) sends connections to the node
whose Patroni answers OPTIONS /primary with 200; PgBouncer and the test harness go through it.

A database host is killed as a crashed machine leaves it (Patroni and every PostgreSQL
process, kill -9) and started again on the same disk: Patroni rewinds it and it rejoins as a
standby. PostgreSQL refuses to run as root: as root, Patroni runs as the `postgres` user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import string
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from tools.net import logger, wait_until

ROOT = Path(__file__).resolve().parent.parent.parent
TEMPLATE = ROOT / "deploy" / "patroni.yml"
BIN = Path("/usr/lib/postgresql/15/bin")
ETCD_CLIENT_PORT, ETCD_PEER_PORT, REST_PORT, POSTGRES_PORT = 2379, 2380, 8008, 5432

log = logger("postgres")


def missing_programs() -> list[str]:
    """Debian packages to install before the database hosts can start."""
    needs = {"etcd": "etcd-server", "patroni": "patroni", "patronictl": "patroni"}
    missing = [package for program, package in needs.items() if not shutil.which(program)]
    if not (BIN / "postgres").exists():
        missing.append("postgresql-15")
    return sorted(set(missing))


@dataclass(frozen=True)
class DatabaseHost:
    name: str  # pg1
    address: str  # where its servers listen
    directory: Path

    @property
    def rest(self) -> str:
        return f"http://{self.address}:{REST_PORT}"

    @property
    def data(self) -> Path:
        return self.directory / "data"

    @property
    def config(self) -> Path:
        return self.directory / "patroni.yml"


@dataclass
class LeaderWatch:
    """Which hosts answer Patroni's /primary, sampled every `interval` from a thread."""

    hosts: list[DatabaseHost]
    interval: float = 0.2
    samples: list[tuple[float, frozenset[str]]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> LeaderWatch:
        threading.Thread(target=self._run, daemon=True, name="leader-watch").start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        session = requests.Session()
        while not self._stop.is_set():
            leaders = frozenset(host.name for host in self.hosts if _answers_primary(session, host))
            self.samples.append((time.monotonic(), leaders))
            self._stop.wait(self.interval)

    def leaderless_seconds(self, since: float, *, old: str | None = None) -> float:
        """Seconds after `since` until a host other than `old` answered /primary (the time the
        shop had no leader it could write to); the whole watch if none ever did."""
        for at, leaders in self.samples:
            if at >= since and leaders - {old}:
                return max(0.0, at - since)
        return (self.samples[-1][0] - since) if self.samples else 0.0

    def leaders_seen(self, since: float) -> list[str]:
        """Every host that answered /primary after `since`, in order of first answer."""
        seen: list[str] = []
        for at, leaders in self.samples:
            for name in sorted(leaders):
                if at >= since and name not in seen:
                    seen.append(name)
        return seen

    def both_primary_seconds(self) -> float:
        """How long two hosts answered /primary at once (an old leader not yet demoted)."""
        total, previous = 0.0, None
        for at, leaders in self.samples:
            if previous is not None and len(leaders) > 1:
                total += at - previous
            previous = at
        return total


def _answers_primary(session: requests.Session, host: DatabaseHost) -> bool:
    try:
        return session.options(f"{host.rest}/primary", timeout=0.5).status_code == 200
    except requests.RequestException:
        return False


class DatabaseCluster:
    """The database hosts at `addresses` and the etcd hosts at `etcd_addresses` (name ->
    address), run through `topology` (its spawn, kill and host prefixes)."""

    def __init__(self, topology, addresses: dict[str, str], etcd_addresses: dict[str, str], directory: Path) -> None:
        self.topology = topology
        self.hosts = {name: DatabaseHost(name, address, directory / name) for name, address in addresses.items()}
        self.etcd = {name: DatabaseHost(name, address, directory / name) for name, address in etcd_addresses.items()}
        self.directory = directory

    # --- starting ----------------------------------------------------------------------------

    def start(self, database: str) -> None:
        """etcd, then Patroni on every host; returns once a leader and a synchronous standby
        stand and `database` exists on the leader."""
        hosts = [*self.hosts.values(), *self.etcd.values()]
        log(f"PostgreSQL under Patroni, etcd: {', '.join(f'{h.name} {h.address}' for h in hosts)}")
        for host in hosts:
            host.directory.mkdir(parents=True, exist_ok=True)
            self._own(host.directory)
        for member in self.etcd.values():
            self.etcd_start(member)
        if not wait_until(self.etcd_healthy, 30, 0.2):
            raise RuntimeError("etcd did not form a cluster; see .run/cluster/logs/etcd*.log")
        for host in self.hosts.values():
            self.config_write(host)
            self.patroni_start(host)
        if not self.wait_healthy(120):
            raise RuntimeError(f"Patroni did not elect a leader and a sync standby: {self.members()}")
        leader = self.hosts[self.leader() or ""]
        import psycopg2

        connection = psycopg2.connect(host=leader.address, port=POSTGRES_PORT, user="postgres", dbname="postgres")
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {database}")
        connection.close()
        log(f"leader {leader.name}, sync standby {self.sync_standby()}; database {database} created")

    def etcd_start(self, host: DatabaseHost) -> None:
        peers = ",".join(f"{h.name}=http://{h.address}:{ETCD_PEER_PORT}" for h in self.etcd.values())
        command = [
            "etcd", "--name", host.name, "--data-dir", str(host.directory / "data"), "--logger", "zap",
            "--listen-client-urls", f"http://{host.address}:{ETCD_CLIENT_PORT}",
            "--advertise-client-urls", f"http://{host.address}:{ETCD_CLIENT_PORT}",
            "--listen-peer-urls", f"http://{host.address}:{ETCD_PEER_PORT}",
            "--initial-advertise-peer-urls", f"http://{host.address}:{ETCD_PEER_PORT}",
            "--initial-cluster", peers, "--initial-cluster-token", "seckill", "--initial-cluster-state", "new",
        ]  # fmt: skip
        self.topology.spawn(host.name, command, env=_plain_env(host), host=host.name)

    def etcd_healthy(self) -> bool:
        return all(self._etcd_health(member) for member in self.etcd.values())

    def _etcd_health(self, host: DatabaseHost) -> bool:
        try:
            answer = requests.get(f"http://{host.address}:{ETCD_CLIENT_PORT}/health", timeout=1)
            return answer.ok and answer.json().get("health") == "true"
        except (requests.RequestException, ValueError):
            return False

    def config_write(self, host: DatabaseHost) -> None:
        etcd = ",".join(f"{h.address}:{ETCD_CLIENT_PORT}" for h in self.etcd.values())
        values = {"NAME": host.name, "HOST": host.address, "DIR": str(host.directory), "ETCD_HOSTS": etcd}
        host.config.write_text(string.Template(TEMPLATE.read_text()).substitute(values))
        self._own(host.config)

    def patroni_start(self, host: DatabaseHost) -> None:
        command = ["patroni", str(host.config)]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        self.topology.spawn(f"patroni-{host.name}", command, env=_plain_env(host), cwd=host.directory,
                            host=host.name)  # fmt: skip

    def _own(self, path: Path) -> None:
        """Hand `path` to the postgres user when running as root (PostgreSQL refuses root)."""
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(path, user.pw_uid, user.pw_gid)

    # --- reading the cluster's state ---------------------------------------------------------

    def members(self) -> list[dict]:
        """Patroni's /cluster members (name, role, state, lag ...), from any host that answers."""
        for host in self.hosts.values():
            try:
                return requests.get(f"{host.rest}/cluster", timeout=1).json().get("members", [])
            except (requests.RequestException, ValueError):
                continue
        return []

    def _role(self, role: str) -> str | None:
        return next((m["name"] for m in self.members() if m.get("role") == role), None)

    def leader(self) -> str | None:
        return self._role("leader")

    def sync_standby(self) -> str | None:
        return self._role("sync_standby")

    def wait_healthy(self, timeout: float = 90) -> bool:
        """Until a leader, a synchronous standby and a third running standby stand."""

        def healthy() -> bool:
            members = self.members()
            roles = sorted(m.get("role", "") for m in members if m.get("state") in ("running", "streaming"))
            return len(members) == 3 and roles == ["leader", "replica", "sync_standby"]

        return wait_until(healthy, timeout, 0.5)

    def watch(self) -> LeaderWatch:
        return LeaderWatch(list(self.hosts.values())).start()

    # --- faults ------------------------------------------------------------------------------

    def host_kill(self, name: str) -> None:
        """kill -9 everything on database host `name`: Patroni, and PostgreSQL, whose postmaster
        and backends Patroni starts in a process group of their own."""
        postmaster = _postmaster_pid(self.hosts[name])
        self.topology.kill(f"patroni-{name}")
        if postmaster is not None:
            try:
                os.killpg(os.getpgid(postmaster), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def host_start(self, name: str) -> None:
        """Start a killed database host again on its own disk: Patroni rewinds it and it rejoins."""
        self.patroni_start(self.hosts[name])

    def switchover(self, candidate: str) -> str:
        """`patronictl switchover` to `candidate`, as an operator runs it; what it said it did."""
        leader = self.leader()
        result = subprocess.run(
            ["patronictl", "-c", str(self.hosts[candidate].config), "switchover", "--leader", str(leader),
             "--candidate", candidate, "--force"],
            capture_output=True, text=True, timeout=60, env=_plain_env(self.hosts[candidate]),
        )  # fmt: skip
        if result.returncode != 0:
            raise RuntimeError(f"patronictl switchover: {result.stderr.strip()[-400:]}")
        said = [line for line in result.stdout.splitlines() if "switch" in line.lower()]
        return said[-1].strip() if said else result.stdout.strip()[-200:]

    # --- teardown ------------------------------------------------------------------------------

    def stop(self) -> None:
        """Patroni stops its PostgreSQL on SIGTERM (all three at once: each waits for its
        checkpoint); etcd last, as Patroni lets go of its keys there."""
        for name in self.hosts:
            self.topology.signal(f"patroni-{name}", signal.SIGTERM)
        for name in self.hosts:
            self.topology.halt(f"patroni-{name}", timeout=30)
        for name in self.etcd:
            self.topology.halt(name, timeout=10)
        self.stop_leftovers()

    def stop_leftovers(self) -> None:
        """Every postmaster whose data directory is under ours and etcd member using ours (a
        killed run's, which outlived their Patroni: the postmaster runs in a session of its
        own, which no recorded process group holds), so that none keeps a host's address."""
        import psutil

        mine = str(self.directory)
        for process in psutil.process_iter(["name", "cmdline"]):
            command = " ".join(process.info["cmdline"] or [])
            if process.info["name"] in ("postgres", "etcd") and mine in command:
                try:
                    process.kill()
                except psutil.Error:
                    pass


def _postmaster_pid(host: DatabaseHost) -> int | None:
    """The pid in the host's postmaster.pid, if a postgres process has it."""
    try:
        pid = int((host.data / "postmaster.pid").read_text().split()[0])
        return pid if "postgres" in Path(f"/proc/{pid}/comm").read_text() else None
    except (OSError, ValueError, IndexError):
        return None


def _plain_env(host: DatabaseHost) -> dict[str, str]:
    """Debian's Patroni and etcd run on the system Python and need none of the shop's settings."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(host.directory), "LANG": "C.UTF-8"}
