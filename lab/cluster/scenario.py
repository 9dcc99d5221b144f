"""The faults of `make cluster-test`, each during a real HTTP burst through the edge and HAProxy.

Each scenario puts a fresh sale on, logs its shoppers in, and fires them at the edge, which
passes the buys to the balancer (64 at a time; each draws its captcha and one-time path through
the shop's own services, and a shopper told "busy" retries with a fresh path, as the item page
does). Beside them a few shoppers read the item page, the list and the anonymous poll through
the edge (lab/cluster/pages.py). At a point of the burst one fault is injected; after the burst
the queue drains, the reconciler runs, and the invariants are checked with the single-node
fault suite's own checks (lab/faults.py): orders == units sold in Redis == stock taken in
PostgreSQL, no oversell, no duplicate, nothing stranded, every shopper told "queued" holding an
order. On top, for many nodes: no 5xx but the documented 503 "busy, try again" answers, and
those only inside the fault's window, whose length is measured; the same answers from every
node (sale window, sold out, rate limit); page views answered outside the fault's window, and
the sell-out's purge shown by the edge's item page.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

import requests

from lab.cluster.pages import Readers, purge_proof, summary
from lab.cluster.payments import Payers
from lab.cluster.switch import IN_WAITING_ROOM, Probers, settled, steady, switch_limit
from lab.cluster.topology import LOGS, RUN, WEB_HOSTS, WEB_PORT, Topology, log, wait_until
from lab.faults import Row, Run
from lab.shopper import RETRYABLE, Answer, path_solve, press
from tools import redis_cluster

ONE_TIME_PATH = re.compile(r"/seckill/[0-9a-f]+/")  # one per request: errors are grouped without it
BUSY = 503  # the documented answer while a dependency fails over: "the shop is busy, retry"
# What "queue everyone" promises an operator: every web node follows within a second of the
# command, its own time included.
SWITCH_PROMISE_SECONDS = 1.0
SOLD_OUT, NOT_STARTED = 500500, 500502


@dataclass
class ClusterRow(Row):
    busy: int = 0  # 503 answers (all inside the window, else they count in errors_outside_window)
    other_5xx: int = 0  # 5xx other than 503, or broken connections, anywhere
    window_seconds: float = 0.0  # from the fault to the last busy / failed answer it caused
    failover_seconds: float = 0.0  # from the fault until the system had healed (leader elected, node up ...)
    inconsistent: int = 0  # nodes that answered differently from the others
    failed_allowed: bool = False  # "queued" then -1 is a documented cost of this fault
    # Broken connections inside the fault window are this fault's documented cost (the one
    # balancer restarted: whatever was in flight through it breaks). Outside it they still fail
    # the row (5xx*), as do loss and every invariant.
    broken_allowed: bool = False
    revocations: int = 0  # revocations acknowledged during the fault (make partition-test)
    revocations_undone: int = 0  # of those, undone after it (the old auth epoch back)
    asked_login: int = 0  # 401 answers to logged-in shoppers ("log in"): never right
    # The readers' page views and polls through the edge (lab/cluster/pages.py).
    page_views: int = 0
    page_hits: int = 0  # answered from the edge's cache
    fault_views: int = 0  # in flight during the fault
    fault_hits: int = 0
    page_errors: int = 0  # not 200, anywhere
    page_errors_outside: int = 0  # not 200, outside the fault's window (+6 s): fails the row
    purge_seconds: float | None = None  # first "sold out" answer until the edge's page shows 0 left
    purge_missed: bool = False  # the edge held the page with units left and never showed the sell-out
    # A page fetched while the sell-out's purge went by is kept after it (docs/edge.md, known
    # gaps): allowed where the fault empties the edge's cache, which then refills at the sell-out.
    stale_allowed: bool = False
    # PostgreSQL's rows (lab/cluster/database_faults.py); None where the fault is not the database's.
    acked: int | None = None  # the probe's commits PostgreSQL acknowledged
    acked_lost: int = 0  # of those, missing on the leader once the cluster healed
    acked_after_cut: int = 0  # commits a leader cut off from its peers acknowledged after the cut
    leaderless_seconds: float = 0.0  # from the fault until a leader the shop could write to
    write_gap_seconds: float = 0.0  # the longest time without an acknowledged commit after the fault
    queued_in_fault: int = 0  # buys answered "queued" while there was no leader
    busy_in_fault: int = 0  # buys answered 503 meanwhile
    db_healed: bool = True  # leader, sync standby and standby all back after the row
    numbers_repeated: int = 0  # order numbers whose sequence value was handed out twice
    paid: int = 0  # payments the shop acknowledged (its notify answered "success", or the order said paid)
    paid_lost: int = 0  # of those, not a captured payment of a paid order once healed
    money_problems: int = 0  # money invariants broken over the sale's orders
    payment_5xx: int = 0  # the shop's 5xx other than 503 to the payers or the stand-in's notifies
    # The waiting room's "queue everyone" switch (lab/cluster/switch.py); None where not thrown.
    switch_on_seconds: float | None = None  # from the switch on until every node answers "in the waiting room"
    switch_off_seconds: float | None = None  # from the switch off until every node lets the pass holder in
    switch_limit: float = 0.0  # the most either may take as measured (the read interval + the slack)
    switch_failures: int = 0  # nodes that refused a pass before the switch, never took it, or refused after

    @property
    def ok(self) -> bool:
        failed = self.told_failed and not self.failed_allowed
        undone = self.revocations_undone and not self.failed_allowed
        broken = self.other_5xx and not self.broken_allowed
        edge = self.page_errors_outside or (self.purge_missed and not self.stale_allowed)
        database = (self.acked_lost or self.acked_after_cut or self.numbers_repeated or not self.db_healed
                    or self.paid_lost or self.money_problems or self.payment_5xx)  # fmt: skip
        switch = self.switch_failures or any(
            seconds is not None and seconds > self.switch_limit
            for seconds in (self.switch_on_seconds, self.switch_off_seconds)
        )
        return super().ok and not (
            broken or self.inconsistent or failed or undone or self.asked_login or edge or database or switch
        )


class ClusterRun(Run):
    def __init__(self, topology: Topology, shoppers: int, stock: int) -> None:
        super().__init__(topology, shoppers, stock)
        self.topology = topology
        self.fault_started: float | None = None  # the first fault of the current burst
        self.failover = 0.0  # set by a scenario's injector: seconds from its fault until healed
        self.burst_notes: list[str] = []
        self.readers: Readers | None = None  # the current burst's page readers, started with its buys
        self.payers: Payers | None = None  # the current burst's paying shoppers (database rows)

    # --- shared steps ------------------------------------------------------------------------

    def balancer_pid(self) -> int | None:
        process = self.topology.processes.get("haproxy")
        return process.pid if process is not None else None

    def node_requests(self) -> dict[str, int]:
        """web1 -> HTTP answers HAProxy has relayed from it so far."""
        header, *lines = requests.get(f"{self.topology.stats_url}/;csv", timeout=2).text.splitlines()
        columns = header.lstrip("# ").split(",")
        answers = [columns.index(f"hrsp_{kind}") for kind in ("1xx", "2xx", "3xx", "4xx", "5xx", "other")]
        counts = {}
        for line in lines:
            fields = line.split(",")
            if fields[0] == "web" and fields[1].startswith("web"):
                counts[fields[1]] = sum(int(fields[i] or 0) for i in answers)
        return counts

    def fault(self, start: float, end: float) -> None:
        super().fault(start, end)
        self.fault_started = start if self.fault_started is None else min(self.fault_started, start)

    def run_burst(self, name: str, during=None, *, sale=None, shoppers=None, failed_allowed: bool = False,
                  stock: int | None = None, spread: float = 0.0) -> ClusterRow:  # fmt: skip
        stock = stock or self.stock
        sale = sale or self.sale(stock)
        shoppers = shoppers or self.shoppers(self.shopper_count)
        before, balancer = self.node_requests(), self.balancer_pid()
        edge_before = self.topology.edge_counters()
        readers = None
        if self.topology.with_edge:
            # The item page fetched once before the burst, as the first visitor of the opening:
            # the edge holds it with every unit left until a purge (s-maxage 300 s).
            requests.get(f"{self.topology.url}/goods/detail/{sale.pk}", timeout=10)
            readers = self.readers = Readers(self.topology.url, sale.pk, [s.cookie for s in shoppers[-4:]])
        try:
            answers = self.burst(shoppers, sale.pk, during, spread=spread)
        finally:  # a crashed burst must not leave readers running
            self.readers = None
            if readers is not None:
                readers.stop()
        views = readers.until_stock_zero(5.0) if readers is not None else []
        burst_seconds = max(a.finished for a in answers) - min(a.started for a in answers)
        after = self.node_requests()
        edge_after = self.topology.edge_counters()
        windows = list(self.fault_windows)
        stats = requests.get(f"{self.topology.stats_url}/;csv", timeout=2).text
        (LOGS / f"haproxy-stats-{name.replace(' ', '_')}.csv").write_text(stats)
        # A reload starts a new HAProxy whose counters begin at 0: its counts are what each node
        # answered since the reload, a lower bound, not a difference with the old one's.
        restarted = self.balancer_pid() != balancer
        spread = {node: count - (0 if restarted else before.get(node, 0)) for node, count in after.items()}
        errors = [a for a in answers if a.status >= 500 or a.status == 0]
        fault_started, failover = self.fault_started, self.failover
        row = ClusterRow(**vars(self.settle_and_check(name, sale, answers, stock)))
        row.failed_allowed = failed_allowed
        row.busy = sum(a.status == BUSY for a in answers)
        row.asked_login = sum(a.status == 401 for a in answers)
        self.last_answers, self.last_sale_id = answers, sale.pk
        row.other_5xx = sum(a.status != BUSY for a in errors)
        if errors and fault_started is not None:
            row.window_seconds = round(max(a.finished for a in errors) - fault_started, 1)
        row.failover_seconds = round(failover, 1)
        if readers is not None:
            self.edge_figures(row, views, windows, answers, edge_before, edge_after)
        kinds = Counter((a.status, ONE_TIME_PATH.sub("/seckill/<path>/", a.msg)[:160]) for a in errors)
        row.notes += f"; burst {burst_seconds:.0f}s, {len(answers) / burst_seconds:.0f} req/s, per node {spread}"
        if restarted:
            row.notes += " (balancer counters restarted: counts since the reload)"
        if kinds:
            row.notes += f"; errors {dict(kinds)}"
        row.notes += "".join(f"; {note}" for note in self.burst_notes)
        self.burst_notes = []
        self.fault_started, self.failover = None, 0.0
        return row

    def edge_figures(self, row: ClusterRow, views, windows, answers, before: dict, after: dict) -> None:
        """The readers' views and the edge's own counters (varnishstat) into `row`."""
        pages = summary(views, windows)
        row.page_views, row.page_hits = pages.views, pages.hits
        row.fault_views, row.fault_hits = pages.fault_views, pages.fault_hits
        row.page_errors, row.page_errors_outside = sum(pages.errors.values()), pages.errors_outside
        sold_out = [a.finished for a in answers if a.code == SOLD_OUT]
        proof = purge_proof(views, min(sold_out) if sold_out else None)
        row.purge_seconds, row.purge_missed = proof.seconds, proof.missed
        cache = Counter(view.cache or str(view.status) for view in views)
        note = f"page views through the edge {dict(cache)}"
        if pages.errors:
            note += f", not 200: {dict(Counter({f'{kind} {status}': n for (kind, status), n in pages.errors.items()}))}"
        if proof.held is not None:
            shown = "never" if proof.seconds is None else f"{proof.seconds:+.2f}s after the first 'sold out' answer"
            note += f"; item page held with {proof.held} left, shows 0 left {shown}"
            if proof.fetched is not None:
                note += f" (the held copy was a miss from {proof.fetched[0]:+.2f}s to {proof.fetched[1]:+.2f}s)"
        restarted = after.get("MAIN.uptime", 0) < before.get("MAIN.uptime", 0)
        counts = {name.removeprefix("MAIN."): after.get(name, 0) - (0 if restarted else before.get(name, 0))
                  for name in ("MAIN.client_req", "MAIN.cache_hit", "MAIN.cache_miss", "MAIN.s_pass")}  # fmt: skip
        note += f"; varnishstat{' since its restart' if restarted else ''} {counts}"
        self.burst_notes.append(note)

    def burst(self, shoppers: list, sale_id: int, during=None, *, spread: float = 0.0) -> list[Answer]:
        """As the single-node suite's burst, but with every shopper's first path drawn before
        it (as `make bench` does, in two processes): the burst is then HTTP only, fast enough
        to be one. A shopper told "busy" retries as there, drawing a fresh path each time.
        With `spread`, the shoppers arrive evenly over that many seconds instead of at once
        (a sale still selling when a fault that lasts longer than a burst strikes)."""
        from lab.prepare import paths_create

        started = time.monotonic()
        first_paths = dict(zip((s.user_id for s in shoppers), paths_create(shoppers=shoppers, sale_id=sale_id),
                               strict=True))  # fmt: skip
        log(f"drew {len(first_paths)} captchas and one-time paths in {time.monotonic() - started:.1f}s")
        if self.readers is not None:
            self.readers.start()  # with the buys, not while the test draws their paths
        harness_misses = [0]
        begin = time.monotonic()
        arrival = {shopper.user_id: spread * index / len(shoppers) for index, shopper in enumerate(shoppers)}

        def one(shopper):
            time.sleep(max(0.0, begin + arrival[shopper.user_id] - time.monotonic()))
            answers = [press(self.topology.url, shopper, sale_id, first_paths[shopper.user_id])]
            self.follow(shopper, answers[-1])
            for attempt in range(5):
                if answers[-1].status not in RETRYABLE and answers[-1].status != 0:
                    break
                time.sleep(min(0.3 * 2**attempt, 3))
                try:
                    path = path_solve(sale_id=sale_id, user_id=shopper.user_id)
                except Exception:  # noqa: BLE001 - the harness's own Redis call, mid-failover
                    path = None
                if path is None:
                    # Not the shop's answer: the test could not draw the captcha itself. A
                    # shopper's page would have asked a node, which answers 503 meanwhile.
                    harness_misses[0] += 1
                    continue
                answers.append(press(self.topology.url, shopper, sale_id, path))
                self.follow(shopper, answers[-1])
            return answers

        answers = self.fire(shoppers, one, during)
        if harness_misses[0]:
            self.burst_notes.append(f"test's own captcha draws failed {harness_misses[0]}x (retried)")
        return answers

    def follow(self, shopper, answer: Answer) -> None:
        """Hand a buy's answer to the burst's payers, who pay what it queued."""
        if self.payers is not None:
            self.payers.answered(shopper, answer)

    def at(self, progress, mark: float) -> None:
        """Wait until `mark` of the burst's shoppers have their answers."""
        wait_until(lambda: progress() >= mark, 120, 0.01)

    # --- the scenarios ---------------------------------------------------------------------

    def web_restart(self) -> ClusterRow:
        topology = self.topology

        def during(progress):
            self.at(progress, 0.25)
            start = time.monotonic()
            log(f"stop web2 at {progress():.0%} of the burst: drain in HAProxy, then SIGTERM")
            drained = topology.web_stop(1)
            log(f"web2 drained in {drained:.1f}s and stopped; starting it again in 3 s")
            time.sleep(3)
            topology.web_start(1)
            self.failover = time.monotonic() - start
            log(f"web2 back in rotation {self.failover:.1f}s after its stop began")
            self.fault(start, time.monotonic())

        return self.run_burst("web node stop + start", during)

    def web_kill(self) -> ClusterRow:
        """The unplanned stop: SIGTERM with no drain first (a host shutting down under the balancer)."""
        topology = self.topology

        def during(progress):
            self.at(progress, 0.25)
            start = time.monotonic()
            log(f"SIGTERM web2 without draining it at {progress():.0%} of the burst")
            topology.web_stop(1, drain=False)
            wait_until(lambda: topology.balancer_states().get("web2", "").startswith("DOWN"), 10)
            log(f"HAProxy marked web2 down after {time.monotonic() - start:.1f}s; starting it again in 3 s")
            time.sleep(3)
            topology.web_start(1)
            self.failover = time.monotonic() - start
            self.fault(start, time.monotonic())

        return self.run_burst("web node SIGTERM, no drain", during)

    def worker_kill(self) -> ClusterRow:
        topology = self.topology

        def during(progress):
            self.at(progress, 0.3)
            start = time.monotonic()
            log(f"kill -9 worker1 (its whole pool) at {progress():.0%} of the burst; a supervisor restarts it")
            topology.kill("worker1")
            topology.start_worker("worker1")
            self.failover = time.monotonic() - start
            self.fault(start, time.monotonic())

        return self.run_burst("kill -9 worker node", during)

    def rabbit_leader(self) -> ClusterRow:
        topology = self.topology
        notes = []

        leader, kind = topology.rabbit_queue_leader()  # before the burst: rabbitmqctl takes seconds

        def during(progress):
            if leader is None:
                notes.append(f"no leader found for the {kind} queue 'celery': nothing killed")
                return
            self.at(progress, 0.25)
            start = time.monotonic()
            log(f"kill -9 RabbitMQ {leader.nodename}, leader of the {kind} queue 'celery', at {progress():.0%}")
            topology.rabbit_kill(leader)

            def new_leader():
                node, _ = topology.rabbit_queue_leader()
                return node is not None and node != leader

            elected = wait_until(new_leader, 60, 0.5)
            self.failover = time.monotonic() - start
            now_leader, _ = topology.rabbit_queue_leader()
            notes.append(f"{kind} queue; leader {leader.name} -> {now_leader.name if now_leader else '?'}"
                         f"{'' if elected else ' (no new leader within 60 s)'}")  # fmt: skip
            log(f"queue leader after {self.failover:.1f}s: {now_leader.nodename if now_leader else 'none'}")
            self.fault(start, time.monotonic())
            log(f"restarting {leader.nodename} (it rejoins the cluster)")
            topology.rabbit_start_node(leader)
            topology.rabbit_wait(leader)

        row = self.run_burst("kill -9 RabbitMQ queue leader", during)
        row.notes += "; " + "; ".join(notes)
        return row

    def redis_primary(self) -> ClusterRow:
        topology = self.topology
        if not topology.redis_cluster_mode:
            row = ClusterRow("kill -9 Redis primary")
            row.notes = "not run: the shop's settings on this checkout know no Redis Cluster (one Redis server)"
            return row
        sale = self.sale(self.stock)
        notes = []

        def during(progress):
            from sales import sale_state

            slot = sale_state.slot(sale.pk)
            primary = redis_primary_for(topology.redis_nodes, slot)
            self.at(progress, 0.25)
            start = time.monotonic()
            log(f"kill -9 Redis primary {primary.address} (slot {slot}, sale {sale.pk}) at {progress():.0%}")
            redis_cluster.node_stop(primary, kill=True)

            def promoted():
                owner = redis_primary_for([n for n in topology.redis_nodes if n != primary], slot)
                return owner is not None and owner != primary and redis_cluster.cluster_ok(owner)

            healed = wait_until(promoted, 60, 0.1)
            self.failover = time.monotonic() - start
            owner = redis_primary_for([n for n in topology.redis_nodes if n != primary], slot)
            notes.append(f"slot {slot}: {primary.address} -> {owner.address if owner else '?'}"
                         f"{'' if healed else ' (no promotion within 60 s)'}")  # fmt: skip
            log(f"replica {owner.address if owner else '?'} took over after {self.failover:.1f}s")
            self.fault(start, time.monotonic())
            server, _ = redis_cluster.binaries()
            redis_cluster.node_start(primary, server)  # comes back as a replica of the new primary
            log(f"{primary.address} restarted")

        # Async replication: a reservation the dead primary acknowledged but never shipped is
        # gone, so Redis may hand its unit out again; the database refuses the extra order and
        # that shopper is told -1. The reconciler then squares the counters.
        row = self.run_burst("kill -9 Redis primary", during, sale=sale, failed_allowed=True)
        row.notes += "; " + "; ".join(notes)
        return row

    def edge_restart(self) -> ClusterRow:
        """The edge killed -9 under load and started again, as its supervisor would. Shoppers
        reach the edge only: nothing answers them until it is back (the requests in flight
        through it break, new ones are refused), and it comes back empty, so its first page
        views are misses that HAProxy's nodes answer."""
        topology, notes = self.topology, []

        def during(progress):
            self.at(progress, 0.3)
            start = time.monotonic()
            log(f"kill -9 the edge (varnishd and its cache process) at {progress():.0%}; starting it again")
            topology.edge_kill()
            killed = time.monotonic() - start
            topology.start_edge()
            self.failover = time.monotonic() - start
            notes.append(f"edge gone after {killed:.1f}s, answering again after {self.failover:.1f}s")
            log(f"edge answering again {self.failover:.1f}s after the kill")
            self.fault(start, time.monotonic())

        row = self.run_burst("kill -9 edge", during)
        # One edge: what was in flight through it breaks, and until it is back nothing answers.
        # Outside that window every failure still fails the row, as do loss and the invariants.
        row.broken_allowed = True
        # It comes back empty and refills while the last units sell: an item page fetched as the
        # sell-out's purge goes by is kept with units left (docs/edge.md, known gaps).
        row.stale_allowed = True
        row.notes += "; " + "; ".join(notes)
        return row

    def clock_skew(self) -> ClusterRow:
        """web3 runs 30 s ahead. Before the sale starts, every node must say "not started"; a
        shopper's rate limit must count the same on every node; after the burst every node
        must say "sold out"."""
        topology = self.topology
        log("restart web3 with its clock 30 s ahead (libfaketime)")
        topology.halt("web3")
        topology.start_web(2, clock_offset="+30s")
        topology.wait_web([2])
        wait_until(lambda: topology.balancer_states().get("web3") == "UP", 30)
        skew = node_clock_offset(WEB_HOSTS[2])
        lead_time = 20
        sale = self.sale_starting_in(lead_time)
        shoppers = self.shoppers(self.shopper_count)
        inconsistent, notes = 0, [f"web3 Date header {skew:+.0f}s"]

        # 1. The sale window: ask each node directly, before the start.
        window_answers = {}
        for index, host in enumerate(WEB_HOSTS):
            shopper = shoppers[index]
            window_answers[f"web{index + 1}"] = node_buy(host, shopper, sale.pk)
        codes = set(window_answers.values())
        if codes != {NOT_STARTED}:
            inconsistent += sum(code != NOT_STARTED for code in window_answers.values())
            notes.append(f"before the start (t-{lead_time}s) the nodes said {window_answers}")
        else:
            notes.append("all nodes: not started")

        # 2. The rate limit (5 per 5 s per user), 9 requests spread over the nodes: first over
        # the two true-clock nodes (they must share one count), then over all three.
        for label, hosts, shopper in (("web1+web2", WEB_HOSTS[:2], shoppers[3]), ("all 3", WEB_HOSTS, shoppers[4])):
            statuses = rate_limit_probe(hosts, shopper, sale.pk)
            allowed = sum(status != 429 for status in statuses)
            if allowed != 5:
                inconsistent += 1
                notes.append(f"rate limit over {label} let {allowed}/9 through (5 expected): {statuses}")
            else:
                notes.append(f"rate limit over {label}: 5/9")

        wait_until(lambda: time.time() > sale.start_at.timestamp() + 0.5, lead_time + 5, 0.1)
        row = self.run_burst("web node clock +30 s", shoppers=shoppers[5:], sale=sale)

        # 3. Sold out, from every node.
        sold_out = {f"web{i + 1}": node_buy(host, shoppers[i], sale.pk) for i, host in enumerate(WEB_HOSTS)}
        if set(sold_out.values()) != {SOLD_OUT}:
            inconsistent += sum(code != SOLD_OUT for code in sold_out.values())
            notes.append(f"after the sell-out the nodes said {sold_out}")
        else:
            notes.append("all nodes: sold out")
        row.inconsistent = inconsistent
        row.notes += "; " + "; ".join(notes)
        log("restart web3 on the true clock")
        topology.halt("web3")
        topology.start_web(2)
        topology.wait_web([2])
        return row

    def queue_everyone(self) -> ClusterRow:
        """The waiting room's "queue everyone" switch, thrown by the operator's command while a
        pass holder asks every web node directly: how long until each node answers "in the
        waiting room", how long until each lets them in again once it is off, and a captcha from
        every node after it (docs/waiting-room.md)."""
        from io import StringIO

        from django.core.management import call_command

        from waitingroom.room import ROOM_SECONDS

        sale = self.sale(self.stock)
        holder = self.shoppers(1)[0]
        room_open(sale.pk)
        hosts = {f"web{i + 1}": host for i, host in enumerate(WEB_HOSTS)}
        cookie = f"{holder.cookie}; {pass_take(WEB_HOSTS[0], holder, sale.pk)}"
        notes, failures = [], 0

        def switch(on: str) -> tuple[float, float]:
            started = time.monotonic()
            call_command("waiting_room", "--sale", str(sale.pk), "--queue-all", on, stdout=StringIO())
            return started, time.monotonic() - started

        probers = Probers(hosts, lambda host: buy_refused(host, holder, cookie, sale.pk))
        try:
            time.sleep(1.0)  # every node asked a few times with the pass: it must let them through
            on_at, on_call = switch("on")
            wait_until(lambda: all(steady(p, on_at, 2 * ROOM_SECONDS, refused=True)
                                   for p in probers.probes.values()), 10, 0.1)  # fmt: skip
            off_at, off_call = switch("off")
            wait_until(lambda: all(steady(p, off_at, 2 * ROOM_SECONDS, refused=False)
                                   for p in probers.probes.values()), 10, 0.1)  # fmt: skip
        finally:
            probers.stop()
        on, off, asked = {}, {}, 0
        for node, probes in probers.probes.items():
            asked += len(probes)
            before = [p for p in probes if p.started < on_at]
            if not before or any(p.refused for p in before):
                failures += 1
                notes.append(f"{node} before the switch: {sum(p.refused for p in before)}/{len(before)} refused")
            on[node] = settled([p for p in probes if p.started < off_at], on_at, refused=True)
            off[node] = settled(probes, off_at, refused=False)
        # The promise is a second from the operator's command, its own time included; the
        # nodes' read interval, the command and the sampling gap must fit in it.
        expected = switch_limit(ROOM_SECONDS, max(on_call, off_call), [*on.values(), *off.values()])
        limit = SWITCH_PROMISE_SECONDS
        if expected > limit:
            notes.append(f"the read interval, command and sampling gap alone take {expected}s")
        failures += sum(s.seconds is None for s in (*on.values(), *off.values()))
        captchas = {node: node_captcha(host, holder, cookie, sale.pk) for node, host in hosts.items()}
        failures += sum(status != 200 for status in captchas.values())

        row = ClusterRow("waiting room: queue everyone", requests=asked)
        seconds = [s.seconds for s in on.values()]
        back = [s.seconds for s in off.values()]
        row.switch_on_seconds = None if None in seconds else max(s for s in seconds if s is not None)
        row.switch_off_seconds = None if None in back else max(s for s in back if s is not None)
        row.switch_limit, row.switch_failures = limit, failures
        notes.append("on: " + ", ".join(f"{n} {s.seconds}s (gap {s.gap}s)" for n, s in on.items()))
        notes.append("off: " + ", ".join(f"{n} {s.seconds}s (gap {s.gap}s)" for n, s in off.items()))
        notes.append(f"expected at most {expected}s; the command took {on_call:.3f}s on, {off_call:.3f}s off; "
                     f"{asked} requests straight at the "
                     f"nodes; captcha after: {captchas}")  # fmt: skip
        row.notes = "; ".join(notes)
        return row

    def sale_starting_in(self, seconds: float):
        from django.utils import timezone

        from sales.models import Sale
        from sales.services import sale_update

        # Through the service that moves a sale's window in Redis too: sale_open loads a sale
        # only once, so moving the start with the ORM and opening again left the loaded window
        # (started a moment ago) and every node sold before the "start".
        sale = self.sale(self.stock)
        sale_update(sale=sale, changes={"start_at": timezone.now() + timedelta(seconds=seconds)})
        return Sale.objects.get(pk=sale.pk)


