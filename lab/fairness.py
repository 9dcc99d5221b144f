"""How fair is an opening? People against a scalper's scripts, first come, first served
against a draw (issue 23, docs/draw.md). `make fairness` runs it.

    python -m lab.fairness [--people 300] [--scripts 100] [--units 50] [--seeds 3] [--in-process]

Each run opens one sale in real time on real PostgreSQL and Redis and replays its opening:

- people (`--people`): see the sale open after a reaction time (log-normal, median 1.5 s),
  solve the captcha in 3 to 8 s, right 95 % of the time, then buy;
- scripts (`--scripts`, verified accounts of one scalper): react in 0 to 50 ms, "solve" in
  100 ms, right `--script-solve` of the time (0.61: the best attack `make captcha-attack`
  measured), retry at once within the shop's limits;
- `--units` units; the same population (same timings, per seed) once first come, first served
  and once with a draw of `--window` seconds.

By default over real HTTP against a production-like deployment (lab/fairness_http.py: the web
server, a Celery worker and beat, as `make run` starts them, through tools/deploy.py): every
shopper is an HTTP client of the API (its token; captcha, one-time path, buy, then the result
polled), and the draw and the orders are the deployment's own. The captcha's picture is fetched;
its answer is read from Redis, as a test may, where a person would read the picture.

`--in-process` replays the opening through the shop's services in this process instead (the
services the views call, the captcha's picture not rendered; the order writer every half second
in this process, the draw by the first buy after the window or at the window's end as the ETA
task would): no web server, no worker.

Either way it is bounded (each run ends by `--timeout` seconds after the opening) and loopback
only. It prints, per mode and seed, the units won by scripts and by people, the scripts' share of
units divided by their share of accounts (1.0 is fair), a person's chance to win, and the
invariants, read from PostgreSQL: exactly `--units` orders, none oversold, no shopper twice; then
the averages over the seeds.

It exits non-zero, with a line saying why, when an invariant fails, when a draw seed took no
entries (its opening ran first come, first served: its figures measure no draw; the line gives
the buys' answers by code), or when the draw's ratio over the seeds is above DRAW_RATIO_TARGET.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from statistics import fmean

from lab.opening import MERCHANT_MOBILE, Actor, Replay, fairness_sale, outcome, population, shoppers

ROOT = Path(__file__).resolve().parent.parent
# The draw's target (docs/draw.md): the scripts' share of the units at most this many times their
# share of the accounts, on average over the seeds.
DRAW_RATIO_TARGET = 1.15


def run_in_process(*, mode: str, actors: list[Actor], units: int, window: int, timeout: float) -> dict:
    """The opening replayed through the shop's services in this process (no web server, no worker)."""
    from django.db import connection

    from celery_app import app
    from sales import sale_state
    from sales.codes import SaleCode
    from seckill.services import draw, gate, paths, writer
    from seckill_site.codes import Code
    from seckill_site.redis import now as redis_now

    sent_before = app.send_task
    app.send_task = lambda name, kwargs=None, **options: None  # this process draws and writes the orders
    try:
        sale = fairness_sale(mode=mode, units=units, window=window, opening=2.0)
    except BaseException:
        app.send_task = sent_before
        raise
    t0 = sale.start_at.timestamp()
    replay = Replay(t0=t0, timeout=timeout, clock=redis_now)
    push = replay.push
    buy_answers: Counter[str] = Counter()

    def step(actor: Actor, name: str) -> None:
        try:
            _step(actor, name)
        finally:
            connection.close()

    def _step(actor: Actor, name: str) -> None:
        now = replay.now()
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
            buy_answers[code.name] += 1
            if code in (
                Code.SUCCESS,
                SaleCode.ENTERED,
                SaleCode.SOLD_OUT,
                SaleCode.ENTRIES_CLOSED,
                SaleCode.ALREADY_BOUGHT,
                SaleCode.ENDED,
            ):
                actor.outcome = code.name
            elif code in (SaleCode.DRAW_PENDING, SaleCode.NOT_STARTED, Code.SERVER_BUSY, SaleCode.TRY_AGAIN):
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

    threads = [threading.Thread(target=flusher, daemon=True)]
    if mode == "draw":
        threads.append(threading.Thread(target=drawer, daemon=True))
    for thread in threads:
        thread.start()
    try:
        replay.run(step)
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
    return outcome(sale_id=sale.pk, actors=actors, units=units) | {"buy_answers": buy_answers}


def run_line(mode: str, seed: int, result: dict, *, share: float, people: int) -> str:
    won = result["orders"] or 1
    ratio = (result["scripts"] / won) / share
    chance = result["people"] / people
    line = (
        f"  {mode:4} seed {seed}: scripts {result['scripts']:3}, people {result['people']:3}, "
        f"ratio {ratio:.2f}, a person's chance {chance:.3f}"
    )
    if mode == "draw":
        fair = result["script_entrants"] / max(1, result["entrants"]) / share
        line += f", entrants {result['entrants']} (scripts {result['script_entrants']}: a fair draw's ratio {fair:.2f})"
    line += f"; orders {result['orders']}, duplicates {result['duplicates']}, stock left {result['stock_left']}"
    if result["oversold"]:
        line += ", OVERSOLD"
    if result["undrawn_orders"]:
        line += f", orders of shoppers not drawn {result['undrawn_orders']}"
    line += f", unfinished {result['late']}: {'ok' if result['ok'] else 'VIOLATED'}"
    return line


