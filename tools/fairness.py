"""How fair is an opening? People against a scalper's scripts, first come, first served
against a draw (issue 23, docs/draw.md). `make fairness` runs it.

    python -m tools.fairness [--people 300] [--scripts 100] [--units 50] [--seeds 3]

Each run opens one sale in real time on real PostgreSQL and Redis and replays its opening
through the shop's own services, the ones the pages call (captcha answer and limits, one-time
path, the gate, the draw, the order writer):

- people (`--people`): see the sale open after a reaction time (log-normal, median 1.5 s),
  solve the captcha in 3 to 8 s, right 95 % of the time, then buy;
- scripts (`--scripts`, verified accounts of one scalper): react in 0 to 50 ms, "solve" in
  100 ms, right `--script-solve` of the time (0.61: the best attack `make captcha-attack`
  measured), retry at once within the shop's limits;
- `--units` units; the same population (same timings, per seed) once first come, first served
  and once with a draw of `--window` seconds.

It is bounded (each run ends by `--timeout` seconds after the opening) and loopback only. Not
over HTTP: the steps are the services the views call, with the captcha's picture not rendered
(its answer is set as captcha_create sets it). The order writer runs in this process every half
second instead of in a Celery worker; the draw is made by the first buy after the window, or at
the window's end as the ETA task would.

It prints, per mode, the units won by scripts and by people, the scripts' share of units
divided by their share of accounts (1.0 is fair), a person's chance to win, and the invariants:
exactly `--units` orders, none oversold, no shopper twice.
"""

from __future__ import annotations

import argparse
import heapq
import math
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.test")

MOBILE_PREFIX = "17"  # fairness shoppers: 17xxxxxxxxx


@dataclass
class Actor:
    user_id: int
    script: bool
    start: float  # seconds after the opening
    solve: tuple[float, float]  # seconds to solve a captcha, uniform in this range
    right: float  # chance of solving it right
    rng: random.Random
    path: str | None = None
    outcome: str = ""
    tries: int = 0


@dataclass(order=True)
class Event:
    at: float
    number: int
    actor: Actor = field(compare=False)
    step: str = field(compare=False)


def population(*, seed: int, people: list[int], scripts: list[int], solve_rate: float) -> list[Actor]:
    rng = random.Random(seed)
    actors = [
        Actor(u, False, rng.lognormvariate(math.log(1.5), 0.5), (3.0, 8.0), 0.95, random.Random(rng.random()))
        for u in people
    ]
    actors += [
        Actor(u, True, rng.uniform(0, 0.05), (0.1, 0.1), solve_rate, random.Random(rng.random())) for u in scripts
    ]
    return actors


def run(*, mode: str, actors: list[Actor], units: int, window: int, timeout: float) -> dict:
    from django.db import connection

    from goods.models import Admission, Goods, SaleDraw, SeckillGoods
    from goods.services import draw_seed_ensure, sale_open
    from orders.models import SeckillOrder
    from seckill.services import draw, gate, paths, writer
    from seckill_site import sale_state
    from seckill_site.codes import Code
    from seckill_site.redis import now as redis_now
    from users.models import User

    merchant = User.objects.get(mobile=f"{MOBILE_PREFIX}999999999")
    goods = Goods.objects.get_or_create(owner=merchant, name="fairness", defaults={"title": "-", "price": 1})[0]
    opening = 2.0  # seconds from now: time to set up
    from django.utils import timezone

    start = timezone.now() + timedelta(seconds=opening)
    sale = SeckillGoods.objects.create(
        goods=goods,
        seckill_price=1,
        stock_count=units,
        start_at=start,
        end_at=start + timedelta(minutes=10),
        admission=Admission.DRAW if mode == "draw" else Admission.FCFS,
        draw_window_s=window,
    )
    draw_seed_ensure(sale=sale)
    sale_open(sale_id=sale.pk)
    t0 = start.timestamp()
    heap: list[Event] = []
    lock = threading.Condition()
    counter = iter(range(10**9))

    def push(actor: Actor, at: float, step: str) -> None:
        with lock:
            heapq.heappush(heap, Event(at, next(counter), actor, step))
            lock.notify()

    def step(event: Event) -> None:
        actor = event.actor
        try:
            _step(actor, event.step)
        finally:
            connection.close()

    def _step(actor: Actor, name: str) -> None:
        now = redis_now() - t0
        if name == "captcha":
            try:
                paths.sale_limit_take(sale_id=sale.pk, user_id=actor.user_id, action="captcha")
            except paths.SaleLimitReached as error:
                push(actor, now + error.retry_after, "captcha")
                return
            answer = actor.rng.randint(10, 99)
            sale_state.captcha_answer_set(sale_id=sale.pk, user_id=actor.user_id, answer=answer)
            solved = answer if actor.rng.random() < actor.right else answer + 1
            actor.path = str(solved)  # the answer the shopper will type
            push(actor, now + actor.rng.uniform(*actor.solve), "path")
        elif name == "path":
            try:
                path = paths.path_create(user_id=actor.user_id, sale_id=sale.pk, answer=int(actor.path))
            except paths.SaleLimitReached as error:
                push(actor, now + error.retry_after, "path")
                return
            if path is None:
                push(actor, now, "captcha")  # wrong: a new captcha
                return
            actor.path = path
            push(actor, now, "buy")
        elif name == "buy":
            actor.tries += 1
            attempt = gate.seckill_attempt(user_id=actor.user_id, sale_id=sale.pk, path=actor.path)
            code = attempt.code
            if code in (Code.SUCCESS, Code.ENTERED, Code.SOLD_OUT, Code.ALREADY_BOUGHT, Code.ENDED):
                actor.outcome = code.name
            elif code in (Code.DRAW_PENDING, Code.NOT_STARTED, Code.SERVER_BUSY, Code.TRY_AGAIN):
                push(actor, now + 0.2, "buy")
            elif code is Code.TOO_MANY_REQUESTS:
                push(actor, now + max(attempt.retry_after, 1), "buy")
            else:  # the path was refused (expired, used): start over
                push(actor, now, "captcha")

    for actor in actors:
        push(actor, actor.start, "captcha")

    flushing = threading.Event()

    def flusher() -> None:
        while not flushing.is_set():
            writer.sale_flush(sale_id=sale.pk)
            connection.close()
            flushing.wait(0.5)

    def drawer() -> None:  # the ETA task's part: the draw at the window's end
        wait = t0 + window - redis_now()
        if not flushing.wait(max(0.0, wait) + 0.05):
            draw.sale_draw(sale_id=sale.pk)
            connection.close()

    from celery_app import app

    sent_before = app.send_task
    app.send_task = lambda name, kwargs=None, **options: None  # the flusher thread writes the orders
    threads = [threading.Thread(target=flusher, daemon=True)]
    if mode == "draw":
        threads.append(threading.Thread(target=drawer, daemon=True))
    for thread in threads:
        thread.start()
    pending = set()
    try:
        with ThreadPoolExecutor(16) as pool:
            while True:
                with lock:
                    pending = {f for f in pending if not f.done()}
                    if not heap and not pending:
                        break
                    if redis_now() - t0 > timeout:
                        break
                    wait = (heap[0].at - (redis_now() - t0)) if heap else 0.05
                    if wait > 0:
                        lock.wait(min(wait, 0.05))
                        continue
                    event = heapq.heappop(heap)
                pending.add(pool.submit(step, event))
        if mode == "draw":
            draw.sale_draw(sale_id=sale.pk)  # (a no-op when made)
        deadline = time.monotonic() + 30
        while sale_state.reservations_count([sale.pk])[sale.pk] and time.monotonic() < deadline:
            writer.sale_flush(sale_id=sale.pk)
    finally:
        flushing.set()
        for thread in threads:
            thread.join(5)
        app.send_task = sent_before
    winners = list(SeckillOrder.objects.filter(sale=sale, live=True).values_list("user_id", flat=True))
    scripts = {a.user_id for a in actors if a.script}
    sale.refresh_from_db()
    drawn = SaleDraw.objects.filter(sale=sale).values_list("entrant_ids", flat=True).first() or []
    return {
        "orders": len(winners),
        "scripts": sum(1 for u in winners if u in scripts),
        "people": sum(1 for u in winners if u not in scripts),
        "duplicates": len(winners) - len(set(winners)),
        "stock_left": sale.stock_count,
        "entrants": len(drawn),
        "script_entrants": sum(1 for u in drawn if u in scripts),
        "late": sum(1 for a in actors if not a.outcome),
    }


