"""An opening as `make fairness` replays it (lab/fairness.py): who shows up when and how
they solve (the population), the timeline that runs each shopper's next step at its time (the
replay), the sale (and its waiting room, for the room's opening), and what PostgreSQL holds
afterwards (the outcome; for the unpaid opening, where the units that came back went). Shared
by the in-process replay (lab/fairness.py) and the HTTP one (lab/fairness_http.py)."""

from __future__ import annotations

import hashlib
import heapq
import math
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta

MOBILE_PREFIX = "17"  # fairness shoppers: 17xxxxxxxxx
MERCHANT_MOBILE = f"{MOBILE_PREFIX}999999999"
# The room's opening: how often a shopper asks where they stand. A person's waiting page
# polls when the answer says (waitingroom.answers.refresh_seconds: every REFRESH_SECONDS, sooner
# as their turn nears; PERSON_POLL_S where no answer says); a script asks every second.
PERSON_POLL_S, SCRIPT_POLL_S = 5.0, 1.0


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
    poll: float = PERSON_POLL_S  # the room's opening: seconds between two asks while waiting
    arrived: bool = False  # the room's opening: the room has taken them (in line or its pre-queue)


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


@dataclass(frozen=True)
class RoomPlan:
    """The room's opening: the pre-queue opens `lead` seconds before the start, the room lets
    `admit_per_minute` in a minute, and `prequeue_share` of the arrivals come before the start."""

    lead: float
    admit_per_minute: int
    prequeue_share: float


def room_population(
    *, seed: int, people: list[int], scripts: list[int], solve_rate: float, prequeue_share: float, lead: float
) -> list[Actor]:
    """The room's opening: population()'s people and scripts (their solving unchanged), each
    arriving in the pre-queue with chance `prequeue_share`, at a time uniform over the `lead`
    seconds before the start (from a second after the pre-queue opens to half a second before
    the start), else after the start as population() has them arrive. A script polls its place
    every SCRIPT_POLL_S, a person every PERSON_POLL_S."""
    actors = population(seed=seed, people=people, scripts=scripts, solve_rate=solve_rate)
    rng = random.Random(f"room:{seed}")
    for actor in actors:
        if rng.random() < prequeue_share:
            actor.start = -rng.uniform(0.5, lead - 1.0)
        actor.poll = SCRIPT_POLL_S if actor.script else PERSON_POLL_S
    return actors


def share_ratio(*, people_units: int, units: int, people_arrived: int, arrived: int) -> float:
    """People's share of the units divided by their share of the arrivals: 1.0 is fair, below
    is people short-changed. 0.0 when nothing was sold or nobody arrived."""
    if not units or not arrived or not people_arrived:
        return 0.0
    return (people_units / units) / (people_arrived / arrived)


class Replay:
    """The opening's timeline: each actor's next step at its time (seconds after the opening
    `t0`, on `clock`), run by a bounded pool of threads. A step pushes the actor's next one. Ends
    when no step is left or `timeout` seconds after the opening.

    `lags` records how late each step started against its time: the replay's own delay, which
    on a loaded machine shifts everyone's timings (reported beside the figures)."""

    def __init__(self, *, t0: float, timeout: float, clock: Callable[[], float] = time.time, workers: int = 16):
        self.t0, self.timeout, self.clock, self.workers = t0, timeout, clock, workers
        self.heap: list[Event] = []
        self.lock = threading.Condition()
        self.counter = iter(range(10**9))
        self.lags: list[float] = []

    def now(self) -> float:
        """Seconds since the opening."""
        return self.clock() - self.t0

    def push(self, actor: Actor, at: float, step: str) -> None:
        with self.lock:
            heapq.heappush(self.heap, Event(at, next(self.counter), actor, step))
            self.lock.notify()

    def run(self, step: Callable[[Actor, str], None]) -> None:
        def started(event: Event) -> None:
            self.lags.append(self.now() - event.at)
            step(event.actor, event.step)

        pending: set = set()
        failed: list[BaseException] = []

        def settled(future) -> bool:
            if future.done() and future.exception() is not None:
                failed.append(future.exception())
            return future.done()

        with ThreadPoolExecutor(self.workers) as pool:
            while True:
                with self.lock:
                    pending = {f for f in pending if not settled(f)}
                    if not self.heap and not pending:
                        break
                    if self.now() > self.timeout:
                        break
                    wait = (self.heap[0].at - self.now()) if self.heap else 0.05
                    if wait > 0:
                        self.lock.wait(min(wait, 0.05))
                        continue
                    event = heapq.heappop(self.heap)
                pending.add(pool.submit(started, event))
        failed += [f.exception() for f in pending if f.exception() is not None]
        if failed:  # a step that raised is a bug of the replay, not an outcome of the opening
            raise failed[0]