def failures(draws: list[tuple[int, dict]], *, share: float) -> list[str]:
    """Why the draw's figures cannot stand, one line each (none: they stand). `draws` are the
    draw mode's (seed, result) pairs. A seed whose draw took no entries ran first come, first
    served: its line says so with the buys' answers, which name the cause. The ratio over the
    seeds must be at most DRAW_RATIO_TARGET."""
    lines = []
    for seed, result in draws:
        if not result["entrants"]:
            answers = ", ".join(f"{name} {n}" for name, n in result.get("buy_answers", Counter()).most_common())
            lines.append(
                f"draw seed {seed} took no entries: its opening ran first come, first served, so it measures "
                f"no draw (sale {result['sale_id']}; the buys were answered: {answers or 'none'})"
            )
    if draws:
        ratio = fmean((result["scripts"] / (result["orders"] or 1)) / share for _, result in draws)
        if ratio > DRAW_RATIO_TARGET:
            lines.append(
                f"the draw's ratio over {len(draws)} seeds is {ratio:.2f}, above the target {DRAW_RATIO_TARGET:.2f}"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=300)
    parser.add_argument("--scripts", type=int, default=100)
    parser.add_argument("--units", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--script-solve", type=float, default=0.61)
    parser.add_argument("--timeout", type=float, default=40.0, help="seconds after the opening a run may take (40)")
    parser.add_argument("--modes", nargs="+", default=["fcfs", "draw"])
    parser.add_argument("--in-process", action="store_true", help="through the services in this process, not HTTP")
    parser.add_argument(
        "--clients",
        type=int,
        default=0,
        help="HTTP: the driver's threads, the most requests in flight (0: one per shopper, as each has a browser)",
    )
    parser.add_argument("--web-workers", type=int, default=2, help="HTTP: web server processes (2, WEB_CONCURRENCY)")
    parser.add_argument("--web-threads", type=int, default=8, help="HTTP: threads each (8, WEB_THREADS)")
    parser.add_argument("--celery-concurrency", type=int, default=2, help="HTTP: the worker's processes (2)")
    options = parser.parse_args()

    # This process makes the users, tokens and sales the deployment serves: the same database,
    # Redis (key prefix included) and task queue as the deployment's processes, which inherit
    # this environment (tools/deploy.py) under the production settings. The in-process replay
    # uses the same keys too: its sales stay in play in PostgreSQL after the run, and a later
    # deployment's reconciler that found them with no keys (the test settings' own prefix) took
    # them for sales Redis had lost, rebuilt them and drew them again.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.local")
    os.environ.setdefault("CELERY_TASK_DEFAULT_QUEUE", "seckill-fairness")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from users.models import User

    User.objects.get_or_create(mobile=MERCHANT_MOBILE, defaults={"nickname": "fairness merchant"})
    people = shoppers(options.people, 0)
    scripts = shoppers(options.scripts, 500_000_000)
    share = options.scripts / (options.scripts + options.people)
    how = "in process, through the services" if options.in_process else "over HTTP"
    print(
        f"{options.people} people, {options.scripts} scripts (share of accounts {share:.2f}), {options.units} units, "
        f"draw window {options.window} s, scripts solve {options.script_solve:.0%}, {options.seeds} seeds, {how}",
        flush=True,
    )
    opening = None
    if not options.in_process:
        from lab import fairness_http

        # A TERM (make's, a CI timeout; tools.with_services passes it on) stops the deployment
        # as Ctrl-C does, through the `finally` below: its processes run in sessions of their own.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        opening = fairness_http.Opening(
            log_dir=ROOT / ".run" / "fairness",
            web_workers=options.web_workers,
            web_threads=options.web_threads,
            celery_concurrency=options.celery_concurrency,
            # One thread per shopper by default: a smaller pool queues a shopper's request in this
            # process behind other shoppers' slow ones, a delay no real shopper has.
            clients=options.clients or options.people + options.scripts,
        )
    summary = {}
    status = 0
    draws: list[tuple[int, dict]] = []
    try:
        if opening is not None:
            opening.start(user_ids=[*people, *scripts])
            print(opening.describe(), flush=True)
        for mode in options.modes:
            ratios, chances, fair, entered = [], [], [], []
            for seed in range(options.seeds):
                actors = population(seed=seed, people=people, scripts=scripts, solve_rate=options.script_solve)
                arguments = dict(mode=mode, actors=actors, units=options.units, window=options.window)
                if opening is None:
                    result = run_in_process(**arguments, timeout=options.timeout)
                else:
                    result = opening.run(**arguments, timeout=options.timeout)
                ratios.append((result["scripts"] / (result["orders"] or 1)) / share)
                chances.append(result["people"] / options.people)
                if result["entrants"]:  # (a run nobody entered has no fair draw to compare with)
                    fair.append(result["script_entrants"] / result["entrants"] / share)
                entered.append(result["entrants"] - result["script_entrants"])
                status |= 0 if result["ok"] else 1
                if mode == "draw":
                    draws.append((seed, result))
                print(run_line(mode, seed, result, share=share, people=options.people), flush=True)
                if "context" in result:
                    print(f"         {result['context']}", flush=True)
            summary[mode] = (fmean(ratios), fmean(chances), fmean(fair) if fair else 0.0, fmean(entered))
    finally:
        if opening is not None:
            opening.stop()
    for mode, (ratio, chance, fair_ratio, people_in) in summary.items():
        line = f"{mode:4}: scripts' share of units / share of accounts {ratio:.2f}; a person's chance {chance:.3f}"
        if mode == "draw":  # what a fair draw of those who entered gives, and how many people were in
            line += f" (a fair draw of the entrants: {fair_ratio:.2f}; people in the window {people_in:.0f})"
            line += f"; target at most {DRAW_RATIO_TARGET:.2f}"
        print(line)
    for line in failures(draws, share=share):
        print(f"FAILED: {line}", flush=True)
        status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