SCENARIOS = {
    "web-restart": ClusterRun.web_restart,
    "web-sigterm": ClusterRun.web_kill,
    "worker-kill": ClusterRun.worker_kill,
    "rabbit-leader": ClusterRun.rabbit_leader,
    "redis-primary": ClusterRun.redis_primary,
    "clock-skew": ClusterRun.clock_skew,
    "edge-restart": ClusterRun.edge_restart,
    "queue-everyone": ClusterRun.queue_everyone,
}
# web-sigterm is left out by default: it measures what an undrained stop costs (broken
# connections, docs/topology.md), which no deploy should do.
DEFAULT_SCENARIOS = ("web-restart", "worker-kill", "rabbit-leader", "redis-primary", "clock-skew", "edge-restart",
                     "queue-everyone")  # fmt: skip


def redis_primary_for(nodes: list[redis_cluster.Node], slot: int) -> redis_cluster.Node | None:
    """The node that a live node of `nodes` names as the primary serving `slot`."""
    import redis

    by_address = {node.address: node for node in nodes}
    for node in nodes:
        try:
            text = redis.Redis(node.host, node.port, socket_timeout=1).execute_command("CLUSTER", "NODES")
        except redis.RedisError:
            continue
        text = text.decode() if isinstance(text, bytes) else text
        if isinstance(text, dict):  # redis-py parsed it already
            for address, info in text.items():
                if "master" in info["flags"] and "fail" not in info["flags"]:
                    for span in info["slots"]:
                        if int(span[0]) <= slot <= int(span[-1]):
                            return by_address.get(address.split("@")[0])
            return None
        for line in text.splitlines():
            fields = line.split()
            if "master" not in fields[2] or "fail" in fields[2]:
                continue
            for span in fields[8:]:
                if span.startswith("["):
                    continue
                low, _, high = span.partition("-")
                if int(low) <= slot <= int(high or low):
                    return by_address.get(fields[1].split("@")[0])
        return None
    return None


