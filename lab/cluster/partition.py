"""`make partition-test`: the topology of `make cluster-test`, each simulated host in its own
network namespace on a bridge (lab/cluster/netns.py), and faults that cut or slow links.

    host        namespace     address            what runs there
    (machine)   -             10.231.0.1         the test itself
    web1..3     sk-web1..3    10.231.0.2-4       granian (seckill_site.serve) :8000
    worker1/2   sk-worker1/2  10.231.0.21-22     Celery workers
    beat        sk-beat       10.231.0.23        Celery beat
    r1..r6      sk-r1..r6     10.231.0.11-16     Redis Cluster nodes :7000 (3 primaries + 3 replicas)
    rabbit      sk-rabbit     10.231.0.30        the three RabbitMQ nodes :15701-15703 (one host:
                                                 their Erlang distribution runs over its loopback)
    pgbouncer   sk-pgbouncer  10.231.0.40        PgBouncer :16432
    haproxy     sk-haproxy    10.231.0.50        HAProxy :18000, stats :18001, the leader :15432
    edge        sk-edge       10.231.0.60        Varnish :18080 (deploy/edge.vcl) in front of
                                                 HAProxy, where shoppers go; purges taken from
                                                 web1..3, the workers and beat only
    pg1..3      sk-pg1..3     10.231.0.71-73     Patroni :8008, PostgreSQL :5432
    etcd1..3    sk-etcd1..3   10.231.0.81-83     etcd :2379 (Patroni's leader key)
    payments    sk-payments   10.231.0.90        the Alipay stand-in :18010 (lab/cluster/payments.py)

    python -m lab.cluster.partition [--scenarios a,b] [--shoppers N] [--stock N] [--durable|--no-durable]
    python -m lab.cluster.partition cleanup     # remove what a killed run left (namespaces, veths, bridge)

Needs root. Everything it creates is removed on exit, on Ctrl-C and on SIGTERM.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import requests

from lab.cluster import netns
from lab.cluster.partition_faults import DEFAULT_SCENARIOS, SCENARIOS, PartitionRun
from lab.cluster.payments import AlipayStandIn
from lab.cluster.scenario import run_scenarios
from lab.cluster.topology import (
    BALANCER_PORT,
    DEPLOY,
    EDGE_PORT,
    LEADER_PORT,
    PGBOUNCER_PORT,
    RABBIT_NODES,
    ROOT,
    RUN,
    STATS_PORT,
    WEB_PORT,
    RabbitNode,
    Topology,
    log,
    rabbit_env,
)
from lab.cluster.topology import DATABASE_HOSTS as TOPOLOGY_DATABASE_HOSTS
from tools import redis_cluster

RECORD = ROOT / ".run" / "partition-netns"  # outside RUN, which a start wipes
REDIS_PORT = 7000
HOSTS = {
    "web1": "10.231.0.2",
    "web2": "10.231.0.3",
    "web3": "10.231.0.4",
    **{f"r{i}": f"10.231.0.{10 + i}" for i in range(1, 7)},
    "worker1": "10.231.0.21",
    "worker2": "10.231.0.22",
    "beat": "10.231.0.23",
    "rabbit": "10.231.0.30",
    "pgbouncer": "10.231.0.40",
    "haproxy": "10.231.0.50",
    "edge": "10.231.0.60",
    **{f"pg{i}": f"10.231.0.{70 + i}" for i in range(1, 4)},
    **{f"etcd{i}": f"10.231.0.{80 + i}" for i in range(1, 4)},
    "payments": "10.231.0.90",
}
DATABASE_HOSTS = ("pg1", "pg2", "pg3")
ETCD_HOSTS = ("etcd1", "etcd2", "etcd3")
REDIS_HOSTS = tuple(f"r{i}" for i in range(1, 7))
PURGERS = ("web1", "web2", "web3", "worker1", "worker2", "beat")  # the hosts that run the shop's code


class PartitionTopology(Topology):
    def __init__(self, *, durable: bool = True) -> None:
        super().__init__(redis_cluster_mode=True, clock_faults=False)
        self.durable = durable  # False: today's configuration before this change, to measure it
        self.network = netns.Network(HOSTS, RECORD)
        self.web_hosts = tuple(HOSTS[f"web{i}"] for i in (1, 2, 3))
        self.balancer_url = f"http://{HOSTS['haproxy']}:{BALANCER_PORT}"
        self.stats_url = f"http://{HOSTS['haproxy']}:{STATS_PORT}"
        self.edge_listen = f"{HOSTS['edge']}:{EDGE_PORT}"
        self.pgbouncer_host = HOSTS["pgbouncer"]
        self.database_addresses = {name: HOSTS[name] for name in DATABASE_HOSTS}
        self.etcd_addresses = {name: HOSTS[name] for name in ETCD_HOSTS}
        self.leader_host = HOSTS["haproxy"]
        self.payments = AlipayStandIn(HOSTS["payments"], RUN / "alipay")
        self.database = "seckill_partition"
        self.redis_by_host: dict[str, redis_cluster.Node] = {}

    def host_prefix(self, host: str | None) -> list[str]:
        return self.network[host].prefix() if host else []

    def start(self) -> None:
        netns.require_root()
        self.network.create()
        log(f"network: bridge {netns.BRIDGE}, {len(HOSTS)} namespaces on {netns.SUBNET}.0/24")
        log(self.network.check_lookups("rabbit"))
        super().start()

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            removed = self.network.destroy() or []
            log(f"network removed: {len(removed)} namespaces/links")

    # --- configuration for these addresses --------------------------------------------------

    def env_overrides(self) -> dict[str, str]:
        rabbit = HOSTS["rabbit"]
        return {
            "DATABASE_URL": f"postgres://postgres@{HOSTS['pgbouncer']}:{PGBOUNCER_PORT}/{self.database}",
            "CELERY_BROKER_URL": ";".join(f"amqp://guest:guest@{rabbit}:{n.amqp_port}//" for n in RABBIT_NODES),
            "ALLOWED_HOSTS": ",".join([*self.web_hosts, HOSTS["haproxy"], HOSTS["edge"], "127.0.0.1", "localhost"]),
            "EDGE_PURGE_URLS": f"{self.edge_url}/",
            # The shipped durability (seckill_site.redis.durable): a promise waits for a replica.
            "REDIS_WAIT_REPLICAS": "1" if self.durable else "0",
        }

    def edge_purgers(self) -> list[str]:
        return [HOSTS[name] for name in PURGERS]

    def start_edge(self) -> None:
        super().start_edge()
        # The shoppers' side (this machine, 10.231.0.1) is not a purger: its PURGE is refused.
        answer = requests.request("PURGE", f"{self.edge_url}/", headers={"xkey-purge": "sales"}, timeout=5)
        if answer.status_code != 403:
            raise RuntimeError(f"the edge answered a shopper's PURGE {answer.status_code}, not 403")
        log(f"edge {self.edge_url}: purges from {', '.join(PURGERS)} only (a shopper's: 403)")

    def rabbit_env(self, node: RabbitNode) -> dict[str, str]:
        config = RUN / "rabbitmq" / "rabbitmq.conf"
        if not config.exists():
            config.parent.mkdir(parents=True, exist_ok=True)
            text = (DEPLOY / "rabbitmq.conf").read_text().replace("loopback_users.guest = true", "")
            # The workers reach the broker over the bridge, not loopback: guest may, in this test.
            config.write_text(text + "\nloopback_users = none\n")
        env = rabbit_env(node, bind="0.0.0.0")
        env["RABBITMQ_CONFIG_FILE"] = str(config)
        return env

    def pgbouncer_config(self) -> Path:
        config = RUN / "pgbouncer.ini"
        text = (DEPLOY / "pgbouncer.ini").read_text()
        text = text.replace(f"host=127.0.0.1 port={LEADER_PORT}", f"host={HOSTS['haproxy']} port={LEADER_PORT}")
        text = text.replace("seckill_cluster", self.database)
        text = text.replace("listen_addr = 127.0.0.1", f"listen_addr = {HOSTS['pgbouncer']}")
        text = text.replace("auth_file = userlist.txt", f"auth_file = {DEPLOY / 'userlist.txt'}")
        config.write_text(text)
        config.chmod(0o644)
        return config

    def haproxy_config(self) -> Path:
        config = RUN / "haproxy.cfg"
        text = (DEPLOY / "haproxy.cfg").read_text()
        text = text.replace(f"bind 127.0.0.1:{BALANCER_PORT}", f"bind {HOSTS['haproxy']}:{BALANCER_PORT}")
        text = text.replace(f"bind 127.0.0.1:{STATS_PORT}", f"bind {HOSTS['haproxy']}:{STATS_PORT}")
        text = text.replace(f"bind 127.0.0.1:{LEADER_PORT}", f"bind {HOSTS['haproxy']}:{LEADER_PORT}")
        for name, address in TOPOLOGY_DATABASE_HOSTS.items():
            text = text.replace(f"{address}:5432", f"{HOSTS[name]}:5432")
        for index, address in enumerate(("127.0.0.2", "127.0.0.3", "127.0.0.4")):
            text = text.replace(f"{address}:{WEB_PORT}", f"{self.web_hosts[index]}:{WEB_PORT}")
        config.write_text(text)
        return config

    # --- the pieces that differ ---------------------------------------------------------------

    def start_redis(self) -> None:
        server, cli = redis_cluster.binaries()
        directory = RUN / "redis"
        extra = redis_cluster.DURABLE_OPTIONS if self.durable else ()
        log(f"Redis Cluster: 6 nodes in r1..r6 ({'shipped: ' + ' '.join(extra) if extra else 'no min-replicas'})")
        nodes = []
        for name in REDIS_HOSTS:
            host = self.network[name]
            node = redis_cluster.Node(host.address, REDIS_PORT, directory / name, netns=host.netns)
            redis_cluster.node_start(node, server, extra=extra)
            nodes.append(node)
            self.redis_by_host[name] = node
        (directory / "ports").write_text("".join(f"{n.address}\n" for n in nodes))
        redis_cluster.cluster_create(nodes, cli, replicas=1)
        self.redis_nodes = nodes

    def redis_host(self, node: redis_cluster.Node) -> str:
        return next(name for name, n in self.redis_by_host.items() if n == node)


def cleanup() -> int:
    netns.require_root()
    removed = netns.leftovers_remove(RECORD)
    print("removed: " + (", ".join(removed) if removed else "nothing (no record of an earlier run)"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="test", choices=("test", "up", "cleanup"))
    parser.add_argument("--scenarios", default=",".join(DEFAULT_SCENARIOS), help=", ".join(SCENARIOS))
    parser.add_argument("--shoppers", type=int, default=1500)
    parser.add_argument("--stock", type=int, default=300)
    parser.add_argument(
        "--durable",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the shipped configuration (min-replicas-to-write, WAIT); --no-durable: before it",
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "cleanup":
            return cleanup()
        netns.require_root()
    except netns.NetnsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    chosen = [name for name in args.scenarios.split(",") if name]
    unknown = set(chosen) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")

    topology = PartitionTopology(durable=args.durable)
    log(f"durable={args.durable}")
    return run_scenarios(
        topology,
        lambda topology: PartitionRun(topology, args.shoppers, args.stock),
        chosen,
        SCENARIOS,
        up_only=args.command == "up",
        after_each=topology.network.heal,
        teardown="stopping the topology and removing the network",
    )


if __name__ == "__main__":
    sys.exit(main())
