"""A sale's line: joining it, the opening's published shuffle, admission at the room's pace,
and a shopper's place in it (docs/waiting-room.md, "How it works").

Every change is one Lua script over the room's keys (waitingroom/lua/, one hash tag per room).
Admission is counted lazily: whoever reads the room (a shopper's status poll, a buy checked for
its pass, the operator's figures) runs wr_admit.lua, which admits what the pace allowed since
the last count. A crowd in line polls every few seconds, so the line is counted many times a
second while anyone waits, and a room nobody reads has nobody to admit; no beat task, then, and
no clock of its own to drift from the pace it serves.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, replace

from sales import sale_state
from sales.draw_seed import seed_commit, seed_reveal
from seckill_site.redis import client, script
from seckill_site.redis import now as redis_now
from seckill_site.redis import text as redis_text
from waitingroom import keys
from waitingroom.brake import brake_factor
from waitingroom.room import Room, room_read

__all__ = [
    "ADMITTED",
    "CLOSED",
    "ENDED",
    "EXPIRED",
    "OFF",
    "PREQUEUE",
    "SOLD_OUT",
    "WAITING",
    "Counter",
    "Place",
    "counter",
    "pace",
    "pass_issue",
    "place",
    "shuffle",
    "shuffle_order",
    "shuffle_published",
]

# A shopper's state in a room.
OFF = "off"  # the sale has no room: straight to the sale
CLOSED = "closed"  # the room opens later (the pre-queue's opening, else the start)
PREQUEUE = "prequeue"  # arrived before the start: placed by the shuffle at the start
WAITING = "waiting"
ADMITTED = "admitted"  # may take a pass, or holds one
EXPIRED = "expired"  # was admitted, and the pass has ended
SOLD_OUT = "sold_out"  # the wait ends: nothing left to buy
ENDED = "ended"  # the sale is over

# Tokens a room's pace keeps when nobody waits to use them: at most this many seconds' worth.
BURST_SECONDS = 2.0
# How long this process trusts a read of a sale's stock for "sold out".
STOCK_SECONDS = 1.0


@dataclass(frozen=True)
class Counter:
    """The room's public figures: places given out (`tail`), admitted up to (`head`), the
    pace now (admissions a minute, 0 for none: a cap alone, or no limit), and whether anyone
    is being admitted at all."""

    head: int
    tail: int
    rate_per_minute: float
    halted: bool


@dataclass(frozen=True)
class Place:
    """A shopper's place: their state, place in line (None until they have one), how many are
    ahead of them and the estimated seconds until they are admitted (None: no estimate,
    nobody is being admitted), with the room's public figures."""

    sale_id: int
    state: str
    position: int | None = None
    ahead: int | None = None
    eta_seconds: int | None = None
    head: int = 0
    tail: int = 0
    rate_per_minute: float = 0.0
    pass_from: int | None = None  # epoch second the shopper's pass started, once taken

    @property
    def admitted(self) -> bool:
        return self.state in (ADMITTED, OFF)

    @property
    def sold_out(self) -> bool:
        return self.state == SOLD_OUT


@dataclass(frozen=True)
class Pace:
    """The room's pace now: admissions a second (0: none set), the cap on passes running at
    once (0: none), both lowered by the brake when the room has one; `halted` by a switch."""

    per_second: float
    active_max: int
    halted: bool

    def outflow(self, room: Room) -> float:
        """Shoppers leaving the line a second, for the estimate: the pace, else the cap's
        turnover (each admitted holding their pass to its end), else 0 (no limit)."""
        if self.per_second > 0:
            return self.per_second
        if self.active_max > 0 and room.pass_seconds > 0:
            return self.active_max / room.pass_seconds
        return 0.0


def pace(sale_id: int, room: Room, *, factor: float | None = None) -> Pace:
    """The room's pace with the brake applied (`factor`: the brake's, measured when None)."""
    if room.brake and factor is None:
        factor = brake_factor(sale_id)
    factor = factor if room.brake and factor is not None else 1.0
    per_second = room.admit_per_minute / 60 * factor
    active_max = max(1, math.ceil(room.active_max * factor)) if room.active_max > 0 else 0
    return Pace(per_second=per_second, active_max=active_max, halted=room.stop or room.queue_all)