def room_open(sale_id: int) -> None:
    """Put a waiting room on the sale that lets everyone in line in at once, with passes of 10 min."""
    from waitingroom.models import WaitingRoom
    from waitingroom.services import room_settings_save

    room = WaitingRoom(sale_id=sale_id, enabled=True, admit_per_minute=60_000, pass_minutes=10, brake=False)
    room_settings_save(room=room, actor_name="lab")


def pass_take(host: str, shopper, sale_id: int) -> str:
    """The shopper's pass for the sale, as the waiting page's poll gets it: "name=value"."""
    for _attempt in range(20):
        headers = {"Cookie": shopper.cookie, "Accept": "application/json"}
        response = requests.get(f"http://{host}:{WEB_PORT}/waiting-room/{sale_id}/status", headers=headers, timeout=10)
        name = f"seckill_pass_{sale_id}"
        if name in response.cookies:
            return f"{name}={response.cookies[name]}"
        time.sleep(0.25)
    raise RuntimeError(f"no pass for sale {sale_id}: {response.status_code} {response.text[:200]}")


def buy_refused(host: str, shopper, cookie: str, sale_id: int) -> bool:
    """A buy at one node with the pass and a made-up path (nothing sold): True when the node
    answered "in the waiting room", False for any other answer (let through to the path check)."""
    response = requests.post(
        f"http://{host}:{WEB_PORT}/seckill/{'0' * 32}/doSeckill",
        data={"goodsId": sale_id},
        headers={"X-CSRFToken": shopper.csrf, "Cookie": cookie, "Accept": "application/json"},
        timeout=5,
    )
    try:
        return response.json().get("code") == IN_WAITING_ROOM
    except ValueError:
        return False


