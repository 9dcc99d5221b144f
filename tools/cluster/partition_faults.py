"""The faults of `make partition-test` (tools/cluster/partition.py): links cut and slowed, each
during a buying burst through HAProxy, each a row of the cluster test's table.

    redis-minority   1. the sale's Redis primary cut off from its replicas and the other primaries
                        while web1 still reaches it (and only it), then healed; revocations sent
                        to web1 meanwhile
    web-redis-cut    2. web1 cut off from every Redis node, not from HAProxy
    worker-cut       3. worker1 cut off from PgBouncer mid-batch, then from RabbitMQ
    redis-slow       4. 200 ms latency and 5 % loss on the link to the sale's primary
    replica-primary  5. the sale's replica lost, then its primary
    web-drain        6. web2 SIGTERMed under load (no drain in HAProxy first): readiness turns 503
    haproxy-restart  7. HAProxy itself restarted
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import requests

from tools import redis_cluster
from tools.cluster.partition import REDIS_HOSTS
from tools.cluster.scenario import ClusterRow, ClusterRun, redis_primary_for
from tools.cluster.topology import WEB_PORT, log, wait_until


def slot_of(key: str) -> int:
    from redis.crc import key_slot

    return key_slot(key.encode())


def redis_role(node: redis_cluster.Node) -> str:
    import redis

    try:
        return redis.Redis(node.host, node.port, socket_timeout=1).info("replication")["role"]
    except redis.RedisError:
        return "?"


class PartitionRun(ClusterRun):
    # --- helpers ---------------------------------------------------------------------------

    def sale_primary(self, sale) -> tuple[int, redis_cluster.Node, str]:
        from seckill_site.sale_state import keys

        slot = slot_of(keys.stock(sale.pk))
        primary = redis_primary_for(self.topology.redis_nodes, slot)
        return slot, primary, self.topology.redis_host(primary)

    def replica_of(self, primary: redis_cluster.Node) -> redis_cluster.Node | None:
        import redis

        info = redis.Redis(primary.host, primary.port, socket_timeout=2).info("replication")
        for index in range(int(info.get("connected_slaves", 0))):
            replica = info[f"slave{index}"]
            for node in self.topology.redis_nodes:
                if node.host == replica["ip"] and node.port == int(replica["port"]):
                    return node
        return None

    def baseline(self) -> ClusterRow:
        return self.run_burst("no fault")

    # --- 1. the sale's primary on the minority side ------------------------------------------

    def redis_minority(self) -> ClusterRow:
        from seckill_site.redis import client, keys

        topology, network = self.topology, self.topology.network
        durable = topology.durable
        # Units left for most of the burst: the cut must land while shoppers are still being
        # handed units (at 10 % of the burst), or there is nothing acknowledged to lose.
        stock = max(self.stock, self.shopper_count * 4 // 5)
        sale = self.sale(stock)
        slot, primary, primary_host = self.sale_primary(sale)
        others = [h for h in REDIS_HOSTS if h != primary_host]
        # Revocation victims: shoppers whose auth epoch lives on the sale's primary.
        pool = self.shoppers(240)
        nodes = topology.redis_nodes
        victims = [s for s in pool if redis_primary_for(nodes, slot_of(keys.auth_epoch(s.user_id))) == primary][:40]
        epochs_before = {s.user_id: client().get(keys.auth_epoch(s.user_id)) for s in victims}
        revoked: list[int] = []  # victims web1 answered 200 for
        revoke_statuses: dict[int, int] = {}
        notes = [f"slot {slot} on {primary_host}; {len(victims)} revocations sent to web1 during the cut"]

        def revoke(shopper) -> None:
            try:
                response = requests.post(
                    f"http://{topology.web_hosts[0]}:{WEB_PORT}/api/v1/users/logout-everywhere",
                    headers={"X-CSRFToken": shopper.csrf, "Accept": "application/json",
                             "Cookie": f"sessionid={shopper.session}; csrftoken={shopper.csrf}"},
                    timeout=10,
                )  # fmt: skip
                status = response.status_code
            except requests.RequestException:
                status = 0
            revoke_statuses[status] = revoke_statuses.get(status, 0) + 1
            if status == 200:
                revoked.append(shopper.user_id)

        def during(progress):
            self.at(progress, 0.10)
            start = time.monotonic()
            log(f"cut {primary_host} (sale {sale.pk}'s primary) from all but web1; web1 from the other Redis nodes")
            network.isolate(primary_host, keep=["web1"])
            network.cut("web1", others)
            revokers = ThreadPoolExecutor(8)
            revocations = [revokers.submit(revoke, victim) for victim in victims]

            def promoted():
                owner = redis_primary_for([n for n in topology.redis_nodes if n != primary], slot)
                return owner is not None and owner != primary

            elected = wait_until(promoted, 40, 0.2)
            self.failover = time.monotonic() - start
            owner = redis_primary_for([n for n in topology.redis_nodes if n != primary], slot)
            notes.append(f"replica {topology.redis_host(owner) if owner else '?'} promoted after {self.failover:.1f}s"
                         + ("" if elected else " (none within 40 s)"))  # fmt: skip
            time.sleep(3)  # the minority side keeps running a while after the majority moved on
            for revocation in revocations:
                revocation.result()
            revokers.shutdown()
            network.heal(primary_host)
            network.heal("web1")
            healed = wait_until(lambda: redis_role(primary) == "slave" and redis_cluster.cluster_ok(primary), 40, 0.2)
            log(f"healed; {primary_host} {'rejoined as a replica' if healed else 'did not rejoin within 40 s'} "
                f"{time.monotonic() - start:.1f}s after the cut")  # fmt: skip
            self.fault(start, time.monotonic())

        row = self.run_burst(f"1. sale's primary on minority side{'' if durable else ' (before)'}", during, sale=sale,
                             failed_allowed=not durable, stock=stock)  # fmt: skip
        epochs_after = {user_id: client().get(keys.auth_epoch(user_id)) for user_id in revoked}
        row.revocations = len(revoked)
        row.revocations_undone = sum(epochs_after[u] == epochs_before[u] for u in revoked)
        notes.append(f"revocations answered {dict(sorted(revoke_statuses.items()))}, acknowledged {len(revoked)}, "
                     f"undone after the heal {row.revocations_undone}")  # fmt: skip
        row.notes += "; " + "; ".join(notes)
        return row


SCENARIOS = {
    "baseline": PartitionRun.baseline,
    "redis-minority": PartitionRun.redis_minority,
}
DEFAULT_SCENARIOS = ("redis-minority",)
