"""The faults of `make partition-test` (lab/cluster/partition.py): links cut and slowed, each
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
    edge-restart     (make cluster-test's, only when named) the edge killed -9 and started again
    pg-*             PostgreSQL's rows (lab/cluster/database_faults.py): make cluster-test's three,
                     and two only namespaces can do: the leader cut off from etcd and its standbys
                     (pg-leader-cut), and a slow link to the synchronous standby (pg-sync-slow)
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from lab.cluster import netns
from lab.cluster.database_faults import DATABASE_SCENARIOS, DatabaseFaults
from lab.cluster.scenario import ClusterRow, ClusterRun, redis_primary_for
from lab.cluster.topology import RUN, WEB_PORT, log, wait_until
from tools import redis_cluster


def redis_role(node: redis_cluster.Node) -> str:
    import redis

    try:
        return redis.Redis(node.host, node.port, socket_timeout=1).info("replication")["role"]
    except redis.RedisError:
        return "?"


class PartitionRun(DatabaseFaults, ClusterRun):
    # --- helpers ---------------------------------------------------------------------------

    def sale_primary(self, sale) -> tuple[int, redis_cluster.Node, str]:
        from sales import sale_state

        slot = sale_state.slot(sale.pk)
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
        from users.sessions import auth_epoch, auth_epoch_slot

        topology, network = self.topology, self.topology.network
        durable = topology.durable
        # Units left for most of the burst: the cut must land while shoppers are still being
        # handed units (at 10 % of the burst), or there is nothing acknowledged to lose.
        stock = max(self.stock, self.shopper_count * 4 // 5)
        sale = self.sale(stock)
        slot, primary, primary_host = self.sale_primary(sale)
        others = [h for h in topology.redis_by_host if h != primary_host]
        # Revocation victims: shoppers whose auth epoch lives on the sale's primary.
        pool = self.shoppers(240)
        nodes = topology.redis_nodes
        victims = [s for s in pool if redis_primary_for(nodes, auth_epoch_slot(s.user_id)) == primary][:40]
        epochs_before = {s.user_id: auth_epoch(s.user_id) for s in victims}
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
        epochs_after = {user_id: auth_epoch(user_id) for user_id in revoked}
        row.revocations = len(revoked)
        row.revocations_undone = sum(epochs_after[u] == epochs_before[u] for u in revoked)
        notes.append(f"revocations answered {dict(sorted(revoke_statuses.items()))}, acknowledged {len(revoked)}, "
                     f"undone after the heal {row.revocations_undone}")  # fmt: skip
        row.notes += "; " + "; ".join(notes)
        return row

    # --- 2. a web node cut off from Redis, not from HAProxy ------------------------------------

    def direct_buy(self, index: int, shopper, sale_id: int) -> int:
        """One buy straight at web<index+1> (the path drawn by the test): its HTTP status."""
        from lab.shopper import path_solve

        path = path_solve(sale_id=sale_id, user_id=shopper.user_id) or "no-path"
        try:
            return requests.post(
                f"http://{self.topology.web_hosts[index]}:{WEB_PORT}/seckill/{path}/doSeckill",
                data={"goodsId": sale_id}, timeout=15,
                headers={"X-CSRFToken": shopper.csrf, "Accept": "application/json",
                         "Cookie": f"sessionid={shopper.session}; csrftoken={shopper.csrf}"},
            ).status_code  # fmt: skip
        except requests.RequestException:
            return 0

    def web_redis_cut(self) -> ClusterRow:
        topology, network = self.topology, self.topology.network
        sale = self.sale(self.stock)
        probes = self.shoppers(6)
        notes, direct = [], []

        def readyz() -> int:
            try:
                return requests.get(f"http://{topology.web_hosts[0]}:{WEB_PORT}/readyz", timeout=5).status_code
            except requests.RequestException:
                return 0

        def during(progress):
            self.at(progress, 0.2)
            start = time.monotonic()
            log("cut web1 from every Redis node (HAProxy still reaches it)")
            network.cut("web1", list(topology.redis_by_host))
            unready = wait_until(lambda: readyz() == 503, 30, 0.1)
            unready_at = time.monotonic() - start
            direct.extend(self.direct_buy(0, shopper, sale.pk) for shopper in probes)
            out = wait_until(lambda: topology.balancer_states().get("web1", "").startswith("DOWN"), 60, 0.1)
            out_at = time.monotonic() - start
            network.heal("web1")
            back = wait_until(lambda: topology.balancer_states().get("web1") == "UP", 60, 0.1)
            self.failover = out_at
            never = {True: "", False: " (never)"}
            notes.append(f"web1 /readyz 503 after {unready_at:.1f}s{never[unready]}, out of HAProxy after "
                         f"{out_at:.1f}s{never[out]}, back UP {time.monotonic() - start - out_at:.1f}s after "
                         f"the heal{never[back]}; direct buys at web1 while cut: {direct}")  # fmt: skip
            self.fault(start, time.monotonic())

        row = self.run_burst("2. web1 cut from Redis", during, sale=sale)
        row.inconsistent += sum(status != 503 for status in direct)  # must be 503: never 401, never 500
        row.notes += "; " + "; ".join(notes)
        return row

    # --- 3. a worker cut off from PostgreSQL (PgBouncer) mid-batch, then from RabbitMQ ---------

    def worker_cut(self) -> ClusterRow:
        network, notes = self.topology.network, []

        def during(progress):
            self.at(progress, 0.3)
            start = time.monotonic()
            log("cut worker1 from PgBouncer for 8 s")
            network.cut("worker1", ["pgbouncer"])
            time.sleep(8)
            network.heal("worker1")
            log("cut worker1 from RabbitMQ for 8 s")
            network.cut("worker1", ["rabbit"])
            time.sleep(8)
            network.heal("worker1")
            self.failover = time.monotonic() - start
            notes.append("worker1: 8 s without PgBouncer, then 8 s without RabbitMQ")
            self.fault(start, time.monotonic())

        row = self.run_burst("3. worker1 cut from DB, then broker", during)
        row.notes += "; " + "; ".join(notes)
        return row

    # --- 4. latency and loss on the link to the sale's primary ---------------------------------

    def redis_slow(self, latency_ms: int = 200, loss: float = 0.05) -> ClusterRow:
        topology, network = self.topology, self.topology.network
        sale = self.sale(self.stock)
        slot, primary, primary_host = self.sale_primary(sale)
        relay_port, control = 17000, RUN / "redis-relay.delay"
        control.write_text(str(latency_ms // 2))  # each way: the round trip gains latency_ms
        topology.spawn("redis-relay", [sys.executable, "-m", "lab.cluster.relay", f"{netns.GATEWAY}:{relay_port}",
                                       primary.address, "--control", str(control)])  # fmt: skip

        def listening() -> bool:
            socket.create_connection((netns.GATEWAY, relay_port), timeout=1).close()
            return True

        wait_until(listening, 10)
        clients = ["web1", "web2", "web3", "worker1", "worker2", "beat"]
        notes = [f"slot {slot} on {primary_host}: +{latency_ms} ms round trip (relay), {loss:.0%} loss each way"]

        def during(progress):
            self.at(progress, 0.1)
            start = time.monotonic()
            log(f"slow link to {primary_host}: +{latency_ms} ms, {loss:.0%} loss, from every web node and worker")
            for host in clients:
                network.redirect(host, primary.host, primary.port, (netns.GATEWAY, relay_port), loss=loss)
            self.at(progress, 0.999)
            for host in clients:
                network.heal(host)
            topology.halt("redis-relay")  # its connections reset: the clients reconnect directly
            self.failover = time.monotonic() - start
            self.fault(start, time.monotonic())

        row = self.run_burst(f"4. +{latency_ms} ms, {loss:.0%} loss to primary", during, sale=sale)
        row.notes += "; " + "; ".join(notes)
        return row

    # --- 5. the sale's replica lost, then its primary ------------------------------------------

    def replica_then_primary(self) -> ClusterRow:
        topology = self.topology
        sale = self.sale(self.stock)
        slot, primary, primary_host = self.sale_primary(sale)
        replica = self.replica_of(primary)
        notes = [f"slot {slot}: primary {primary_host}, replica {topology.redis_host(replica) if replica else '?'}"]
        server, _ = redis_cluster.binaries()
        extra = redis_cluster.DURABLE_OPTIONS if topology.durable else ()

        def during(progress):
            self.at(progress, 0.2)
            start = time.monotonic()
            log(f"kill -9 the replica {topology.redis_host(replica)}; 3 s later the primary {primary_host}")
            redis_cluster.node_stop(replica, kill=True)
            time.sleep(3)
            redis_cluster.node_stop(primary, kill=True)
            time.sleep(3)
            log("restart both (no persistence: they come back empty)")
            redis_cluster.node_start(primary, server, extra=extra)
            redis_cluster.node_start(replica, server, extra=extra)
            healed = wait_until(lambda: all(redis_cluster.cluster_ok(n) for n in topology.redis_nodes), 60, 0.2)
            self.failover = time.monotonic() - start
            late = "" if healed else " (not within 60 s)"
            notes.append(f"cluster ok again {self.failover:.1f}s after the first kill{late}")
            self.fault(start, time.monotonic())

        row = self.run_burst("5. replica lost, then primary", during, sale=sale)
        row.notes += "; " + "; ".join(notes)
        return row

    # --- 6. a web node SIGTERMed under load: drain ----------------------------------------------

    def web_drain(self) -> ClusterRow:
        topology, notes = self.topology, []
        shoppers = self.shoppers(max(self.shopper_count, 3000))  # a burst longer than the drain

        def readyz() -> int:
            try:
                return requests.get(f"http://{topology.web_hosts[1]}:{WEB_PORT}/readyz", timeout=5).status_code
            except requests.RequestException:
                return 0

        # Page loads through the balancer from the SIGTERM until granian has stopped: the burst is
        # shorter than the drain, these are not.
        pages: list[int] = []
        loading = [True]

        def load_pages(shopper) -> None:
            with requests.Session() as http:
                while loading[0]:
                    try:
                        status = http.get(f"{topology.url}/user/me", timeout=10,
                                          headers={"Cookie": f"sessionid={shopper.session}"}).status_code  # fmt: skip
                    except requests.RequestException:
                        status = 0
                    pages.append(status)

        def during(progress):
            self.at(progress, 0.1)
            readers = ThreadPoolExecutor(16)
            for shopper in shoppers[:16]:
                readers.submit(load_pages, shopper)
            start = time.monotonic()
            launcher = topology.processes["web2"]
            log("SIGTERM web2's launcher alone (as systemd's KillMode=mixed), no drain in HAProxy first")
            os.kill(launcher.pid, signal.SIGTERM)
            unready = wait_until(lambda: readyz() == 503, 10, 0.05)
            unready_at = time.monotonic() - start
            wait_until(lambda: topology.balancer_states().get("web2", "").startswith("DOWN"), 30, 0.1)
            out_at = time.monotonic() - start
            launcher.wait(timeout=60)
            stopped_at = time.monotonic() - start
            topology.processes.forget("web2")
            time.sleep(1)
            loading[0] = False
            readers.shutdown()
            statuses = {status: pages.count(status) for status in sorted(set(pages))}
            notes.append(f"web2 /readyz 503 after {unready_at:.2f}s{'' if unready else ' (never)'}, out of "
                         f"HAProxy after {out_at:.1f}s, granian stopped after {stopped_at:.1f}s; page loads "
                         f"through HAProxy meanwhile: {statuses}")  # fmt: skip
            broken[0] = sum(count for status, count in statuses.items() if status == 0 or status >= 500)
            self.failover = stopped_at
            self.fault(start, time.monotonic())
            topology.web_start(1)

        broken = [0]
        row = self.run_burst("6. web2 SIGTERM (drain)", during, shoppers=shoppers)
        row.other_5xx += broken[0]
        row.notes += "; " + "; ".join(notes)
        return row

    # --- 7. HAProxy restarted ---------------------------------------------------------------------

    def haproxy_restart(self) -> ClusterRow:
        topology, notes = self.topology, []

        def during(progress):
            self.at(progress, 0.3)
            start = time.monotonic()
            log("restart HAProxy (SIGTERM, then start it again)")
            topology.halt("haproxy")
            topology.start_balancer()
            up = wait_until(lambda: requests.get(f"{topology.url}/user/me", timeout=2).ok, 30, 0.05)
            self.failover = time.monotonic() - start
            notes.append(f"HAProxy answering again after {self.failover:.1f}s{'' if up else ' (not within 30 s)'}")
            self.fault(start, time.monotonic())

        row = self.run_burst("7. HAProxy restart", during)
        # One balancer: the requests in flight through it when it stops break, and nothing can
        # save them here (two balancers and a floating address can: docs/deploy.md).
        row.broken_allowed = True
        row.notes += "; " + "; ".join(notes)
        return row

    def haproxy_reload(self) -> ClusterRow:
        """The same balancer replaced by a new process as a reload does (-sf: the old one stops
        listening and finishes its connections): what a configuration change costs."""
        topology, notes = self.topology, []

        def during(progress):
            self.at(progress, 0.3)
            start = time.monotonic()
            old = topology.processes.forget("haproxy")
            log(f"reload HAProxy: a new process with -sf {old.pid}, taking its listeners over (-x)")
            topology.spawn("haproxy", ["haproxy", "-db", "-f", str(topology.haproxy_config()),
                                       "-x", str(RUN / "haproxy.sock"), "-sf", str(old.pid)],
                           host="haproxy")  # fmt: skip
            old.wait(timeout=60)
            self.failover = time.monotonic() - start
            notes.append(f"old HAProxy finished its connections and left after {self.failover:.1f}s")
            self.fault(start, time.monotonic())

        row = self.run_burst("7b. HAProxy reload (-sf)", during)
        row.notes += "; " + "; ".join(notes)
        return row

    # --- PostgreSQL: the leader on the minority side, and a slow synchronous standby ----------------

    def pg_leader_cut(self) -> ClusterRow:
        """The leader's host loses etcd and both standbys; web nodes, workers, PgBouncer and
        HAProxy still reach it. It must stop taking writes (its commits wait for a standby it
        cannot reach, then Patroni demotes it) while the majority elects a new leader."""
        topology, cluster, notes = self.topology, self.topology.postgres, []
        old = cluster.leader()

        def during(progress):
            self.at(progress, 0.3)
            start = time.monotonic()
            self.db_fault = (start, old)
            peers = [*(name for name in cluster.hosts if name != old), *cluster.etcd]
            log(f"cut the PostgreSQL leader {old} off from {peers} (etcd, replication) at {progress():.0%}")
            topology.network.cut(old, peers)
            # Installing the rules takes a moment, in which a commit may still reach a standby.
            self.db_cut_at = time.monotonic()
            elected = wait_until(lambda: cluster.leader() not in (None, old), 90, 0.2)
            self.leader_wait()
            self.failover = time.monotonic() - start
            demoted = wait_until(lambda: not database_answers_primary(cluster.hosts[old]), 60, 0.2)
            notes.append(f"{cluster.leader()} leader after {self.failover:.1f}s{'' if elected else ' (none in 90 s)'}; "
                         f"{old} {'stopped answering /primary' if demoted else 'still primary'} "
                         f"{time.monotonic() - start:.1f}s after the cut")  # fmt: skip
            topology.network.heal(old)
            self.db_healed_at = time.monotonic()
            self.fault(start, time.monotonic())

        row = self.database_burst(f"pg 2. leader {old} cut off", during, direct_probe=True)
        row.notes += "; " + "; ".join(notes)
        return row

    def pg_sync_slow(self, latency_ms: int = 200) -> ClusterRow:
        """+`latency_ms` on the leader's replication links to both standbys (a relay, as
        redis-slow's), so whichever Patroni makes synchronous answers a round trip later and
        every commit waits that much longer. What it costs the writer, as orders per second
        over a burst at full speed, against the same burst just before."""
        topology, cluster, network = self.topology, self.topology.postgres, self.topology.network
        stock = self.shopper_count * 3 // 4
        before = self.run_burst("pg 5a. full speed, no latency", stock=stock)
        baseline = self.writer_rate(before)
        leader = cluster.leader()
        standbys = [name for name in cluster.hosts if name != leader]
        relay_port, control = 17432, RUN / "pg-relay.delay"
        control.write_text(str(latency_ms // 2))  # each way: the round trip gains latency_ms
        address = cluster.hosts[leader].address
        topology.spawn("pg-relay", [sys.executable, "-m", "lab.cluster.relay", f"{netns.GATEWAY}:{relay_port}",
                                    f"{address}:5432", "--control", str(control)])  # fmt: skip
        wait_until(lambda: socket.create_connection((netns.GATEWAY, relay_port), timeout=1).close() is None, 10)
        log(f"+{latency_ms} ms between the leader {leader} and its standbys {standbys}")
        start = time.monotonic()
        for standby in standbys:
            network.redirect(standby, address, 5432, (netns.GATEWAY, relay_port))
        through = wait_until(lambda: sync_through(cluster.hosts[leader].address, netns.GATEWAY), 60, 0.5)
        settled = time.monotonic() - start
        try:
            row = self.database_burst(f"pg 5. +{latency_ms} ms to sync standby", None, spread=0.0)
        finally:
            for standby in standbys:
                network.heal(standby)
            topology.halt("pg-relay")  # its connections reset: the standbys reconnect directly
        rate, late = self.writer_rate(row), "" if through else " (NOT within 60 s)"
        row.notes += (f"; the standbys' replication to {leader} through a relay, +{latency_ms} ms; the synchronous "
                      f"one streaming through it {settled:.1f}s after the redirect{late}"
                      f"; writer {rate:.0f} orders/s against {baseline:.0f} in the same burst without it "
                      f"({before.orders} orders, {'ok' if before.ok else 'NOT ok'})")  # fmt: skip
        return row


def sync_through(leader: str, relay: str) -> bool:
    """Whether the leader's synchronous standby streams from the relay's address."""
    import psycopg2

    connection = psycopg2.connect(host=leader, port=5432, user="postgres", dbname="postgres", connect_timeout=2)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync' "
                           "AND state = 'streaming' AND client_addr = %s", [relay])  # fmt: skip
            return cursor.fetchone()[0] > 0
    finally:
        connection.close()


def database_answers_primary(host) -> bool:
    try:
        return requests.options(f"{host.rest}/primary", timeout=1).status_code == 200
    except requests.RequestException:
        return False


SCENARIOS = {
    "baseline": PartitionRun.baseline,
    "redis-minority": PartitionRun.redis_minority,
    "web-redis-cut": PartitionRun.web_redis_cut,
    "worker-cut": PartitionRun.worker_cut,
    "replica-primary": PartitionRun.replica_then_primary,
    "web-drain": PartitionRun.web_drain,
    "haproxy-restart": PartitionRun.haproxy_restart,
    "haproxy-reload": PartitionRun.haproxy_reload,
    "redis-slow": PartitionRun.redis_slow,
    "edge-restart": PartitionRun.edge_restart,  # make cluster-test's row, here on a host of its own
    **DATABASE_SCENARIOS,
    "pg-leader-cut": PartitionRun.pg_leader_cut,
    "pg-sync-slow": PartitionRun.pg_sync_slow,
}
DEFAULT_SCENARIOS = ("redis-minority", "web-redis-cut", "worker-cut", "replica-primary", "web-drain",
                     "haproxy-restart", "haproxy-reload", "redis-slow", "pg-leader-kill", "pg-leader-cut",
                     "pg-sync-then-leader", "pg-switchover", "pg-sync-slow")  # fmt: skip