def fairness_sale(*, mode: str, units: int, window: int, opening: float):
    """A new sale of `units` opening `opening` seconds from now, first come, first served or a
    draw of `window` seconds, put on by the merchant's service (loaded into Redis, its draw's
    ETA task published). The room's opening ("room") is first come, first served behind a
    room, and starts on a whole second: the room counts its start in whole seconds, and must
    not admit anyone before the sale opens."""
    from django.utils import timezone

    from goods.models import Goods
    from sales.models import Admission, Sale
    from sales.services import sale_create
    from users.models import User

    merchant = User.objects.get(mobile=MERCHANT_MOBILE)
    goods = Goods.objects.get_or_create(owner=merchant, name="fairness", defaults={"title": "-", "price": 1})[0]
    start = timezone.now() + timedelta(seconds=opening)
    if mode == "room":
        start = start.replace(microsecond=0) + timedelta(seconds=1)
    return sale_create(
        sale=Sale(
            goods=goods,
            seckill_price=1,
            stock_count=units,
            start_at=start,
            end_at=start + timedelta(minutes=10),
            admission=Admission.DRAW if mode in ("draw", "unpaid") else Admission.FCFS,
            draw_window_s=window,
        ),
        actor=merchant,
    )


def room_open(*, sale, opens_before: float, admit_per_minute: int, pass_minutes: int = 10) -> None:
    """Turn on the sale's waiting room through the merchant's service: the pre-queue opening
    `opens_before` seconds before the start, `admit_per_minute` let in a minute, no brake (the
    run measures who gets in, not the shop's health)."""
    from waitingroom.models import WaitingRoom
    from waitingroom.services import room_settings_save

    room = WaitingRoom(
        sale=sale,
        enabled=True,
        prequeue_opens_at=sale.start_at - timedelta(seconds=opens_before),
        admit_per_minute=admit_per_minute,
        pass_minutes=pass_minutes,
        brake=False,
    )
    room_settings_save(room=room, actor=sale.goods.owner)


def room_outcome(*, sale_id: int, actors: list[Actor]) -> dict:
    """Who arrived (the room took them in line or in its pre-queue: `Actor.arrived`), by people
    and scripts, how many of them in the pre-queue (the published shuffle's list), and how far
    the room let the line in."""
    from waitingroom.figures import room_figures
    from waitingroom.queue import shuffle_published

    scripts = {a.user_id for a in actors if a.script}
    arrived = {a.user_id for a in actors if a.arrived}
    prequeue = set(shuffle_published(sale_id, ids=True).get("prequeueIds", []))  # type: ignore[arg-type]
    return {
        "arrived": len(arrived),
        "people_arrived": sum(1 for u in arrived if u not in scripts),
        "prequeue": len(prequeue),
        "people_prequeue": sum(1 for u in prequeue if u not in scripts),
        "admitted": room_figures(sale_id).head,
    }


