"""The multi-node topology of `make cluster-test`, started from deploy/ on one machine.

Each simulated host is a loopback address (Linux routes all of 127/8 to `lo`):

    edge            127.0.0.1:18080, Varnish           deploy/edge.vcl (the CDN's stand-in)
    HAProxy         127.0.0.1:18000 (stats :18001)     deploy/haproxy.cfg
    web1..web3      127.0.0.2-4:8000, granian          deploy/cluster.env
    worker1/2       Celery workers (prefork x 2)       deploy/cluster.env
    beat            exactly one Celery beat            deploy/cluster.env
    Redis Cluster   127.0.0.11-16, 3 primaries + 3 replicas (tools/redis_cluster.py)
    RabbitMQ        rabbit-c1..c3@localhost, AMQP 127.0.0.1:15701-15703, one cluster
    PgBouncer       127.0.0.1:16432, transaction mode  deploy/pgbouncer.ini
    PostgreSQL      pg1..pg3 on 127.0.0.21-23, each Patroni and PostgreSQL 15, and etcd1..3 on
                    127.0.0.31-33 (lab/cluster/database.py, deploy/patroni.yml): one leader, one
                    synchronous standby, one standby; HAProxy's 127.0.0.1:15432 leads to the leader
    Alipay          127.0.0.41:18010, the provider's stand-in (lab/cluster/payments.py)

Shoppers reach the edge only: it answers everybody's pages itself and passes the rest to
HAProxy; the web nodes and workers purge it (EDGE_PURGE_URLS in deploy/cluster.env).

Everything is a plain process with its log under .run/cluster/logs/, in a session of its own
so that a kill reaches its children (granian's workers and Celery's pool). `stop()` tears it all
down, and is safe to call on a half-started topology.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from lab.cluster import database
from lab.cluster.payments import AlipayStandIn
from tools import redis_cluster
from tools.edge import edge_command, edge_counters, edge_files, varnishd
from tools.net import logger, wait_until
from tools.processes import Processes, beat_command, worker_command
from tools.reachable import reachable, reachable_made

ROOT = Path(__file__).resolve().parent.parent.parent
DEPLOY = ROOT / "deploy"
RUN = ROOT / ".run" / "cluster"
LOGS = RUN / "logs"
PIDS = RUN / "pids"

# These must match deploy/haproxy.cfg, deploy/pgbouncer.ini and deploy/cluster.env.
EDGE_PORT = 18080
BALANCER_PORT = 18000
STATS_PORT = 18001
WEB_HOSTS = ("127.0.0.2", "127.0.0.3", "127.0.0.4")
WEB_PORT = 8000
WEB_PROCESSES, WEB_THREADS = 2, 4  # granian workers x blocking threads on each web node
WORKERS = ("worker1", "worker2")
WORKER_CONCURRENCY = 2  # Celery prefork processes per worker
REDIS_HOSTS = tuple(f"127.0.0.{i}" for i in range(11, 17))
PGBOUNCER_PORT = 16432
DATABASE_HOSTS = {"pg1": "127.0.0.21", "pg2": "127.0.0.22", "pg3": "127.0.0.23"}
ETCD_HOSTS = {"etcd1": "127.0.0.31", "etcd2": "127.0.0.32", "etcd3": "127.0.0.33"}
LEADER_PORT = 15432  # HAProxy's `listen postgres`: the Patroni leader's PostgreSQL
PAYMENTS_HOST = "127.0.0.41"  # the Alipay stand-in (lab/cluster/payments.py)
DATABASE = "seckill_cluster"

LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
RABBITMQ_BIN = Path("/usr/lib/rabbitmq/bin")  # the scripts themselves: /usr/sbin's wrappers su to `rabbitmq`
VMOD_XKEY = "/usr/lib/x86_64-linux-gnu/varnish/vmods/libvmod_xkey.so"  # deploy/edge.vcl's purges
EDGE_DIR = RUN / "edge"  # the edge's VCL files and varnishd's working directory


log = logger("cluster")


def missing_programs(*, clock_faults: bool = True, edge: bool = True) -> list[str]:
    """Debian packages to install before the topology can start. A C compiler and libfaketime
    are only for the test's clock faults (a node started with `clock_offset`); Varnish and its
    modules for the edge."""
    needs = {"haproxy": "haproxy", "pgbouncer": "pgbouncer", "psql": "postgresql-client"}
    if clock_faults:
        needs["cc"] = "gcc"
    missing = [package for program, package in needs.items() if not shutil.which(program)]
    if not (RABBITMQ_BIN / "rabbitmq-server").exists():
        missing.append("rabbitmq-server")
    if clock_faults and not Path(LIBFAKETIME).exists():
        missing.append("libfaketime")
    if edge and varnishd() is None:
        missing.append("varnish")
    if edge and not Path(VMOD_XKEY).exists():
        missing.append("varnish-modules")
    return missing + database.missing_programs()


def realsleep_library() -> Path:
    """lab/cluster/realsleep.c, compiled once per run (needs a C compiler: gcc)."""
    library = RUN / "realsleep.so"
    if not library.exists():
        source = Path(__file__).with_name("realsleep.c")
        subprocess.run([shutil.which("cc") or "gcc", "-shared", "-fPIC", "-O2", "-o", str(library), str(source)],
                       check=True)  # fmt: skip
    return library


@dataclass(frozen=True)
class RabbitNode:
    name: str  # c1
    amqp_port: int
    dist_port: int

    @property
    def nodename(self) -> str:
        return f"rabbit-{self.name}@localhost"

    @property
    def directory(self) -> Path:
        return RUN / "rabbitmq" / self.name

    @property
    def pidfile(self) -> Path:
        return self.directory / "beam.pid"

    @property
    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.amqp_port}//"


RABBIT_NODES = tuple(RabbitNode(f"c{i}", 15700 + i, 15710 + i) for i in (1, 2, 3))
RABBIT_HOME = RUN / "rabbitmq" / "home"  # its .erlang.cookie is the three nodes' shared secret
# How long a node may take from launch until it runs: three boot at once on the machine's cores
# (each takes 10-30 s where names resolve at once; a lookup that waits on a nameserver is
# caught before this, by the partition test's lookup check).
RABBIT_BOOT_SECONDS = 120


def rabbit_env(node: RabbitNode | None = None, *, bind: str = "127.0.0.1") -> dict[str, str]:
    env = dict(
        os.environ,
        HOME=str(RABBIT_HOME),
        RABBITMQ_CONF_ENV_FILE="/dev/null",  # not the system broker's /etc/rabbitmq/rabbitmq-env.conf
        RABBITMQ_CONFIG_FILE=str(DEPLOY / "rabbitmq.conf"),
        RABBITMQ_ADVANCED_CONFIG_FILE=str(RUN / "rabbitmq" / "advanced.config"),  # none
        RABBITMQ_ENABLED_PLUGINS_FILE=str(DEPLOY / "rabbitmq-enabled-plugins"),
    )
    if node is not None:
        env.update(
            RABBITMQ_NODENAME=node.nodename,
            RABBITMQ_NODE_IP_ADDRESS=bind,
            RABBITMQ_NODE_PORT=str(node.amqp_port),
            RABBITMQ_DIST_PORT=str(node.dist_port),
            RABBITMQ_MNESIA_BASE=str(node.directory / "mnesia"),
            RABBITMQ_LOG_BASE=str(node.directory / "log"),
            RABBITMQ_PID_FILE=str(node.pidfile),
        )
    return env


def rabbitmqctl(node: RabbitNode, *args: str, timeout: float = 60, tool: str = "rabbitmqctl",
                prefix: tuple[str, ...] = ()) -> str:  # fmt: skip
    """`prefix` runs it on another host (`ip netns exec NS`): it finds the nodes through that host's epmd."""
    result = subprocess.run(
        [*prefix, str(RABBITMQ_BIN / tool), "-n", node.nodename, *args],
        env=rabbit_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{tool} -n {node.nodename} {' '.join(args)}: {result.stderr.strip()[-500:]}")
    return result.stdout


def _last_line(directory: Path) -> str:
    """The last non-empty line of the newest log in `directory` ("" when there is none)."""
    logs = sorted(directory.glob("*.log"), key=lambda path: path.stat().st_mtime)
    if not logs:
        return ""
    lines = [line for line in logs[-1].read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child stays a zombie until its parent reaps it: that is dead too.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def _group_alive(pgid: int) -> bool:
    """Whether a process of group `pgid` runs (a zombie holds no socket: it does not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _parent, group = stat.read_text().rsplit(") ", 1)[1].split()[:3]
        except (OSError, IndexError, ValueError):
            continue
        if state != "Z" and int(group) == pgid:
            return True
    return False


def app_support() -> dict[str, bool]:
    """What the shop's settings (this checkout's) support; the topology adapts and says so."""
    settings = "\n".join(path.read_text() for path in (ROOT / "seckill_site" / "settings").glob("*.py"))
    code = settings + "\n".join(path.read_text() for path in (ROOT / "seckill_site").rglob("*.py"))
    return {
        "redis_cluster": "redis+cluster" in code,
        "quorum_queues": "quorum" in code,  # declared in seckill_site/broker.py, not the settings
        "pooler_setting": "DATABASE_POOLER" in settings or "DISABLE_SERVER_SIDE_CURSORS" in settings,
    }


class Topology:
    with_edge = True  # shoppers reach Varnish, which passes to HAProxy; False: HAProxy directly

    def __init__(self, *, redis_cluster_mode: bool | None = None, clock_faults: bool = True) -> None:
        self.support = app_support()
        self.clock_faults = clock_faults
        self.redis_cluster_mode = self.support["redis_cluster"] if redis_cluster_mode is None else redis_cluster_mode
        self.processes = Processes(LOGS, pid_dir=PIDS, host_prefix=self.host_prefix)
        self.redis_nodes: list[redis_cluster.Node] = []
        self.single_redis: subprocess.Popen | None = None
        self.web_hosts = WEB_HOSTS
        self.balancer_url = f"http://127.0.0.1:{BALANCER_PORT}"
        self.stats_url = f"http://127.0.0.1:{STATS_PORT}"
        self.edge_listen = f"127.0.0.1:{EDGE_PORT}"
        self.secret_key = "cluster-" + secrets.token_urlsafe(40)
        self.env: dict[str, str] = {}
        self.database = DATABASE
        self.database_addresses, self.etcd_addresses = DATABASE_HOSTS, ETCD_HOSTS
        self.leader_host = "127.0.0.1"  # HAProxy's address, where LEADER_PORT listens
        self.postgres: database.DatabaseCluster | None = None
        self.payments = AlipayStandIn(PAYMENTS_HOST, RUN / "alipay")
        self.durable = True  # the shipped Redis durability (redis_cluster.DURABLE_OPTIONS, REDIS_WAIT_REPLICAS)
        self.rabbit_launched: dict[str, float] = {}  # node name -> time.monotonic() of its launch
        self.edge_answers_written = False  # the edge's answers' files, from node_env (start_edge)

    # --- environment ---------------------------------------------------------------------

    def node_env(self) -> dict[str, str]:
        """deploy/cluster.env with its ${NAME}s filled in, on top of this process's environment."""
        values = {"SECRET_KEY": self.secret_key, "REDIS_URL": self.redis_url}
        env = dict(os.environ)
        for line in (DEPLOY / "cluster.env").read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, value = line.partition("=")
            env[key] = string.Template(value).substitute(values)
        # Payments at the Alipay stand-in, its notifies sent to the balancer.
        env.update(self.payments.node_env(self.balancer_url))
        env.update(self.env_overrides())
        return env

    def env_overrides(self) -> dict[str, str]:
        """Where the nodes find each other, when not where deploy/cluster.env says (make partition-test)."""
        return {}

    def host_prefix(self, host: str | None) -> list[str]:
        """The command prefix that runs a process on simulated host `host`: none on loopback."""
        return []

    def rabbitmqctl(self, node: RabbitNode, *args: str, **options) -> str:
        return rabbitmqctl(node, *args, prefix=tuple(self.host_prefix("rabbit")), **options)

    def harness_env(self) -> dict[str, str]:
        """The test's own Django: the nodes' settings, the PostgreSQL leader without PgBouncer
        (it counts orders while PgBouncer may be the thing under test, and runs the migrations),
        and no purges: the test is no host of the shop's (make partition-test's edge refuses
        it, as a shopper)."""
        env = dict(self.env)
        env["DATABASE_URL"] = f"postgres://postgres@{self.leader_host}:{LEADER_PORT}/{self.database}"
        env.pop("DATABASE_POOLER", None)
        env.pop("EDGE_PURGE_URLS", None)
        return env

    @property
    def edge_url(self) -> str:
        return f"http://{self.edge_listen}"

    @property
    def url(self) -> str:
        """Where shoppers go: the edge (the balancer without one)."""
        return self.edge_url if self.with_edge else self.balancer_url

    @property
    def redis_url(self) -> str:
        if self.redis_cluster_mode:
            return redis_cluster.seed_url(self.redis_nodes)
        return f"redis://{REDIS_HOSTS[0]}:{self.single_redis_port}/0"

    # --- process plumbing ----------------------------------------------------------------

    def spawn(self, name: str, command: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT,
              host: str | None = None) -> None:  # fmt: skip
        self.processes.spawn(name, command, env=env or self.env, cwd=cwd, host=host)

    def signal(self, name: str, signum: int) -> None:
        self.processes.signal(name, signum)

    def halt(self, name: str, *, timeout: float = 20) -> None:
        self.processes.halt(name, timeout=timeout)

    def kill(self, name: str) -> None:
        self.processes.kill(name)

    # --- the pieces --------------------------------------------------------------------------

    def start(self) -> None:
        missing = missing_programs(clock_faults=self.clock_faults)
        if missing:
            raise RuntimeError(f"install the Debian packages: {' '.join(missing)}")
        self.stop_leftovers()
        shutil.rmtree(RUN, ignore_errors=True)
        LOGS.mkdir(parents=True)
        PIDS.mkdir()
        log(f"app support on this checkout: {self.support}")
        started = time.monotonic()
        self.step("Redis", self.start_redis)
        self.step("RabbitMQ", self.start_rabbitmq)
        self.env = self.node_env()
        self.step("payments stand-in", lambda: self.payments.start(self))
        # HAProxy before the database: the harness and PgBouncer find its leader there.
        self.step("HAProxy", self.start_balancer)
        self.step("PostgreSQL", self.start_database)
        self.step("PgBouncer", self.start_pgbouncer)
        for index in range(len(self.web_hosts)):
            self.start_web(index)
        for name in WORKERS:
            self.start_worker(name)
        self.start_beat()
        self.step("web nodes, workers and beat", self.wait_web)
        if self.with_edge:
            self.step("edge", self.start_edge)
        log(f"topology up in {time.monotonic() - started:.0f} s: {self.url} (HAProxy {self.balancer_url}, "
            f"stats {self.stats_url}/)")  # fmt: skip

    def step(self, what: str, start) -> None:
        """Run one start-up step and log how long it took, so a slow start names its slow part."""
        started = time.monotonic()
        try:
            start()
        except BaseException:
            log(f"start-up: {what} failed after {time.monotonic() - started:.1f} s")
            raise
        log(f"start-up: {what} in {time.monotonic() - started:.1f} s")

    def start_redis(self) -> None:
        if self.redis_cluster_mode:
            log(f"Redis Cluster: 6 nodes on {REDIS_HOSTS[0]}..{REDIS_HOSTS[-1]} (3 primaries + 3 replicas)")
            extra = redis_cluster.DURABLE_OPTIONS if self.durable else ()
            self.redis_nodes = redis_cluster.cluster_up(RUN / "redis", hosts=list(REDIS_HOSTS), replicas=1, extra=extra)
            return
        server, _ = redis_cluster.binaries()
        self.single_redis_port = redis_cluster.cluster_port(REDIS_HOSTS[0])
        why = "--single-redis" if self.support["redis_cluster"] else "the settings know no Redis Cluster"
        log(f"one Redis server on {REDIS_HOSTS[0]}:{self.single_redis_port} ({why})")
        (RUN / "redis").mkdir(parents=True, exist_ok=True)
        command = [server, "--bind", REDIS_HOSTS[0], "--port", str(self.single_redis_port),
                   "--save", "", "--appendonly", "no", "--dir", str(RUN / "redis")]  # fmt: skip
        self.spawn("redis", command, env=dict(os.environ))
        import redis

        client = redis.Redis(REDIS_HOSTS[0], self.single_redis_port, socket_timeout=1)
        if not wait_until(client.ping, 10):
            raise RuntimeError("redis-server did not start; see .run/cluster/logs/redis.log")

    def rabbit_start_node(self, node: RabbitNode) -> None:
        for part in ("mnesia", "log"):
            (node.directory / part).mkdir(parents=True, exist_ok=True)
        node.pidfile.unlink(missing_ok=True)
        self.rabbit_launched[node.name] = time.monotonic()
        self.spawn(f"rabbit-{node.name}", [str(RABBITMQ_BIN / "rabbitmq-server")], env=self.rabbit_env(node),
                   host="rabbit")  # fmt: skip

    def rabbit_env(self, node: RabbitNode) -> dict[str, str]:
        return rabbit_env(node)

    def rabbit_wait(self, node: RabbitNode, timeout: float = RABBIT_BOOT_SECONDS) -> None:
        """Until the node has booted (its pidfile appears, then its app runs), at most `timeout`
        seconds from its launch; logs how long it took, and on a timeout says how far it got."""
        launched = self.rabbit_launched.get(node.name, time.monotonic())
        left = max(5.0, launched + timeout - time.monotonic())
        try:
            self.rabbitmqctl(node, "wait", str(node.pidfile), "--timeout", str(int(left)), timeout=left + 15)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            raise RuntimeError(
                f"RabbitMQ node {node.nodename} had not booted {time.monotonic() - launched:.0f} s after its launch "
                f"(bound {timeout:.0f} s); its log's last line: {_last_line(node.directory / 'log')!r}; {error}"
            ) from error
        log(f"{node.nodename} booted {time.monotonic() - launched:.1f} s after its launch")

    def start_rabbitmq(self) -> None:
        log("RabbitMQ: 3 nodes, one cluster")
        RABBIT_HOME.mkdir(parents=True, exist_ok=True)
        cookie = RABBIT_HOME / ".erlang.cookie"
        cookie.write_text(secrets.token_hex(16).upper())
        cookie.chmod(0o400)
        for node in RABBIT_NODES:
            self.rabbit_start_node(node)
        for node in RABBIT_NODES:
            self.rabbit_wait(node)
        first = RABBIT_NODES[0]
        for node in RABBIT_NODES[1:]:
            self.rabbitmqctl(node, "stop_app")
            self.rabbitmqctl(node, "join_cluster", first.nodename)
            self.rabbitmqctl(node, "start_app")
        status = self.rabbitmqctl(first, "cluster_status", "--formatter", "json")
        running = sum(node.nodename in status for node in RABBIT_NODES)
        log(f"RabbitMQ cluster: {running}/3 nodes listed by {first.nodename}")

    def start_database(self) -> None:
        # Emptied: the wipe of RUN at start removes only the link to a directory outside it.
        directory = reachable_made(RUN / "postgres", empty=True)
        self.postgres = database.DatabaseCluster(self, self.database_addresses, self.etcd_addresses, directory)
        self.postgres.start(self.database)
        if not wait_until(self.leader_reached, 30, 0.5):
            raise RuntimeError("HAProxy does not lead to the PostgreSQL leader; see .run/cluster/logs/haproxy.log")
        log(f"migrating {self.database} through HAProxy's leader port (not through PgBouncer)")
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=self.harness_env(),
                       check=True)  # fmt: skip

    def leader_reached(self) -> bool:
        """Whether HAProxy's leader port leads to a PostgreSQL primary (raises while it leads nowhere)."""
        import psycopg2

        connection = psycopg2.connect(host=self.leader_host, port=LEADER_PORT, user="postgres", dbname=self.database,
                                      connect_timeout=2)  # fmt: skip
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT NOT pg_is_in_recovery()")
                return bool(cursor.fetchone()[0])
        finally:
            connection.close()

    def start_pgbouncer(self) -> None:
        # PgBouncer refuses to run as root: -u drops to the postgres system user.
        user = ["-u", "postgres"] if os.geteuid() == 0 else []
        self.spawn("pgbouncer", ["pgbouncer", *user, str(self.pgbouncer_config())], cwd=DEPLOY, host="pgbouncer")
        import psycopg2

        def ready() -> bool:
            address = {"host": self.pgbouncer_host, "port": PGBOUNCER_PORT}
            psycopg2.connect(**address, user="postgres", dbname=self.database).close()
            return True

        if not wait_until(ready, 15):
            raise RuntimeError("PgBouncer did not start; see .run/cluster/logs/pgbouncer.log")

    pgbouncer_host = "127.0.0.1"

    def pgbouncer_config(self) -> Path:
        return DEPLOY / "pgbouncer.ini"

    def haproxy_config(self) -> Path:
        return DEPLOY / "haproxy.cfg"

    def web_name(self, index: int) -> str:
        return f"web{index + 1}"

    def start_web(self, index: int, *, clock_offset: str | None = None) -> None:
        """The web server (granian, seckill_site.serve) on WEB_HOSTS[index]:8000; `clock_offset`
        ("+30s") runs it under libfaketime."""
        env = dict(self.env)
        if clock_offset:
            # Only the wall clock moves: the server's timers run on the monotonic one, and
            # sleeps bypass libfaketime (see realsleep.c).
            env.update(LD_PRELOAD=f"{realsleep_library()} {LIBFAKETIME}", FAKETIME=clock_offset,
                       FAKETIME_DONT_FAKE_MONOTONIC="1")  # fmt: skip
        env.update(WEB_CONCURRENCY=str(WEB_PROCESSES), WEB_THREADS=str(WEB_THREADS),
                   PROMETHEUS_MULTIPROC_DIR=str(RUN / f"prometheus-{self.web_name(index)}"))  # fmt: skip
        self.spawn(self.web_name(index), [sys.executable, "-m", "seckill_site.serve",
                                          "--bind", f"{self.web_hosts[index]}:{WEB_PORT}"], env=env,
                   host=self.web_name(index))  # fmt: skip

    def web_ready(self, index: int) -> bool:
        return requests.get(f"http://{self.web_hosts[index]}:{WEB_PORT}/user/me", timeout=2).status_code == 200

    def wait_web(self, indexes=None, timeout: float = 60) -> None:
        for index in indexes if indexes is not None else range(len(WEB_HOSTS)):
            if not wait_until(lambda index=index: self.web_ready(index), timeout):
                raise RuntimeError(f"{self.web_name(index)} did not answer; see .run/cluster/logs/")
        if not wait_until(lambda: requests.get(f"{self.balancer_url}/user/me", timeout=2).ok, 30):
            raise RuntimeError("HAProxy did not answer; see .run/cluster/logs/haproxy.log")

    def start_worker(self, name: str) -> None:
        self.spawn(name, worker_command(f"{name}@cluster", concurrency=WORKER_CONCURRENCY), host=name)

    def start_beat(self) -> None:
        self.spawn("beat", beat_command(RUN / "celerybeat-schedule"), host="beat")

    def start_balancer(self) -> None:
        self.spawn("haproxy", ["haproxy", "-db", "-f", str(self.haproxy_config())], host="haproxy")

    def edge_purgers(self) -> list[str] | None:
        """Who the edge takes purges from: None is deploy/edge-purgers.vcl's localhost, which
        the nodes' connections to 127.0.0.1 come from."""
        return None

    def start_edge(self) -> None:
        """Varnish with deploy/edge.vcl, its backend HAProxy's frontend; until it answers (a
        restart after a kill -9 tries again while the killed one's socket is let go)."""
        # The edge answers ticketed result polls from the deployment's Redis, as its settings say:
        # written at the first start, kept for a restart (Django's start-up would delay it).
        answers = None if self.edge_answers_written else self.node_env()
        edge_files(EDGE_DIR, self.balancer_url.removeprefix("http://"), purgers=self.edge_purgers(), answers=answers)
        self.edge_answers_written = True

        def answering() -> bool:
            process = self.processes.get("edge")
            if process is None or process.poll() is not None:
                self.spawn("edge", edge_command(EDGE_DIR, self.edge_listen), host="edge")
                return False
            return requests.get(f"{self.edge_url}/user/me", timeout=2).ok

        if not wait_until(answering, 30, 0.2):
            raise RuntimeError("the edge (varnishd) did not answer; see .run/cluster/logs/edge.log")

    def edge_kill(self) -> None:
        """kill -9 varnishd (manager and cache process), as a crashed host leaves it."""
        pid = self.processes["edge"].pid
        self.kill("edge")
        wait_until(lambda: not _group_alive(pid), 10, 0.05)

    def edge_counters(self) -> dict[str, int]:
        return edge_counters(EDGE_DIR) if self.with_edge else {}

    def balancer_command(self, command: str) -> str:
        """One command on HAProxy's runtime API (its admin socket)."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(RUN / "haproxy.sock"))
            sock.sendall(command.encode() + b"\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        return answer.decode()

    def balancer_field(self, server: str, field: str) -> str:
        header, *lines = requests.get(f"{self.stats_url}/;csv", timeout=2).text.splitlines()
        index = header.lstrip("# ").split(",").index(field)
        for line in lines:
            fields = line.split(",")
            if fields[0] == "web" and fields[1] == server:
                return fields[index]
        return ""

    def web_stop(self, index: int, *, drain: bool = True) -> float:
        """Stop a web node as a deploy does: out of the balancer's rotation, in-flight requests
        finished, then SIGTERM (granian finishes what it holds). Returns the drain seconds."""
        name = self.web_name(index)
        started = time.monotonic()
        if drain:
            self.balancer_command(f"set server web/{name} state drain")
            wait_until(lambda: self.balancer_field(name, "scur") == "0", 15, 0.05)
        drained = time.monotonic() - started
        self.halt(name)
        return drained

    def web_start(self, index: int, **options) -> None:
        """Start a web node and give it back to the balancer once its health check passes."""
        name = self.web_name(index)
        self.start_web(index, **options)
        self.wait_web([index])
        self.balancer_command(f"set server web/{name} state ready")
        wait_until(lambda: self.balancer_states().get(name) == "UP", 30)

    def balancer_states(self) -> dict[str, str]:
        """web1 -> UP / DOWN / ..., from HAProxy's stats CSV."""
        text = requests.get(f"{self.stats_url}/;csv", timeout=2).text
        states = {}
        for line in text.splitlines():
            fields = line.split(",")
            if len(fields) > 17 and fields[0] == "web" and fields[1].startswith("web"):
                states[fields[1]] = fields[17]
        return states

    # --- faults' helpers -----------------------------------------------------------------

    def rabbit_queue_leader(self, queue: str = "celery") -> tuple[RabbitNode | None, str]:
        """(the node leading quorum queue `queue`, the queue's type), asking any live node.
        A classic queue has no leader (its home node is not listed): (None, "classic")."""
        import json

        for node in RABBIT_NODES:
            if not _alive(_read_pid(node.pidfile) or -1):
                continue
            try:
                out = self.rabbitmqctl(node, "list_queues", "name", "type", "leader", "--formatter", "json", timeout=30)
                rows = json.loads(out[out.index("[") :])
            except (RuntimeError, subprocess.TimeoutExpired, ValueError):
                continue
            for row in rows:
                if row["name"] == queue:
                    leader = next((n for n in RABBIT_NODES if n.nodename == row.get("leader")), None)
                    return leader, row.get("type", "?")
        return None, "?"

    def rabbit_kill(self, node: RabbitNode) -> None:
        pid = _read_pid(node.pidfile)
        if pid:
            os.kill(pid, signal.SIGKILL)
        process = self.processes.pop(f"rabbit-{node.name}", None)
        if process is not None:
            process.wait(timeout=10)

    # --- teardown ------------------------------------------------------------------------

    def stop(self) -> None:
        order = ["edge", "haproxy", *(self.web_name(i) for i in range(len(WEB_HOSTS))), "beat", *WORKERS, "pgbouncer"]
        self.processes.halt_all([name for name in order if name in self.processes], timeout=15)
        if self.postgres is not None:
            self.postgres.stop()
        self.processes.halt_all(timeout=15)
        if self.redis_cluster_mode:
            redis_cluster.cluster_down(RUN / "redis")
        self.stop_leftovers()

    def stop_leftovers(self) -> None:
        """Processes of an earlier run that died without its teardown (kill -9 of the test):
        the process groups recorded under .run/cluster/pids/, and nothing else."""
        self.processes.stop_leftovers()
        directory = reachable(RUN / "postgres")
        database.DatabaseCluster(self, self.database_addresses, self.etcd_addresses, directory).stop_leftovers()
        for node in RABBIT_NODES:  # a restarted node's beam outlives a killed run's shell
            pid = _read_pid(node.pidfile)
            if pid and _alive(pid) and "beam" in Path(f"/proc/{pid}/comm").read_text():
                os.kill(pid, signal.SIGKILL)
        if (RUN / "redis" / "ports").exists():
            redis_cluster.cluster_down(RUN / "redis")
