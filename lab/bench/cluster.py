"""`make bench ARGS=--cluster`: the bench's deployment is the scale-out topology that
`make cluster-test` starts (lab/cluster/topology.py, docs/deploy.md), with every node on
lab.bench.settings (production's, plus the bench's URLs and its own queue):

    HAProxy       127.0.0.1:18000, the URL the load generator drives
    web1..web3    granian on 127.0.0.2-4 (seckill_site.serve; the topology's worker and thread counts)
    worker1/2     Celery prefork workers (no beat: see BenchTopology.start_beat)
    Redis Cluster 3 primaries + 3 replicas        RabbitMQ  3 nodes, the task queue a quorum queue
    PgBouncer     transaction mode, in front of the system PostgreSQL (database seckill_cluster)

The bench's own process (shoppers, sales, paths, the checks) runs with the topology's
environment before Django starts: the same Redis Cluster and broker, and PostgreSQL directly
as the cluster test's harness does (it counts orders and runs pgbench's hot row there).
"""

from __future__ import annotations

import json

import requests

from lab.cluster import topology as cluster
from lab.cluster.topology import RABBIT_NODES, WEB_HOSTS, WORKERS, Topology, log
from tools.deploy import cpu_snapshot
from tools.processes import tree

BENCH_SETTINGS = "lab.bench.settings"
SERVER = "granian"  # seckill_site.serve on every web node


def missing_packages() -> list[str]:
    """Debian packages the topology needs (none of the cluster test's clock-fault tools or edge)."""
    return cluster.missing_programs(clock_faults=False, edge=False)


class BenchTopology(Topology):
    """The cluster test's topology with lab.bench.settings on every web node and worker, driven
    at HAProxy: no edge, whose cache would answer the pages the bench measures the shop on."""

    with_edge = False

    def __init__(self) -> None:
        super().__init__(clock_faults=False)

    def node_env(self) -> dict[str, str]:
        env = super().node_env() | {"DJANGO_SETTINGS_MODULE": BENCH_SETTINGS}
        env.pop("EDGE_PURGE_URLS", None)  # no edge to purge
        return env

    def start_beat(self) -> None:
        """No beat, as in the single-node bench: its flush sweep would start writing the drain's
        reservations while the bench holds the writer paused to time it."""
        log("no Celery beat: its sweeps would write the drains' orders behind the bench's back")

    def bench_env(self) -> dict[str, str]:
        """The bench process's environment: the nodes' settings, PostgreSQL directly."""
        return self.harness_env()