def node_captcha(host: str, shopper, cookie: str, sale_id: int) -> int:
    """A captcha from one node with the pass: 200 and a PNG when it lets the holder in."""
    response = requests.get(f"http://{host}:{WEB_PORT}/seckill/verifyCode", params={"goodsId": sale_id},
                            headers={"Cookie": cookie}, timeout=10)  # fmt: skip
    return response.status_code if response.headers.get("Content-Type", "").startswith("image/png") else -1


def node_clock_offset(host: str) -> float:
    from email.utils import parsedate_to_datetime

    response = requests.get(f"http://{host}:{WEB_PORT}/user/me", timeout=5)
    return parsedate_to_datetime(response.headers["Date"]).timestamp() - time.time()


def rate_limit_probe(hosts, shopper, sale_id: int, period: int = 5) -> list[int]:
    """9 path requests (a wrong captcha answer: the limit counts it first, then 400) sent
    round-robin to `hosts`, all inside one of django-ratelimit's windows for this user, which
    start where (t - crc32(user id) % period) % period == 0 on a true clock."""
    import zlib

    offset = zlib.crc32(str(shopper.user_id).encode()) % period
    phase = (time.time() - offset) % period
    if phase > period - 2:
        time.sleep(period - phase + 0.1)
    statuses = []
    for attempt in range(9):
        host = hosts[attempt % len(hosts)]
        response = requests.get(f"http://{host}:{WEB_PORT}/seckill/path",
                                params={"goodsId": sale_id, "verifyCode": "x"},
                                headers={"Cookie": f"sessionid={shopper.session}"}, timeout=10)  # fmt: skip
        statuses.append(response.status_code)
    return statuses