def outcome(*, sale_id: int, actors: list[Actor], units: int, returned: int = 0) -> dict:
    """What PostgreSQL holds for the sale: its orders (by scripts, by people), duplicates,
    the stock left, the draw's entrants; and whether the invariants hold (lab.invariants).
    `returned` orders were cancelled and their units offered down the draw's waiting list:
    their rows are not units sold, and whoever the offers went to counts as drawn."""
    from lab.invariants import sale_check
    from orders.models import Order, SeckillOrder
    from sales.models import SaleDraw, SaleDrawOffer

    winners = list(SeckillOrder.objects.filter(sale_id=sale_id, live=True).values_list("user_id", flat=True))
    scripts = {a.user_id for a in actors if a.script}
    check = sale_check(sale_id=sale_id, units=units)
    stock_left = check.db_stock
    orders_rows = Order.objects.filter(sale_id=sale_id).count()
    draw = SaleDraw.objects.filter(sale_id=sale_id).values("entrant_ids", "winner_ids").first() or {}
    drawn, drawn_winners = draw.get("entrant_ids") or [], set(draw.get("winner_ids") or [])
    if returned:
        drawn_winners |= set(SaleDrawOffer.objects.filter(draw__sale_id=sale_id).values_list("user_id", flat=True))
    result = {
        "sale_id": sale_id,
        "winners": winners,
        "orders": len(winners),
        "order_rows": orders_rows,
        "scripts": sum(1 for u in winners if u in scripts),
        "people": sum(1 for u in winners if u not in scripts),
        "duplicates": check.duplicates,
        "stock_left": stock_left,
        "entrants": len(drawn),
        "script_entrants": sum(1 for u in drawn if u in scripts),
        "late": sum(1 for a in actors if not a.outcome),
    }
    oversold = bool(check.oversold) or orders_rows - returned > units or stock_left + len(winners) != units
    result["oversold"] = oversold
    result["stranded"] = check.stranded + int(check.drifted)
    result["problems"] = check.problems()
    # With more entrants than units the draw took all the stock: an order of anyone it did not
    # draw is a unit sold past it.
    result["undrawn_orders"] = sum(1 for u in winners if u not in drawn_winners) if draw and len(drawn) >= units else 0
    result["ok"] = (
        len(winners) == units
        and not oversold
        and not result["duplicates"]
        and not result["undrawn_orders"]
        and not result["stranded"]
    )
    return result


def reoffer_outcome(*, sale_id: int, returned: list[int]) -> dict:
    """The unpaid opening's checks (reoffer_failures) on what PostgreSQL holds for the sale."""
    from orders.models import SeckillOrder
    from sales.models import SaleDraw, SaleDrawOffer

    draw = SaleDraw.objects.get(sale_id=sale_id)
    offers = list(SaleDrawOffer.objects.filter(draw=draw).order_by("rank").values_list("rank", "user_id"))
    holders = list(SeckillOrder.objects.filter(sale_id=sale_id, live=True).values_list("user_id", flat=True))
    problems = reoffer_failures(
        seed=draw.seed, entrant_ids=draw.entrant_ids, winner_ids=draw.winner_ids, offers=offers,
        returned=len(returned), holders=holders,
    )  # fmt: skip
    return {"returned": len(returned), "offers": len(offers), "reoffer_problems": problems}


def reoffer_failures(
    *, seed: str, entrant_ids: list[int], winner_ids: list[int], offers: list[tuple[int, int]], returned: int,
    holders: list[int],
) -> list[str]:  # fmt: skip
    """Why the units that came back did not go down the published ranking, one line each (none:
    they did). The ranking is recomputed here from the draw's seed and entrants as docs/draw.md
    publishes it (the hex SHA-256 of "<seed>:<id>", smallest first): the offers, (rank, user id)
    in rank order, must be the first of the waiting list, one per returned unit while anyone
    waits; and the live orders' `holders` are the winners who kept theirs and the offered
    entrants, nobody else and nobody twice."""
    ranking = sorted(entrant_ids, key=lambda i: (hashlib.sha256(f"{seed}:{i}".encode()).hexdigest(), i))
    waiting = [(rank, i) for rank, i in enumerate(ranking, start=1) if i not in set(winner_ids)]
    lines = []
    if offers != waiting[: len(offers)]:
        lines.append(f"the offers {offers} are not the next in the published ranking {waiting[: len(offers)]}")
    if len(offers) != min(returned, len(waiting)):
        lines.append(f"{returned} units came back but {len(offers)} were offered ({len(waiting)} waiting)")
    allowed = set(winner_ids) | {i for _rank, i in offers}
    if returned <= len(waiting) and (outside := sorted(set(holders) - allowed)):
        lines.append(f"units went to shoppers outside the waiting list's turn: {outside}")
    if len(holders) != len(set(holders)):
        lines.append(f"a shopper holds two units: {sorted(i for i, n in Counter(holders).items() if n > 1)}")
    return lines


def shoppers(count: int, offset: int) -> list[int]:
    from django.contrib.auth.hashers import make_password

    from users.models import User

    mobiles = [f"{MOBILE_PREFIX}{offset + i:09d}" for i in range(count)]
    existing = dict(User.objects.filter(mobile__in=mobiles).values_list("mobile", "pk"))
    password = make_password(None)  # nobody logs in with a password: scripts and people use a token
    new = [User(mobile=m, nickname="fairness", password=password) for m in mobiles if m not in existing]
    for user in User.objects.bulk_create(new):
        existing[user.mobile] = user.pk
    return [existing[m] for m in mobiles]
