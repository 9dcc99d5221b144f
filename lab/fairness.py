"""How fair is an opening? People against a scalper's scripts, first come, first served
against a draw (issue 23, docs/draw.md), and behind a waiting room. `make fairness` runs it.

    python -m lab.fairness [--people 300] [--scripts 100] [--units 50] [--seeds 3] [--in-process]
                           [--modes fcfs draw room] [--room-units 600] [--room-pace 400] ...

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

The unpaid opening (`--modes unpaid`, docs/draw.md "Measuring fairness") is the draw's opening
where every third winner in the ranking lets the pay window pass (its order's deadline is moved
into the past and the shop's unpaid expiry closes it) while the scripts keep trying to buy. Over
HTTP (lab/fairness_unpaid.py) the expiry is the deployment's (beat's sweep), the other winners
and every entrant a unit is offered to pay through the API at the Alipay stand-in, and those
not drawn ask for their result until the returned units are offered and paid; in process the
driver closes the orders and nobody pays. It checks that each unit that came back was offered
to the next entrant of the ranking recomputed from the draw's seed and entrants, that no
shopper outside those turns holds one, and exactly the stock sold, once.

The room's opening (`--modes room`, docs/waiting-room-fairness.md) puts a first come, first
served sale behind its waiting room against a scalper with ten times the accounts
(`--room-scripts`): `--prequeue-share` of the arrivals come in the pre-queue (opening
`--room-lead` seconds before the start), the rest after the start as above; each shopper asks
their place until the room lets them in (`--room-pace` a minute), then solves and buys as above.
It reports people's share of the units divided by their share of the arrivals, and fails the
run when that is not within ROOM_TOLERANCE of 1.

Either way it is bounded (each run ends by `--timeout` seconds after the opening: 40, the unpaid
opening 60) and loopback only. It prints, per mode and seed, the units won by scripts and by
people, the scripts' share of units divided by their share of accounts (1.0 is fair), a
person's chance to win, and the invariants, read from PostgreSQL: exactly `--units` orders,
none oversold, no shopper twice; then the averages over the seeds.

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
from datetime import timedelta
from pathlib import Path
from statistics import fmean

from lab.opening import (
    MERCHANT_MOBILE,
    Actor,
    Replay,
    RoomPlan,
    fairness_sale,
    outcome,
    population,
    reoffer_outcome,
    room_open,
    room_outcome,
    room_population,
    share_ratio,
    shoppers,
)

ROOT = Path(__file__).resolve().parent.parent
# The draw's target (docs/draw.md): the scripts' share of the units at most this many times their
# share of the accounts, on average over the seeds.
DRAW_RATIO_TARGET = 1.15
# The room's opening (docs/waiting-room-fairness.md): people's share of the units divided by
# their share of the arrivals must be within this of 1, |ratio - 1| <= ROOM_TOLERANCE, pooled
# over the seeds.
ROOM_TOLERANCE = 0.15
# Seconds after the opening a run may take: the unpaid opening goes on past the draw while the
# winners pay, the walkers' units come back and the entrants they are offered to pay.
TIMEOUT_S, UNPAID_TIMEOUT_S = 40.0, 60.0


def run_in_process(
    *, mode: str, actors: list[Actor], units: int, window: int, timeout: float, room: RoomPlan | None = None
) -> dict:
    """The opening replayed through the shop's services in this process (no web server, no
    worker). The room's opening (`room`): each shopper first asks their place
    (waitingroom.queue.place, which joins them) every `poll` seconds until admitted, takes
    the pass, then goes on as without a room."""
    from django.db import connection

    from celery_app import app
    from sales import sale_state
    from sales.codes import SaleCode
    from seckill.services import draw, gate, paths, writer
    from seckill_site.codes import Code
    from seckill_site.redis import now as redis_now

    sent_before = app.send_task
    app.send_task = lambda name, kwargs=None, **options: None  # this process draws and writes the orders
    drawn_mode = mode in ("draw", "unpaid")
    settled = threading.Event()  # the unpaid opening: the returned units were offered
    returned: list[int] = []
    try:
        sale = fairness_sale(mode=mode, units=units, window=window, opening=room.lead if room else 2.0)
        if room is not None:
            room_open(sale=sale, opens_before=room.lead, admit_per_minute=room.admit_per_minute)
    except BaseException:
        app.send_task = sent_before
        raise
    t0 = sale.start_at.timestamp()
    replay = Replay(t0=t0, timeout=timeout, clock=redis_now)
    push = replay.push
    buy_answers: Counter[str] = Counter()
    after_return: Counter[str] = Counter()  # the scripts' buys once units came back

    def step(actor: Actor, name: str) -> None:
        try:
            _step(actor, name)
        finally:
            connection.close()

    def _step(actor: Actor, name: str) -> None:
        now = replay.now()
        if name == "wait":
            from waitingroom import queue
            from waitingroom.answers import refresh_seconds

            where = queue.place(sale.pk, actor.user_id)
            actor.arrived |= where.state in (queue.PREQUEUE, queue.WAITING, queue.ADMITTED)
            if where.state == queue.ADMITTED:
                queue.pass_issue(sale.pk, actor.user_id)
                push(actor, now, "captcha")
            elif where.state in (queue.SOLD_OUT, queue.ENDED):
                actor.outcome = where.state
            else:  # a person's page asks again when the answer says, a script every second
                push(actor, now + (actor.poll if actor.script else refresh_seconds(where)), "wait")
        elif name == "captcha":
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
            if returned and actor.script:
                after_return[code.name] += 1
            if code in (
                Code.SUCCESS,
                SaleCode.ENTERED,
                SaleCode.SOLD_OUT,
                SaleCode.ENTRIES_CLOSED,
                SaleCode.ALREADY_BOUGHT,
                SaleCode.ENDED,
            ):
                if mode == "unpaid" and actor.script and not settled.is_set() and code is not Code.SUCCESS:
                    push(actor, now + 0.2, "buy")  # a unit may come back: the scripts keep trying
                    return
                actor.outcome = code.name
            elif code in (SaleCode.DRAW_PENDING, SaleCode.NOT_STARTED, Code.SERVER_BUSY, SaleCode.TRY_AGAIN):
                push(actor, now + 0.2, "buy")
            elif code is Code.TOO_MANY_REQUESTS:
                push(actor, now + max(attempt.retry_after, 1), "buy")
            else:  # the path was refused (expired, used): start over
                push(actor, now, "captcha")

    for actor in actors:
        push(actor, actor.start, "wait" if room else "captcha")

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

    def expirer() -> None:  # a third of the winners let their pay window pass
        try:
            returned.extend(winners_unpaid(sale_id=sale.pk, stop=flushing))
            flushing.wait(2.0)  # the scripts try a while longer after the units went back
        finally:
            settled.set()
            connection.close()

    threads = [threading.Thread(target=flusher, daemon=True)]
    if drawn_mode:
        threads.append(threading.Thread(target=drawer, daemon=True))
    if mode == "unpaid":
        threads.append(threading.Thread(target=expirer, daemon=True))
    for thread in threads:
        thread.start()
    try:
        replay.run(step)
        if drawn_mode:
            draw.sale_draw(sale_id=sale.pk)  # (a no-op when made)
        deadline = time.monotonic() + 30
        while sale_state.reservations_count([sale.pk])[sale.pk] and time.monotonic() < deadline:
            writer.sale_flush(sale_id=sale.pk)
    finally:
        flushing.set()
        for thread in threads:
            thread.join(5)
        app.send_task = sent_before
    result = outcome(sale_id=sale.pk, actors=actors, units=units, returned=len(returned))
    result |= {"buy_answers": buy_answers}
    if mode == "unpaid":
        result |= reoffer_outcome(sale_id=sale.pk, returned=returned) | {"after_return": after_return}
    return result | (room_outcome(sale_id=sale.pk, actors=actors) if room else {})


def winners_unpaid(*, sale_id: int, stop: threading.Event) -> list[int]:
    """Once the sale is drawn and its winners' orders written, every third winner in the
    ranking lets the pay window pass: the order's deadline is moved into the past and the
    shop's unpaid expiry closes it (its unit goes down the waiting list). The expired orders'
    ids; none when `stop` is set first."""
    from django.utils import timezone

    from orders.models import Order, OrderStatus
    from orders.payments.closing import order_close
    from orders.services import REASON_EXPIRED
    from sales.models import SaleDraw

    while not stop.is_set():
        draw = SaleDraw.objects.filter(sale_id=sale_id, drawn_at__isnull=False).first()
        if draw is not None:
            orders = Order.objects.filter(sale_id=sale_id, user_id__in=draw.winner_ids[2::3], status=OrderStatus.UNPAID)
            if len(orders) == len(draw.winner_ids[2::3]):
                orders.update(pay_deadline=timezone.now() - timedelta(seconds=1))
                return [order.pk for order in orders if order_close(order=order, reason=REASON_EXPIRED)]
        stop.wait(0.2)
    return []


def room_line(seed: int, result: dict) -> str:
    """One seed of the room's opening: who bought, who arrived (and how many of them in the
    pre-queue), how far the line was let in, people's share of units over their share of
    arrivals, and the invariants."""
    ratio = share_ratio(
        people_units=result["people"],
        units=result["orders"],
        people_arrived=result["people_arrived"],
        arrived=result["arrived"],
    )
    line = (
        f"  room seed {seed}: scripts {result['scripts']:3}, people {result['people']:3}; arrived {result['arrived']} "
        f"(people {result['people_arrived']}; in the pre-queue {result['prequeue']}, people "
        f"{result['people_prequeue']}), let in {result['admitted']}; people's share of units / of arrivals "
        f"{ratio:.2f}; orders {result['orders']}, duplicates {result['duplicates']}, stock left {result['stock_left']}"
    )
    if result["oversold"]:
        line += ", OVERSOLD"
    return line + f", unfinished {result['late']}: {'ok' if result['ok'] else 'VIOLATED'}"


def room_ratio(rooms: list[tuple[int, dict]]) -> float:
    """People's share of the units over their share of the arrivals, pooled over the seeds
    (units and arrivals summed: a seed of few units weighs what it sold)."""
    return share_ratio(
        people_units=sum(r["people"] for _, r in rooms),
        units=sum(r["orders"] for _, r in rooms),
        people_arrived=sum(r["people_arrived"] for _, r in rooms),
        arrived=sum(r["arrived"] for _, r in rooms),
    )


def room_failures(rooms: list[tuple[int, dict]]) -> list[str]:
    """Why the room's figures cannot stand, one line each (none: they stand): a seed that sold
    nothing or that nobody arrived at measures nothing; the pooled ratio (room_ratio) must be
    within ROOM_TOLERANCE of 1."""
    lines = []
    for seed, result in rooms:
        if not result["orders"] or not result["people_arrived"]:
            lines.append(
                f"room seed {seed} sold {result['orders']} units to {result['arrived']} arrivals "
                f"({result['people_arrived']} people): it measures nothing (sale {result['sale_id']})"
            )
    if rooms and not lines:
        ratio = room_ratio(rooms)
        if abs(ratio - 1) > ROOM_TOLERANCE:
            lines.append(
                f"people's share of the units is {ratio:.2f} times their share of the arrivals over "
                f"{len(rooms)} seeds, not within {ROOM_TOLERANCE:.0%} of it"
            )
    return lines


def run_line(mode: str, seed: int, result: dict, *, share: float, people: int) -> str:
    won = result["orders"] or 1
    ratio = (result["scripts"] / won) / share
    chance = result["people"] / people
    line = (
        f"  {mode:4} seed {seed}: scripts {result['scripts']:3}, people {result['people']:3}, "
        f"ratio {ratio:.2f}, a person's chance {chance:.3f}"
    )
    if mode in ("draw", "unpaid"):
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
    parser.add_argument(
        "--timeout", type=float, default=0.0,
        help=f"seconds after the opening a run may take (0: {TIMEOUT_S:.0f}; the unpaid one {UNPAID_TIMEOUT_S:.0f})",
    )  # fmt: skip
    # The room's opening is asked for by name: over HTTP a thousand scripts asking every second go
    # through Django, more than a 2-core machine serves beside the other openings.
    parser.add_argument("--modes", nargs="+", default=["fcfs", "draw"], choices=["fcfs", "draw", "room", "unpaid"])
    room = parser.add_argument_group("the room's opening (--modes room)")
    room.add_argument("--room-scripts", type=int, default=0, help="the scalper's accounts (0: 10 x --scripts)")
    room.add_argument("--room-units", type=int, default=600)
    room.add_argument("--room-pace", type=int, default=400, help="shoppers let in a minute (400)")
    room.add_argument("--room-lead", type=float, default=10.0, help="seconds the pre-queue opens before the start")
    room.add_argument("--prequeue-share", type=float, default=0.7, help="arrivals that come before the start")
    room.add_argument("--room-seeds", type=int, default=1)
    room.add_argument("--room-timeout", type=float, default=150.0, help="seconds after the start a run may take")
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
    from django.conf import settings

    # Each client thread may wait on Redis at once (the replay's clock, a captcha's answer) when
    # the machine is loaded: redis-py's default pool of 100 connections would refuse the 101st.
    threads = options.clients or options.people + max(options.scripts, options.room_scripts or 10 * options.scripts)
    settings.CACHES["default"]["OPTIONS"].setdefault("CONNECTION_POOL_KWARGS", {})["max_connections"] = threads + 32
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from users.models import User

    User.objects.get_or_create(mobile=MERCHANT_MOBILE, defaults={"nickname": "fairness merchant"})
    people = shoppers(options.people, 0)
    scripts = shoppers(options.scripts, 500_000_000)
    # The room's scalper has ten times the accounts (the first --scripts of them the same).
    room_scripts = (
        shoppers(options.room_scripts or 10 * options.scripts, 500_000_000) if "room" in options.modes else []
    )
    plan = RoomPlan(
        lead=options.room_lead, admit_per_minute=options.room_pace, prequeue_share=options.prequeue_share
    )  # fmt: skip
    share = options.scripts / (options.scripts + options.people)
    how = "in process, through the services" if options.in_process else "over HTTP"
    print(
        f"{options.people} people, {options.scripts} scripts (share of accounts {share:.2f}), {options.units} units, "
        f"draw window {options.window} s, scripts solve {options.script_solve:.0%}, {options.seeds} seeds, {how}",
        flush=True,
    )
    if room_scripts:
        print(
            f"the room's opening: {options.people} people, {len(room_scripts)} scripts, {options.room_units} units, "
            f"{options.room_pace} let in a minute, the pre-queue {options.room_lead:.0f} s ahead, "
            f"{options.prequeue_share:.0%} of arrivals in it, {options.room_seeds} seeds",
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
            clients=options.clients or options.people + max(options.scripts, len(room_scripts)),
        )
    summary = {}
    status = 0
    draws: list[tuple[int, dict]] = []
    reoffers: list[str] = []
    rooms: list[tuple[int, dict]] = []
    try:
        if opening is not None:
            opening.start(user_ids=[*people, *dict.fromkeys([*scripts, *room_scripts])])
            print(opening.describe(), flush=True)
        for mode in options.modes:
            if mode == "room":
                for seed in range(options.room_seeds):
                    actors = room_population(
                        seed=seed, people=people, scripts=room_scripts, solve_rate=options.script_solve,
                        prequeue_share=plan.prequeue_share, lead=plan.lead,
                    )  # fmt: skip
                    arguments = dict(mode=mode, actors=actors, units=options.room_units, window=options.window,
                                     timeout=options.room_timeout, room=plan)  # fmt: skip
                    run = run_in_process if opening is None else opening.run
                    result = run(**arguments)
                    status |= 0 if result["ok"] else 1
                    rooms.append((seed, result))
                    print(room_line(seed, result), flush=True)
                    if "context" in result:
                        print(f"         {result['context']}", flush=True)
                continue
            ratios, chances, fair, entered = [], [], [], []
            for seed in range(options.seeds):
                actors = population(seed=seed, people=people, scripts=scripts, solve_rate=options.script_solve)
                timeout = options.timeout or (UNPAID_TIMEOUT_S if mode == "unpaid" else TIMEOUT_S)
                arguments = dict(mode=mode, actors=actors, units=options.units, window=options.window)
                if opening is None:
                    result = run_in_process(**arguments, timeout=timeout)
                else:
                    result = opening.run(**arguments, timeout=timeout)
                ratios.append((result["scripts"] / (result["orders"] or 1)) / share)
                chances.append(result["people"] / options.people)
                if result["entrants"]:  # (a run nobody entered has no fair draw to compare with)
                    fair.append(result["script_entrants"] / result["entrants"] / share)
                entered.append(result["entrants"] - result["script_entrants"])
                status |= 0 if result["ok"] else 1
                if mode == "draw":
                    draws.append((seed, result))
                print(run_line(mode, seed, result, share=share, people=options.people), flush=True)
                if mode == "unpaid":
                    paid = f"; paid through the API {result['paid']} (offers {result['offers_paid']})"
                    print(
                        f"         units returned {result['returned']}, offered down the ranking {result['offers']}: "
                        f"{'; '.join(result['reoffer_problems']) or 'each to the next in rank'}; the scripts' buys "
                        f"after: {', '.join(f'{k} {n}' for k, n in result['after_return'].most_common()) or 'none'}"
                        + (paid if "paid" in result else ""),
                        flush=True,
                    )
                    reoffers += [f"unpaid seed {seed}: {line}" for line in result["reoffer_problems"]]
                if "context" in result:
                    print(f"         {result['context']}", flush=True)
            summary[mode] = (fmean(ratios), fmean(chances), fmean(fair) if fair else 0.0, fmean(entered))
    finally:
        if opening is not None:
            opening.stop()
    for mode, (ratio, chance, fair_ratio, people_in) in summary.items():
        line = f"{mode:4}: scripts' share of units / share of accounts {ratio:.2f}; a person's chance {chance:.3f}"
        if mode in ("draw", "unpaid"):  # what a fair draw of those who entered gives, and how many people were in
            line += f" (a fair draw of the entrants: {fair_ratio:.2f}; people in the window {people_in:.0f})"
            line += f"; target at most {DRAW_RATIO_TARGET:.2f}" if mode == "draw" else ""
        print(line)
    if rooms:
        print(
            f"room: people's share of units / share of arrivals {room_ratio(rooms):.2f} over {len(rooms)} seeds; "
            f"target within {ROOM_TOLERANCE:.0%} of 1"
        )
    for line in [*failures(draws, share=share), *room_failures(rooms), *reoffers]:
        print(f"FAILED: {line}", flush=True)
        status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