def shoppers(count: int, offset: int) -> list[int]:
    from django.contrib.auth.hashers import make_password

    from users.models import User

    mobiles = [f"{MOBILE_PREFIX}{offset + i:09d}" for i in range(count)]
    existing = dict(User.objects.filter(mobile__in=mobiles).values_list("mobile", "pk"))
    password = make_password(None)
    new = [User(mobile=m, nickname="fairness", password=password) for m in mobiles if m not in existing]
    for user in User.objects.bulk_create(new):
        existing[user.mobile] = user.pk
    return [existing[m] for m in mobiles]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=300)
    parser.add_argument("--scripts", type=int, default=100)
    parser.add_argument("--units", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--script-solve", type=float, default=0.61)
    parser.add_argument("--timeout", type=float, default=40.0)
    parser.add_argument("--modes", nargs="+", default=["fcfs", "draw"])
    options = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from users.models import User

    User.objects.get_or_create(mobile=f"{MOBILE_PREFIX}999999999", defaults={"nickname": "fairness merchant"})
    people = shoppers(options.people, 0)
    scripts = shoppers(options.scripts, 500_000_000)
    share = options.scripts / (options.scripts + options.people)
    print(
        f"{options.people} people, {options.scripts} scripts (share of accounts {share:.2f}), {options.units} units, "
        f"draw window {options.window} s, scripts solve {options.script_solve:.0%}, {options.seeds} seeds"
    )
    summary = {}
    for mode in options.modes:
        ratios, chances = [], []
        for seed in range(options.seeds):
            actors = population(seed=seed, people=people, scripts=scripts, solve_rate=options.script_solve)
            result = run(mode=mode, actors=actors, units=options.units, window=options.window, timeout=options.timeout)
            won = result["orders"] or 1
            ratio = (result["scripts"] / won) / share
            chance = result["people"] / options.people
            ratios.append(ratio)
            chances.append(chance)
            ok = result["orders"] == options.units and result["duplicates"] == 0 and result["stock_left"] == 0
            print(
                f"  {mode:4} seed {seed}: scripts {result['scripts']:3}, people {result['people']:3}, "
                f"ratio {ratio:.2f}, a person's chance {chance:.3f}"
                + (
                    f", entrants {result['entrants']} (scripts {result['script_entrants']}: a fair draw's ratio "
                    f"{result['script_entrants'] / max(1, result['entrants']) / share:.2f})"
                    if mode == "draw"
                    else ""
                )
                + f"; orders {result['orders']}, duplicates {result['duplicates']}, "
                f"stock left {result['stock_left']}, unfinished {result['late']}: {'ok' if ok else 'VIOLATED'}"
            )
        summary[mode] = (sum(ratios) / len(ratios), sum(chances) / len(chances))
    for mode, (ratio, chance) in summary.items():
        print(f"{mode:4}: scripts' share of units / share of accounts {ratio:.2f}; a person's chance {chance:.3f}")


if __name__ == "__main__":
    main()