class ClusterDeployment:
    """tools.deploy.Deployment's interface over a started BenchTopology."""

    web_fixed = (
        f"{len(WEB_HOSTS)} nodes x {SERVER} {cluster.WEB_PROCESSES} processes x {cluster.WEB_THREADS} threads"
        " behind HAProxy"
    )
    # The topology's database is dropped and its Redis Cluster and RabbitMQ are thrown away at
    # its next start: nothing to clean up (and after stop() there is no Redis to clean).
    throwaway = True
    # CPU groups of the topology's other pieces, reported beside the table's columns.
    extra_groups = ("haproxy", "pgbouncer", "rabbitmq")

    def __init__(self, topology: BenchTopology) -> None:
        self.topology = topology
        self.url = topology.url
        self.secret_key = topology.secret_key
        self.env = topology.bench_env()
        self.server = SERVER
        self.web_config = (cluster.WEB_PROCESSES, cluster.WEB_THREADS)
        self.celery_nodes = [f"{name}@cluster" for name in WORKERS]
        self.queue = ""
        self.stopped = False

    def describe(self) -> str:
        processes, threads = self.web_config
        return (
            f"cluster: HAProxy -> {len(WEB_HOSTS)} x {SERVER} {processes}x{threads},"
            f" {len(WORKERS)} x celery -c {cluster.WORKER_CONCURRENCY}, Redis Cluster 3+3,"
            f" RabbitMQ x{len(RABBIT_NODES)} (quorum queue), PgBouncer"
        )

    def migrate(self) -> None:
        """The topology migrated its fresh database directly before starting the nodes."""

    def start_web(self, *, workers: int, threads: int, server: str = SERVER) -> None:
        """The web nodes run already; this only checks that the balancer routes the bench's
        URLs (lab.bench.settings) to them."""
        answer = requests.get(f"{self.url}/bench/floor", timeout=10)
        if answer.status_code >= 500 or answer.status_code == 404:
            raise RuntimeError(f"the balancer answered {answer.status_code} to /bench/floor: not lab.bench.settings?")

    def start_celery(self, queue: str) -> None:
        """The topology's workers consume `queue` (their lab.bench.settings declares it); wait
        until every one of them answers a ping."""
        from celery_app import app

        self.queue = queue
        answered: set[str] = set()
        for _attempt in range(120):
            with app.connection_for_write() as connection:
                replies = app.control.ping(timeout=0.5, destination=self.celery_nodes, connection=connection)
            answered |= {node for reply in replies for node in reply}
            if answered >= set(self.celery_nodes):
                return
        raise RuntimeError(f"Celery workers {sorted(set(self.celery_nodes) - answered)} did not answer a ping")

    def _control(self, command: str) -> None:
        """One remote-control command to every worker, on a connection of its own: the pooled
        one sits idle for minutes between the bench's steps (and is inherited by the processes
        it forks to draw paths); the first cluster run's pause found it reset (ECONNRESET)."""
        from celery_app import app

        with app.connection_for_write() as connection:
            replies = getattr(app.control, command)(
                self.queue, destination=self.celery_nodes, reply=True, timeout=5, connection=connection
            )
        answered = {node for reply in replies or [] for node in reply}
        if answered < set(self.celery_nodes):
            raise RuntimeError(f"{command}: no answer from {sorted(set(self.celery_nodes) - answered)}")

    def celery_pause(self) -> None:
        """Every worker stops consuming the task queue; messages wait in the quorum queue."""
        self._control("cancel_consumer")

    def celery_resume(self) -> None:
        # By name: each worker declares the queue from its own settings (CELERY_TASK_QUEUES),
        # with the quorum queue's arguments, so RabbitMQ accepts the declaration.
        self._control("add_consumer")

    def broker_queue_bytes(self) -> int | None:
        """The task queue's message bytes (ready + unacknowledged) as RabbitMQ counts them, or
        None where it does not count them (RabbitMQ 3.10 leaves them blank for a quorum queue)."""
        for node in RABBIT_NODES:
            try:
                out = cluster.rabbitmqctl(node, "list_queues", "name", "message_bytes", "--formatter", "json",
                                          timeout=30)  # fmt: skip
                rows = json.loads(out[out.index("[") :])
            except (RuntimeError, ValueError, OSError):
                continue
            value = next((row["message_bytes"] for row in rows if row["name"] == self.queue), 0)
            return value if isinstance(value, int) else None
        return None

    def pids(self, name: str) -> list[int]:
        """Every process of one kind: "web" (the three nodes' granian trees), "celery" (the
        workers' trees), "haproxy", "pgbouncer", "rabbitmq" (the nodes' Erlang VMs)."""
        if name == "rabbitmq":
            return [pid for node in RABBIT_NODES for pid in tree(cluster._read_pid(node.pidfile))]
        names = {"web": [self.topology.web_name(i) for i in range(len(WEB_HOSTS))], "celery": list(WORKERS)}
        return [pid for kind in names.get(name, [name]) for pid in self.topology.processes.pids(kind)]

    def cpu_seconds(self) -> dict[int, tuple[str, float]]:
        kinds = ("web", "celery", *self.extra_groups)
        return cpu_snapshot({pid: kind for kind in kinds for pid in self.pids(kind)})

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.topology.stop()