def node_buy(host: str, shopper, sale_id: int) -> int | None:
    """One buy straight at one node (not through the balancer): the envelope's code."""
    path = path_solve(sale_id=sale_id, user_id=shopper.user_id)
    response = requests.post(
        f"http://{host}:{WEB_PORT}/seckill/{path}/doSeckill",
        data={"goodsId": sale_id},
        headers={"X-CSRFToken": shopper.csrf, "Cookie": f"sessionid={shopper.session}; csrftoken={shopper.csrf}"},
        timeout=10,
    )
    try:
        return response.json().get("code")
    except ValueError:
        return response.status_code


def database_cells(row: ClusterRow) -> tuple[str, ...]:
    """The table's PostgreSQL columns: "-" where the row's fault is not the database's."""
    if row.acked is None:
        return ("-",) * 5
    cut = f" (+{row.acked_after_cut} cut)" if row.acked_after_cut else ""
    errors = f" (5xx {row.payment_5xx})" if row.payment_5xx else ""
    return (f"{row.acked_lost}/{row.acked}{cut}", f"{row.paid_lost}/{row.paid}{errors}", str(row.leaderless_seconds),
            str(row.write_gap_seconds), f"{row.queued_in_fault}/{row.busy_in_fault}")  # fmt: skip


def switch_cell(row: ClusterRow) -> str:
    """The table's "queue everyone" column: "-" where the row threw no switch."""
    if row.switch_on_seconds is None and row.switch_off_seconds is None and not row.switch_failures:
        return "-"
    on, off = (("never" if s is None else f"{s:.2f}") for s in (row.switch_on_seconds, row.switch_off_seconds))
    failures = f" !{row.switch_failures}" if row.switch_failures else ""
    return f"{on}/{off} (<= {row.switch_limit:.2f}){failures}"


