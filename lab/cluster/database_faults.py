"""The database's faults, each during a buying burst, as rows of the cluster test's table.

    pg-leader-kill       1. kill -9 the leader's host (Patroni and PostgreSQL), then
                            started again on its disk: it rejoins as a standby
    pg-leader-cut        2. (make partition-test) the leader cut off from etcd and its standbys
                            while web nodes, workers, PgBouncer and HAProxy still reach it
    pg-sync-then-leader  3. the synchronous standby's host killed, then the leader's
    pg-switchover        4. `patronictl switchover` to the synchronous standby mid-sale
    pg-sync-slow         5. (make partition-test) +200 ms on the link between the leader and its
                            synchronous standby

Beside every burst a probe commits one row every 50 ms through HAProxy's leader port, the way
the shop reaches PostgreSQL, and remembers each commit that was acknowledged: once the cluster
has healed, every one of them must be on the leader ("acked lost" 0). The leader is watched
through Patroni's /primary every 0.2 s for the time the shop had no leader it could write to;
the buys answered meanwhile show whether the gate kept saying "queued" (it needs only Redis).
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field

from lab.cluster.database import POSTGRES_PORT, LeaderWatch
from lab.cluster.payments import Payers
from lab.cluster.scenario import BUSY, ClusterRow
from lab.cluster.topology import LEADER_PORT, log, wait_until

PROBE_TABLE = "failover_probe"
SPREAD_SECONDS = 40.0  # a burst longer than a failover (Patroni's ttl, 20 s)


@dataclass
class CommitProbe:
    """Commits a row into PROBE_TABLE every `interval` at host:port from a thread; `acked`
    holds (row id, when acknowledged) for each commit PostgreSQL confirmed. A failed commit
    is not acknowledged: the probe reconnects and goes on."""

    host: str
    port: int
    database: str
    interval: float = 0.05
    acked: list[tuple[int, float]] = field(default_factory=list)
    commit_seconds: list[float] = field(default_factory=list)  # each acknowledged commit's round trip
    failures: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def connect(self):
        import psycopg2

        # A leader that vanished must not hold the probe for the kernel's TCP timeout.
        return psycopg2.connect(host=self.host, port=self.port, user="postgres", dbname=self.database,
                                connect_timeout=2, keepalives_idle=2, keepalives_interval=1,
                                keepalives_count=2)  # fmt: skip

    def start(self) -> CommitProbe:
        connection = self.connect()
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE TABLE IF NOT EXISTS {PROBE_TABLE} (id bigserial PRIMARY KEY, "
                           "at timestamptz NOT NULL DEFAULT now(), via text NOT NULL)")  # fmt: skip
        connection.close()
        threading.Thread(target=self._run, daemon=True, name=f"commit-probe-{self.host}").start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        connection = None
        while not self._stop.is_set():
            try:
                if connection is None:
                    connection = self.connect()
                begun = time.monotonic()
                with connection.cursor() as cursor:
                    cursor.execute(f"INSERT INTO {PROBE_TABLE} (via) VALUES (%s) RETURNING id", [self.host])
                    row_id = cursor.fetchone()[0]
                connection.commit()
                self.acked.append((row_id, time.monotonic()))
                self.commit_seconds.append(time.monotonic() - begun)
            except Exception:  # noqa: BLE001 - any failure is a commit not acknowledged
                self.failures += 1
                if connection is not None:
                    try:
                        connection.close()
                    except Exception:  # noqa: BLE001, S110 - already broken
                        pass
                connection = None
                self._stop.wait(0.2)
                continue
            self._stop.wait(self.interval)

    def acked_between(self, start: float, end: float) -> int:
        return sum(start < at < end for _, at in self.acked)

    def longest_gap(self, since: float) -> float:
        """The longest time after `since` without an acknowledged commit."""
        moments = [since, *(at for _, at in self.acked if at > since)]
        return max((b - a for a, b in zip(moments, moments[1:], strict=False)), default=0.0)

    def lost(self, host: str, port: int) -> list[int]:
        """The acknowledged rows the leader at host:port does not hold."""
        connection = CommitProbe(host, port, self.database).connect()
        try:
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT id FROM {PROBE_TABLE} WHERE id = ANY(%s)", [[i for i, _ in self.acked]])
                found = {row[0] for row in cursor.fetchall()}
        finally:
            connection.close()
        return [row_id for row_id, _ in self.acked if row_id not in found]


def median_ms(probe: CommitProbe) -> float:
    return statistics.median(probe.commit_seconds) * 1000 if probe.commit_seconds else 0.0


def numbers_repeated() -> int:
    """Order numbers whose sequence part (orders.services.order_number_next) appears more than
    once among all orders: a sequence that went back after a failover would hand one out again
    under a later time prefix, which the unique index on the whole number would not catch."""
    from django.db.models import Count
    from django.db.models.functions import Right

    from orders.models import Order

    sequences = Order.objects.annotate(sequence=Right("order_no", 10)).values("sequence")
    return sequences.annotate(times=Count("id")).filter(times__gt=1).count()


class DatabaseFaults:
    """Mixed into ClusterRun: the rows for which the fault is PostgreSQL's."""

    def database_burst(self, name: str, during, *, direct_probe: bool = False,
                       spread: float = SPREAD_SECONDS) -> ClusterRow:  # fmt: skip
        """run_burst with the commit probe and the leader watch beside it; then, once the
        cluster has healed, the database's figures into the row. `during` sets self.db_fault
        to (when, the leader at the fault) as it strikes; `direct_probe` also commits at that
        leader's own address, past HAProxy (the commits a cut-off leader acknowledged).

        The shoppers arrive over `spread` seconds with a unit for most of them, so buys are
        still being answered while there is no leader: the gate must go on saying "queued"."""
        topology, cluster = self.topology, self.topology.postgres
        old = cluster.leader()
        # Without `during` the fault is the whole burst (a slow link set up before it).
        self.db_fault: tuple[float, str | None] = (time.monotonic(), None if during is None else old)
        self.db_cut_at: float | None = None  # when a cut was complete (pg-leader-cut)
        self.db_healed_at: float | None = None  # when it healed
        probe = CommitProbe(topology.leader_host, LEADER_PORT, topology.database).start()
        units = self.shopper_count * 3 // 4
        sale, shoppers = self.sale(units), self.shoppers(self.shopper_count)
        # One shopper in five pays as soon as the order is there, the database failing over or not.
        payers = self.payers = Payers(topology.url, sale.pk, topology.payments.url, threads=8, every=5).start()
        direct = (
            CommitProbe(cluster.hosts[old].address, POSTGRES_PORT, topology.database).start() if direct_probe else None
        )
        watch = cluster.watch()
        try:
            row = self.run_burst(name, during, sale=sale, shoppers=shoppers, stock=units, spread=spread)
        finally:
            for running in (probe, direct, watch):
                if running is not None:
                    running.stop()
            self.payers = None
            payment_figures = payers.finish(timeout=120)  # Alipay's notify retries included
        healed = cluster.wait_healthy(120)
        check = payers.check()
        row.paid, row.paid_lost, row.money_problems = len(payers.acknowledged()), len(check.lost), len(check.money)
        row.payment_5xx = payment_figures.server_errors_all()
        row.notes += f"; payments: {payment_figures.note()}"
        if check.lost or check.money:
            row.notes += f"; payments lost {check.lost[:5]}, money {[str(p) for p in check.money[:5]]}"
        self.database_figures(row, probe, direct, watch)
        members = ", ".join(f"{m['name']} {m['role']}" for m in cluster.members())
        row.notes += f"; after: {members}{'' if healed else ' (NOT healed within 120 s)'}"
        row.db_healed = healed
        return row

    def database_figures(self, row: ClusterRow, probe: CommitProbe, direct: CommitProbe | None,
                         watch: LeaderWatch) -> None:  # fmt: skip
        topology = self.topology
        at, old = self.db_fault
        row.acked = len(probe.acked) + (len(direct.acked) if direct else 0)
        lost = probe.lost(topology.leader_host, LEADER_PORT)
        if direct is not None:
            lost += direct.lost(topology.leader_host, LEADER_PORT)
            # A commit acknowledged after the heal waited for the standby and is on two hosts.
            cut = self.db_cut_at or at
            row.acked_after_cut = direct.acked_between(cut, self.db_healed_at or time.monotonic())
        row.acked_lost = len(lost)
        row.leaderless_seconds = round(watch.leaderless_seconds(at, old=old), 1)
        row.write_gap_seconds = round(probe.longest_gap(at), 1)
        until = at + max(row.leaderless_seconds, row.write_gap_seconds)
        during = [a for a in self.last_answers if a.started <= until and a.finished >= at]
        row.queued_in_fault = sum(a.code == 0 for a in during)
        row.busy_in_fault = sum(a.status == BUSY for a in during)
        row.numbers_repeated = numbers_repeated()
        rate = self.writer_rate(row)
        row.notes += (f"; leaders seen {watch.leaders_seen(at - 1)} (two at once {watch.both_primary_seconds():.1f}s)"
                      f"; probe {len(probe.acked)} commits acknowledged (median {median_ms(probe):.0f} ms), "
                      f"{probe.failures} failed"
                      f"{f', writer {rate:.0f} orders/s' if rate else ''}")  # fmt: skip

    def leader_wait(self, timeout: float = 30) -> bool:
        """Until HAProxy's leader port leads to the new leader (a check or two after Patroni's
        election): the test's own reads must not fail where the shop would retry."""
        return wait_until(self.topology.leader_reached, timeout, 0.2)

    def writer_rate(self, row: ClusterRow) -> float:
        """Orders per second the writer committed for the row's sale, first to last."""
        from django.db import connection
        from django.db.models import Max, Min

        from orders.models import Order

        connection.close()
        span = Order.objects.filter(sale_id=self.last_sale_id).aggregate(
            first=Min("created_at"), last=Max("created_at")
        )
        seconds = (span["last"] - span["first"]).total_seconds() if span["first"] else 0
        return (row.orders - 1) / seconds if seconds > 0 and row.orders > 1 else 0.0

    # --- the rows ---------------------------------------------------------------------------------

    def pg_leader_kill(self) -> ClusterRow:
        cluster, notes = self.topology.postgres, []

        def during(progress):
            self.at(progress, 0.3)
            old = cluster.leader()
            start = time.monotonic()
            self.db_fault = (start, old)
            log(f"kill -9 the PostgreSQL leader's host {old} (Patroni and PostgreSQL) at {progress():.0%}")
            cluster.host_kill(old)
            elected = wait_until(lambda: cluster.leader() not in (None, old), 90, 0.2)
            self.leader_wait()
            self.failover = time.monotonic() - start
            notes.append(f"{old} killed; {cluster.leader()} leader after {self.failover:.1f}s"
                         f"{'' if elected else ' (none within 90 s)'}")  # fmt: skip
            cluster.host_start(old)
            self.fault(start, time.monotonic())

        row = self.database_burst("pg 1. kill -9 leader", during)
        row.notes += "; " + "; ".join(notes)
        return row

    def pg_sync_then_leader(self) -> ClusterRow:
        cluster, notes = self.topology.postgres, []

        def during(progress):
            self.at(progress, 0.2)
            leader, sync = cluster.leader(), cluster.sync_standby()
            start = time.monotonic()
            self.db_fault = (start, leader)
            log(f"kill -9 the synchronous standby's host {sync} at {progress():.0%}")
            cluster.host_kill(sync)
            moved = wait_until(lambda: cluster.sync_standby() not in (None, sync), 30, 0.2)
            notes.append(f"sync {sync} killed; {cluster.sync_standby()} sync after {time.monotonic() - start:.1f}s"
                         f"{'' if moved else ' (none within 30 s)'}")  # fmt: skip
            killed = time.monotonic()
            log(f"then kill -9 the leader's host {leader}")
            cluster.host_kill(leader)
            elected = wait_until(lambda: cluster.leader() not in (None, leader), 90, 0.2)
            self.leader_wait()
            notes.append(f"leader {leader} killed; {cluster.leader()} leader after {time.monotonic() - killed:.1f}s"
                         f"{'' if elected else ' (none within 90 s)'}, alone: writes wait for a standby")  # fmt: skip
            cluster.host_start(sync)
            back = wait_until(lambda: cluster.sync_standby() == sync, 90, 0.2)
            self.failover = time.monotonic() - start
            notes.append(f"{sync} started again, sync standby {self.failover:.1f}s after the first kill"
                         f"{'' if back else ' (not within 90 s)'}")  # fmt: skip
            cluster.host_start(leader)
            self.fault(start, time.monotonic())

        row = self.database_burst("pg 3. sync standby, then leader", during)
        row.notes += "; " + "; ".join(notes)
        return row

    def pg_switchover(self) -> ClusterRow:
        cluster, notes = self.topology.postgres, []

        def during(progress):
            self.at(progress, 0.3)
            old, candidate = cluster.leader(), cluster.sync_standby()
            start = time.monotonic()
            self.db_fault = (start, old)
            log(f"patronictl switchover {old} -> {candidate} at {progress():.0%}")
            said = cluster.switchover(candidate)
            wait_until(lambda: cluster.leader() == candidate, 60, 0.2)
            self.leader_wait()
            self.failover = time.monotonic() - start
            notes.append(f"patronictl: {said!r}; {candidate} leader after {self.failover:.1f}s")
            self.fault(start, time.monotonic())

        row = self.database_burst("pg 4. switchover", during)
        row.notes += "; " + "; ".join(notes)
        return row


DATABASE_SCENARIOS = {
    "pg-leader-kill": DatabaseFaults.pg_leader_kill,
    "pg-sync-then-leader": DatabaseFaults.pg_sync_then_leader,
    "pg-switchover": DatabaseFaults.pg_switchover,
}