def _now(now: float | None) -> float:
    return redis_now() if now is None else now


def _admit(sale_id: int, room: Room, room_pace: Pace, now: float) -> tuple[int, int]:
    """(head, tail) after admitting what the pace allowed since the last count."""
    burst = max(1.0, room_pace.per_second * BURST_SECONDS)
    head, tail, _admitted = script("wr_admit")(
        keys=[
            keys.head(sale_id),
            keys.tail(sale_id),
            keys.bucket(sale_id),
            keys.active(sale_id),
            keys.admitted_log(sale_id),
            keys.abandoned(sale_id),
            keys.queue(sale_id),
        ],
        args=[
            repr(now),
            room.starts_at,
            repr(room_pace.per_second),
            repr(burst),
            room_pace.active_max,
            int(room_pace.halted),
            room.pass_seconds,
        ],
    )
    return int(head), int(tail)


def counter(sale_id: int, *, now: float | None = None, factor: float | None = None) -> Counter:
    """The room's public figures, admitting what is due first; a sale with no room has none."""
    room = room_read(sale_id)
    room_pace = pace(sale_id, room, factor=factor)
    if not room.on:
        return Counter(head=0, tail=0, rate_per_minute=0.0, halted=False)
    head, tail = _admit(sale_id, room, room_pace, _now(now))
    return Counter(head=head, tail=tail, rate_per_minute=room_pace.per_second * 60, halted=room_pace.halted)


_stock_read: dict[int, tuple[float, bool]] = {}  # sale id -> (read at, monotonic; sold out)


def _sold_out(sale_id: int) -> bool:
    """The sale's stock is gone: this process's mark (a buy just met it), else Redis's count,
    read at most every STOCK_SECONDS. A sale not loaded in Redis is not known sold out."""
    refusal = sale_state.refusal_known(sale_id, ask=False)
    if refusal in (sale_state.Refusal.SOLD_OUT, sale_state.Refusal.ENTRIES_CLOSED):
        return True
    clock = time.monotonic()
    known = _stock_read.get(sale_id)
    if known is not None and clock - known[0] < STOCK_SECONDS:
        return known[1]
    left = sale_state.stock_left([sale_id])[sale_id]
    gone = left is not None and left <= 0
    _stock_read[sale_id] = (clock, gone)
    return gone


def _ended(sale_id: int, now: float) -> bool:
    window = sale_state.window(sale_id)
    return window is not None and now >= window[1]


def place(
    sale_id: int, user_id: int | None, *, now: float | None = None, join: bool = True, factor: float | None = None
) -> Place:
    """The shopper's place in the sale's room, joining it unless `join` is False (then a
    shopper not in line has no position). `user_id` None: the public figures alone. The wait
    ends with SOLD_OUT the moment the stock is gone, and ENDED with the sale."""
    room = room_read(sale_id)
    if not room.on:
        return Place(sale_id=sale_id, state=OFF)
    at = _now(now)
    if _sold_out(sale_id):
        return Place(sale_id=sale_id, state=SOLD_OUT)
    if _ended(sale_id, at):
        return Place(sale_id=sale_id, state=ENDED)
    room_pace = pace(sale_id, room, factor=factor)
    position: int | None = None
    state = WAITING
    if user_id is not None:
        state, position = _joined(sale_id, user_id, room, at, join=join)
    head, tail = _admit(sale_id, room, room_pace, at)
    found = Place(sale_id=sale_id, state=state, head=head, tail=tail, rate_per_minute=room_pace.per_second * 60)
    if position is None:
        if state == PREQUEUE:  # no place before the shuffle: how many wait with them
            return replace(found, ahead=int(client().scard(keys.prequeue(sale_id))))
        return found
    if position <= head:
        return replace(found, state=ADMITTED, position=position, ahead=0, eta_seconds=0)
    ahead = position - head - 1
    outflow = room_pace.outflow(room)
    if room_pace.halted:
        eta = None
    elif outflow > 0:
        eta = math.ceil((ahead + 1) / outflow)
    else:
        eta = 0
    return replace(found, state=WAITING, position=position, ahead=ahead, eta_seconds=eta)