def table(rows: list[ClusterRow]) -> str:
    head = ("scenario", "requests", "queued", "orders", "oversold", "dup", "stranded", "lost", "queued→-1",
            "503", "other 5xx", "5xx*", "401", "nodes differ", "revoked undone", "failover s", "window s", "drain s",
            "edge hits", "in fault", "page err*", "purge s", "queue-all on/off s", "acked lost", "paid lost",
            "no leader s", "no writes s",
            "queued/503 w/o leader", "ok")  # fmt: skip
    lines = [head] + [
        (r.scenario, r.requests, r.accepted, r.orders, r.oversold, r.duplicates, r.stranded, r.lost,
         f"{r.told_failed}{' (allowed)' if r.failed_allowed and r.told_failed else ''}", r.busy,
         f"{r.other_5xx}{' (allowed)' if r.broken_allowed and r.other_5xx else ''}",
         r.errors_outside_window, r.asked_login, r.inconsistent,
         f"{r.revocations_undone}/{r.revocations}" if r.revocations else "-", r.failover_seconds, r.window_seconds,
         r.recovery_seconds,
         f"{r.page_hits}/{r.page_views}" if r.page_views else "-",
         f"{r.fault_hits}/{r.fault_views}" if r.fault_views else "-", r.page_errors_outside,
         f"NO{' (allowed)' if r.stale_allowed else ''}" if r.purge_missed
         else "-" if r.purge_seconds is None else f"{r.purge_seconds:+.2f}",
         switch_cell(r), *database_cells(r),
         ("yes" if r.ok else "NO") if r.requests > 0 else "not run" if r.requests == 0 else "CRASHED")
        for r in rows
    ]  # fmt: skip
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    text = [" | ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)) for line in lines]
    text.insert(1, "-+-".join("-" * w for w in widths))
    text += [
        "queued: shoppers told 'queued'; lost: told 'queued', then neither an order nor -1; queued→-1: told 'queued',",
        "then -1; 503: 'busy, retry' answers; other 5xx: any other 5xx or broken connection; 5xx*: 5xx or broken",
        "connections outside the fault window (+6 s); 401: 'log in' answers to logged-in shoppers; failover s:",
        "fault until healed (node down+up, leader elected, replica promoted); window s: fault until the last 5xx it",
        "caused; drain s: fault end until no reservation left; revoked undone: revocations acknowledged during the",
        "fault whose old auth epoch was back after it; edge hits: page views and anonymous polls answered from",
        "the edge's cache / all; in fault: the same, in flight during the fault; page err*: page views not",
        "answered 200 outside the fault window (+6 s); purge s: first 'sold out' answer until the edge's item",
        "page shows 0 left (NO: the page it held with units left never gave way); queue-all on/off s: from the",
        "operator's 'queue everyone' on (off) until every web node, asked directly by a pass holder, answers 'in",
        "the waiting room' (lets them in), the slowest node (<= the promise: a second from the command, its own",
        "time included; !N: nodes that failed); acked lost: commits PostgreSQL",
        "acknowledged (a probe beside the burst, through HAProxy's leader port) missing once healed / all (+N cut:",
        "acknowledged by a leader cut off from its peers after the cut); paid lost: payments the shop acknowledged",
        "(Alipay's notify answered 'success', or the order said paid) that are not a paid order's captured",
        "payment once healed / all (5xx N: the shop's 5xx other than 503 to payers and notifies, failing the",
        "row); no leader s: fault until a new leader",
        "answered Patroni's /primary; no writes s: the longest time without an acknowledged commit; queued/503",
        "w/o leader: buys answered 'queued' / 503 meanwhile.",
    ]
    text += [f"  {r.scenario}: {r.notes}" for r in rows]
    return "\n".join(text)


def as_json(rows: list[ClusterRow]) -> str:
    return json.dumps([dict(vars(r), ok=r.ok) for r in rows], indent=1)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run_scenarios(topology, make_run, chosen: list[str], scenarios: dict, *, up_only: bool,
                  after_each=None, teardown: str = "stopping the topology") -> int:  # fmt: skip
    """Start `topology`, then run each chosen scenario (a crash is a row, never the end of the
    run), print the table and tear everything down, also on Ctrl-C and SIGTERM; the exit status.
    `make_run(topology)` builds the scenarios' runner once Django is set up; `after_each()` runs
    after every scenario, crashed or not (the partition test heals its network there)."""
    signal.signal(signal.SIGTERM, _interrupt)  # teardown on SIGTERM as on Ctrl-C
    signal.signal(signal.SIGHUP, _interrupt)
    started = time.monotonic()
    rows: list[ClusterRow] = []
    try:
        topology.start()
        if up_only:
            log("running; Ctrl-C stops everything")
            while True:
                time.sleep(3600)
        os.environ.update(topology.harness_env())
        import django

        django.setup()
        run = make_run(topology)
        for name in chosen:
            log(f"scenario {name}: {run.shopper_count} shoppers, {run.stock} units")
            try:
                row = scenarios[name](run)
            except Exception as error:  # noqa: BLE001 - one broken scenario must not hide the others
                log(f"  scenario {name} crashed: {error!r}")
                traceback.print_exc()
                row = ClusterRow(name, requests=-1, notes=f"crashed: {error!r}"[:300])
            finally:
                if after_each is not None:
                    after_each()
            log(f"  -> {'ok' if row.ok else 'VIOLATION'}: {row}")
            rows.append(row)
    except KeyboardInterrupt:
        log("interrupted; tearing down")
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the teardown short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        log(teardown)
        topology.stop()
        if rows:
            (RUN / "results.json").write_text(as_json(rows))
            print(table(rows), flush=True)
            log(f"{time.monotonic() - started:.0f}s in all; logs in {RUN / 'logs'}")
    failed = [row.scenario for row in rows if row.requests < 0 or (row.requests > 0 and not row.ok)]
    print(f"{len(rows) - len(failed)} passed, {len(failed)} failed", flush=True)
    return 1 if failed or len(rows) < len(chosen) else 0