def _joined(sale_id: int, user_id: int, room: Room, now: float, *, join: bool) -> tuple[str, int | None]:
    """(state, place) of the shopper in line, joining it when `join`."""
    if not join:
        found = client().zscore(keys.queue(sale_id), user_id)
        if found is not None:
            return WAITING, int(found)
        if client().sismember(keys.prequeue(sale_id), str(user_id)):
            return PREQUEUE, None
        return WAITING, None
    for _attempt in range(3):
        state, position = script("wr_join")(
            keys=[
                keys.queue(sale_id),
                keys.prequeue(sale_id),
                keys.tail(sale_id),
                keys.joined(sale_id),
                keys.seed(sale_id),
            ],
            args=[user_id, repr(now), room.opens_at, room.starts_at],
        )
        if state == 1:
            return WAITING, int(position)
        if state == 0:
            shuffle_published(sale_id)  # the seed's hash is public before anyone is shuffled
            return PREQUEUE, None
        if state == -2:
            return CLOSED, None
        shuffle(sale_id)
    raise RuntimeError(f"the waiting room of sale {sale_id} could not be shuffled")


def shuffle_published(sale_id: int, *, ids: bool = False) -> dict[str, str | int | list[int]]:
    """What anyone may know of the room's shuffle: the seed's SHA-256 (committed the first
    time it is asked, from a nonce kept where the room is), and once the shuffle is made the
    seed and the pre-queue's size, with `ids` its members' user ids too (sorted: ids only).
    The seed exists nowhere before (sales.draw_seed)."""
    redis, key = client(), keys.seed(sale_id)
    redis.hsetnx(key, "nonce", seed_commit().nonce)  # the first asker's nonce is the room's
    nonce = redis_text(redis.hget(key, "nonce") or "")
    redis.hsetnx(key, "sha256", seed_commit(nonce).sha256)
    stored = {redis_text(k): redis_text(v) for k, v in redis.hgetall(key).items()}
    published: dict[str, str | int | list[int]] = {"seedSha256": stored["sha256"]}
    if "shuffled" in stored:
        published["seed"] = stored["seed"]
        published["shuffled"] = int(stored["shuffled"])
        if ids:
            published["prequeueIds"] = sorted(int(member) for member in redis.smembers(keys.prequeue(sale_id)))
    return published


def shuffle_order(seed: str, user_ids: list[int]) -> list[int]:
    """The pre-queue in its published order: by sha256("<seed>:<user id>"), ties by id, as a
    draw ranks its entrants (docs/draw.md)."""
    return sorted(user_ids, key=lambda user_id: (hashlib.sha256(f"{seed}:{user_id}".encode()).hexdigest(), user_id))


def shuffle(sale_id: int) -> int:
    """Make the opening's shuffle if nobody has: the pre-queue placed 1..P in the published
    order. Returns P (-1 when it was made already)."""
    redis = client()
    for _attempt in range(5):
        published = shuffle_published(sale_id)
        if "shuffled" in published:
            return -1
        nonce = redis_text(redis.hget(keys.seed(sale_id), "nonce") or "")
        seed = seed_reveal(nonce=nonce, sha256=str(published["seedSha256"]))
        members = [int(member) for member in redis.smembers(keys.prequeue(sale_id))]
        made = script("wr_shuffle")(
            keys=[keys.queue(sale_id), keys.prequeue(sale_id), keys.tail(sale_id), keys.seed(sale_id)],
            args=[seed, *shuffle_order(seed, members)],
        )
        if made != -2:
            return int(made)
    raise RuntimeError(f"the pre-queue of sale {sale_id} kept changing during its shuffle")


def pass_issue(sale_id: int, user_id: int, *, now: float | None = None) -> int:
    """The epoch second the admitted shopper's pass started: now, logged (admitted, waited,
    counted active until it ends), the first time; the same second every later time."""
    at = min(_now(now), time.time()) if now is None else now
    started = script("wr_issue")(
        keys=[keys.active(sale_id), keys.admitted_log(sale_id), keys.waits(sale_id), keys.joined(sale_id)],
        args=[user_id, repr(float(int(at))), room_read(sale_id).pass_seconds],
    )
    return int(started)
