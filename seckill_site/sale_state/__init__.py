"""A sale's shared state in Redis. The one module that names a sale's keys (`sk:{id}:*`) or
runs its Lua scripts: the gate, the order writer, cancellations, merchant edits, the reconciler,
the pages and the metrics all call the functions below.

A reservation is a unit the gate handed to one shopper whose order is not settled yet. Its
life, every transition one Lua call that checks the state it starts from and answers a no-op
from any other (so a late, repeated or crashed caller changes nothing):

    ========================  =====================  ========================  ==============
    from                      transition (script)    to                        by
    ========================  =====================  ========================  ==============
    -                         reserve                reserved                  the gate
    reserved, unclaimed       give_back              gone: unit back, buyer    the gate, when
                                                     out, no answer            its publish fails
    reserved, claimed         give_back              (no-op: CLAIMED, the      the gate
                                                     writer has it)
    reserved, unclaimed or    claim                  claimed by token          the writer
      its lease ran out, or
      claimed by this token
    claimed by token          settle W               gone: answer = order      the writer, after
                                                                               its commit
    claimed by token          settle X               gone (its order was       the writer
                                                     cancelled meanwhile)
    claimed by token          settle D               gone: unit back, buyer    the writer
                                                     stays, answer = the
                                                     shopper's live order
    claimed by token          settle S               gone: buyer out, -1       the writer (the
                                                     (no unit: the database    database was
                                                     had none)                 short)
    claimed by token          settle R               gone: unit back, buyer    the writer (the
                                                     out, -1 (refused for      database refused
                                                     good)                     the row for good)
    claimed by another token  settle *               (no-op)                   a late writer
    ========================  =====================  ========================  ==============

A unit sold leaves with its order and may come back once:

    ========================  =====================  ========================  ==============
    live order's unit         unit_return            back in the stock, buyer  the order's
      (cancel committed)        (ticket)             out; the order's          cancellation,
                                                     reservation and answer    after commit
                                                     gone
    unit returned already     unit_return            (no-op)
    sale loaded since the     unit_return            (no-op: the load counted
      ticket                                         it)
    ========================  =====================  ========================  ==============

A draw sale (docs/draw.md) adds: `enter` ((none) -> entered, the gate in the entry window, no
unit taken, one entry per shopper, on the shopper's entry shard), `draw_due` (entry window ->
closed, per shard: no entry after it) and `draw_apply` (entered -> reserved for the stored
winners, each at most once, the last call sets the drawn mark; reserve answers DRAW_PENDING
until it stands). docs/architecture.md has the table.

And the sale as a whole: `load` (the reconciler and `seckill_warm`, under the sale's stock lock
in PostgreSQL) rewrites its stock, buyers and window from the database and starts a new
generation; `sale_open` loads a new sale; `stock_take` / `stock_add` carry a merchant's stock
edit; `window_set` a new start or end; `sale_forget` drops a deleted sale.

A ticket is the sale's generation read inside the database transaction that holds the sale's
stock lock (goods.services.sale_stock_lock). A change that reaches Redis after its commit
carries it: if a load ran in between, that load read the committed change already, and the
ticket no longer matches.

Every key of a sale shares its hash tag, so each script stays in one Redis Cluster slot. A draw
sale with several entry shards (keys.entry_shard) keeps its entries under one hash tag per
shard: enter.lua and draw_due.lua run on one shard's slot, every other script on the sale's.
"""

from __future__ import annotations

import enum
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings

from seckill_site.redis import client, lock, lock_try, script, script_durable, text
from seckill_site.redis import now as redis_now
from seckill_site.sale_state import keys

RESULT_QUEUED = 0
RESULT_FAILED = -1
RESULT_ENTERED = -2  # in a draw, not drawn yet (enter.lua)
RESULT_NOT_DRAWN = -3  # in a draw that is made, and not among its winners (never stored: read)


# --- what this process knows without asking --------------------------------------------------

# Sale id -> monotonic time until which the sale counts as sold out here. A mark lasts one
# second, so when stock comes back (a cancellation, a load) every process sees it within a
# second, and a sold-out sale costs each process at most one Redis call per second instead of
# one per request.
SOLD_OUT_MARK_SECONDS = 1.0
_sold_out_until: dict[int, float] = {}

# Sale id -> (start, end, fetched at, draw, entry shards): the sale window as Redis holds it,
# re-read every few seconds; draw is the epoch second of a draw sale's draw, 0 for first come,
# first served.
WINDOW_CACHE_SECONDS = 5.0
_windows: dict[int, tuple[float, float, float, float, int]] = {}
# Bounds of a sale's entry shards (settings.SECKILL_DRAW_SHARDS).
SHARDS_MAX = 64


def sold_out_known(sale_id: int) -> bool:
    """Does this process already know the sale is sold out (no network call)?"""
    return _sold_out_until.get(sale_id, 0.0) > time.monotonic()


def sold_out_mark(sale_id: int) -> None:
    _sold_out_until[sale_id] = time.monotonic() + SOLD_OUT_MARK_SECONDS


def sold_out_clear(sale_id: int | None = None) -> None:
    if sale_id is None:
        _sold_out_until.clear()
    else:
        _sold_out_until.pop(sale_id, None)


def window(sale_id: int) -> tuple[float, float] | None:
    """The sale window (epoch seconds) from this process's copy, refreshed from Redis every
    WINDOW_CACHE_SECONDS; None when Redis does not hold it (an unknown sale, or a lost one)."""
    cached = _window_cached(sale_id)
    return None if cached is None else (cached[0], cached[1])


def draw_at(sale_id: int) -> float:
    """The epoch second of the sale's draw (the end of its entry window), 0 for first come,
    first served or when Redis does not hold the sale; from the same copy as window()."""
    cached = _window_cached(sale_id)
    return 0.0 if cached is None else cached[3]


def shards(sale_id: int) -> int:
    """How many entry shards the sale's entries are spread over (1 for a first come, first
    served sale, or when Redis does not hold the sale); from the same copy as window()."""
    cached = _window_cached(sale_id)
    return 1 if cached is None else cached[4]


def _window_cached(sale_id: int, *, ask: bool = True) -> tuple[float, float, float, float, int] | None:
    """This process's copy of the window; a missing or stale one is read again from Redis, or
    without `ask` (no network call) answered None."""
    cached = _windows.get(sale_id)
    now = time.monotonic()
    if cached is not None and now - cached[2] < WINDOW_CACHE_SECONDS:
        return cached
    if not ask:
        return None
    start, end, draw, shards = client().hmget(keys.window(sale_id), ["start", "end", "draw", "shards"])
    if start is None or end is None:
        _windows.pop(sale_id, None)
        return None
    _windows[sale_id] = (float(start), float(end), now, float(draw or 0), int(shards or 1))
    return _windows[sale_id]


def _shards_stored(sale_id: int) -> int:
    """The sale's entry shards as Redis holds them now (the drawer's reads: no process's copy)."""
    return int(client().hget(keys.window(sale_id), "shards") or 1)


def refusal_known(sale_id: int, *, ask: bool) -> Refusal | None:
    """SOLD_OUT, NOT_STARTED or ENDED when this process knows it: a sold-out mark, or the window
    copy and the shop's clock. These are public facts (the list page shows them), so they are
    answered to anyone, before the session is read."""
    if sold_out_known(sale_id):
        return Refusal.SOLD_OUT
    return window_refusal(sale_id, ask=ask)


def window_refusal(sale_id: int, *, ask: bool = True) -> Refusal | None:
    """NOT_STARTED or ENDED by the shop's clock (Redis's) and this process's copy of the window;
    None when it may be open. With `ask` a missing or stale copy is read from Redis (one read per
    sale every WINDOW_CACHE_SECONDS); without, nothing reaches the network and a stale copy
    answers None."""
    cached = _window_cached(sale_id, ask=ask)
    if cached is None:
        return None
    now = redis_now()
    if now < cached[0]:
        return Refusal.NOT_STARTED
    if now >= cached[1]:
        return Refusal.ENDED
    return None


def process_marks_clear(sale_id: int | None = None) -> None:
    """Forget this process's sold-out marks and window copies (of one sale, or all)."""
    sold_out_clear(sale_id)
    if sale_id is None:
        _windows.clear()
    else:
        _windows.pop(sale_id, None)


# --- the gate --------------------------------------------------------------------------------


class Refusal(enum.IntEnum):
    """reserve.lua's refusals, by the numbers it answers."""

    ALREADY_BOUGHT = -1
    SOLD_OUT = -2
    NOT_LOADED = -3  # Redis lost the sale: it is rebuilt from the database
    PATH_INVALID = -4  # reused, expired or guessed
    NOT_STARTED = -5
    ENDED = -6
    RATE_LIMITED = -7
    IN_DRAW = -8  # a draw sale's entry window: the shopper enters instead (enter)
    DRAW_PENDING = -9  # the entry window is over and the draw is not made yet
    NOT_DURABLE = -10  # not reserve.lua's: no replica confirmed the reservation, which was given back
    SHARDS_STALE = -11  # enter.lua's: this process's copy of the sale's entry shards was old


@dataclass(frozen=True)
class Reserved:
    refusal: Refusal | None
    left: int = 0  # units left after this one
    flush_due: bool = False  # no flush is queued or running: the caller publishes one
    retry_after: int = 0  # seconds, with RATE_LIMITED
    draw_at: float = 0  # epoch seconds, with IN_DRAW and DRAW_PENDING


def reserve(*, sale_id: int, user_id: int, path: str, request_id: str, trace: str, flush_mark_ms: int) -> Reserved:
    """(none) -> reserved: count the buy against the shopper's rate limit, take the one-time
    path, check "already bought" and the stock, hand out one unit. One round trip, plus the
    replica's confirmation where REDIS_WAIT_REPLICAS asks for one (seckill_site.redis.script_durable):
    a unit no replica confirmed is given back at once (reserved -> given back, as when the
    flush cannot be published) and the answer is NOT_DURABLE, "try again", never "queued" —
    unless a writer already holds it, which then settles it as usual."""
    (left, extra), confirmed = script_durable(
        "reserve",
        keys=[
            keys.stock(sale_id),
            keys.buyers(sale_id),
            keys.reservations(sale_id),
            keys.result(sale_id, user_id),
            keys.path(sale_id, user_id),
            keys.window(sale_id),
            keys.flush(sale_id),
            keys.gate_rate(sale_id, user_id),
            keys.drawn(sale_id),
        ],
        args=[
            user_id,
            request_id,
            keys.RESULT_TTL,
            path,
            flush_mark_ms,
            trace,
            keys.GATE_RATE_COUNT,
            keys.GATE_RATE_SECONDS,
        ],
    )
    if left >= 0 and not confirmed:
        if give_back(sale_id=sale_id, user_id=user_id, request_id=request_id) is GiveBack.GIVEN_BACK:
            return Reserved(Refusal.NOT_DURABLE)
        return Reserved(None, left=left, flush_due=False)  # claimed or settled: a writer has it
    if left < 0:
        refusal = Refusal(left)
        if refusal in (Refusal.IN_DRAW, Refusal.DRAW_PENDING):
            return Reserved(refusal, draw_at=float(extra))
        return Reserved(refusal, retry_after=max(1, int(extra)) if refusal is Refusal.RATE_LIMITED else 0)
    return Reserved(None, left=left, flush_due=bool(extra))


# --- a draw sale (docs/draw.md) --------------------------------------------------------------


@dataclass(frozen=True)
class Entered:
    refusal: Refusal | None  # IN_DRAW here means "no entry window now": the caller reserves
    draw_at: float = 0  # epoch seconds of the draw, when entered
    first: bool = False  # entered by this call (not before)
    retry_after: int = 0


def enter_call(*, sale_id: int, user_id: int, path: str, shards: int) -> dict:
    """enter.lua's keys and arguments for this shopper (tools/draw_bench sends them itself)."""
    shard = keys.entry_shard(user_id, shards)
    on_shard = [
        keys.shard_window(sale_id, shard, shards),
        keys.entrants(sale_id, shard, shards),
        keys.entry_path(sale_id, user_id, shards),
        keys.entry_rate(sale_id, user_id, shards),
        keys.entries(sale_id, shard, shards),
    ]
    # One shard is the sale's own slot: the call checks "already bought" and sets the answer too.
    on_sale = [keys.stock(sale_id), keys.buyers(sale_id), keys.result(sale_id, user_id)] if shards == 1 else []
    return {
        "keys": on_shard + on_sale,
        "args": [user_id, keys.RESULT_TTL, path, keys.GATE_RATE_COUNT, keys.GATE_RATE_SECONDS],
    }


def enter(*, sale_id: int, user_id: int, path: str) -> Entered:
    """(none) -> entered: one entry per shopper in a draw sale's entry window, no stock taken;
    the same rate limit and one-time path as reserve, and with one entry shard its "already
    bought" (with several, the drawer leaves buyers out). One round trip, on the shopper's shard."""
    answer, extra = script("enter")(**enter_call(sale_id=sale_id, user_id=user_id, path=path, shards=shards(sale_id)))
    if answer == Refusal.SHARDS_STALE:  # the sale became a draw sale with shards since this copy
        _windows.pop(sale_id, None)
        answer, extra = script("enter")(**enter_call(sale_id=sale_id, user_id=user_id, path=path, shards=int(extra)))
    if answer < 0:
        refusal = Refusal(answer)
        return Entered(refusal, retry_after=max(1, int(extra)) if refusal is Refusal.RATE_LIMITED else 0)
    return Entered(None, draw_at=float(extra), first=answer == 1)


# Entrants per SSCAN page: about a millisecond of the shard's time each (tools/draw_bench).
ENTRANTS_PAGE = 1000


def entrants(sale_id: int) -> list[int]:
    """The sale's entrants, sorted: every entry shard's, read a page at a time (SSCAN), so no
    one call holds a shard for long however many there are; less the sale's buyers (with
    several shards enter.lua cannot see them: an entrant who holds a unit already draws none).
    Complete once draw_due() answered True."""
    redis = client()
    count = _shards_stored(sale_id)
    found: set[int] = set()
    for shard in range(count):
        found.update(int(m) for m in redis.sscan_iter(keys.entrants(sale_id, shard, count), count=ENTRANTS_PAGE))
    found.difference_update(int(m) for m in redis.sscan_iter(keys.buyers(sale_id), count=ENTRANTS_PAGE))
    return sorted(found)


def entrants_count(sale_id: int) -> int:
    """Entrants over every entry shard (one pipeline)."""
    count = shards(sale_id)
    pipeline = client().pipeline(transaction=False)
    for shard in range(count):
        pipeline.scard(keys.entrants(sale_id, shard, count))
    return sum(int(n) for n in pipeline.execute())


def entries_per_second(sale_id: int) -> dict[int, int]:
    """Entries taken in each epoch second of the sale's entry window (a few dozen fields),
    summed over the entry shards."""
    return {int(second): n for second, n in _shard_hashes_summed(sale_id, keys.entries).items()}


def draw_due(sale_id: int) -> bool:
    """Has the sale's entry window closed on every entry shard, each by the clock of the node
    that holds it (the one enter.lua reads there)? A shard found due is marked closed, so from
    then on its entrants no longer change. One call per shard, on the sale's slot with one."""
    count = _shards_stored(sale_id)
    due = [script("draw_due")(keys=[keys.shard_window(sale_id, shard, count)]) == 1 for shard in range(count)]
    return all(due)


def drawn(sale_id: int) -> bool:
    """Is the sale's draw applied in full?"""
    return bool(client().exists(keys.drawn(sale_id)))


def drawn_mark(sale_id: int) -> None:
    """Mark the sale's draw applied in full, as PostgreSQL records it (SaleDraw.applied_at):
    for a Redis that lost the sale, so the stored draw is not applied a second time."""
    client().set(keys.drawn(sale_id), "1")


@contextmanager
def draw_lock(sale_id: int) -> Iterator[str | None]:
    """The sale's draw lock if free (yields its token), else None."""
    with lock_try(keys.draw_lock(sale_id), ttl=keys.DRAW_LOCK_TTL) as token:
        yield token


@dataclass(frozen=True)
class DrawApplied:
    applied: int  # winners turned into reservations now
    flush_due: bool  # the caller publishes the sale's flush
    drawn_before: bool  # the drawn mark stood already: nothing was done


def draw_apply(*, sale_id: int, winners: list[tuple[int, str]], flush_mark_ms: int) -> DrawApplied:
    """entered -> reserved for `winners` ((user id, request id), in the draw's order), a chunk
    per call (DRAW_CHUNK), then the drawn mark. Safe to repeat: an entrant already turned, or
    a sale already marked drawn, is left alone."""
    chunks = [winners[at : at + keys.DRAW_CHUNK] for at in range(0, len(winners), keys.DRAW_CHUNK)] or [[]]
    applied, flush_due = 0, False
    for number, chunk in enumerate(chunks):
        done, flush, before = script("draw_apply")(
            keys=[
                keys.stock(sale_id),
                keys.buyers(sale_id),
                keys.reservations(sale_id),
                keys.flush(sale_id),
                keys.drawn(sale_id),
                keys.won(sale_id),
                *(keys.result(sale_id, user_id) for user_id, _ in chunk),
            ],
            args=[
                keys.RESULT_TTL,
                flush_mark_ms,
                "1" if number == len(chunks) - 1 else "0",
                f"draw-{secrets.token_hex(8)}",
                *(value for user_id, request_id in chunk for value in (user_id, request_id)),
            ],
        )
        if before:
            return DrawApplied(applied, flush_due, drawn_before=True)
        applied += done
        flush_due = flush_due or bool(flush)
    sold_out_clear(sale_id)
    return DrawApplied(applied, flush_due, drawn_before=False)


class GiveBack(enum.Enum):
    GIVEN_BACK = 1
    CLAIMED = 2  # a writer holds it and will settle it: the shopper is queued after all
    GONE = 0  # settled already


def give_back(*, sale_id: int, user_id: int, request_id: str) -> GiveBack:
    """reserved, unclaimed -> gone, its unit back: the flush that would write it could not be
    published. A reservation a writer has claimed is left to that writer."""
    answer = script("give_back")(
        keys=[
            keys.reservations(sale_id),
            keys.claims(sale_id),
            keys.stock(sale_id),
            keys.buyers(sale_id),
            keys.result(sale_id, user_id),
            keys.flush(sale_id),
        ],
        args=[user_id, request_id],
    )
    outcome = GiveBack(answer)
    if outcome is GiveBack.GIVEN_BACK:
        sold_out_clear(sale_id)
    return outcome


# --- captcha, one-time path, per-sale limits ---------------------------------------------------


def limit_take(*, sale_id: int, user_id: int, action: str, limit: int) -> int:
    """Count one `action` (captcha, path) of this shopper on this sale: 0 within `limit` per
    LIMIT_WINDOW, else the seconds until the window ends (and the refusal is tallied)."""
    count = shards(sale_id)
    tally = keys.refused(sale_id, keys.entry_shard(user_id, count), count)
    return int(
        script("limit_take")(
            keys=[keys.limit(sale_id, action, user_id, count), tally],
            args=[limit, keys.LIMIT_WINDOW, action, keys.REFUSED_TTL],
        )
    )


def captcha_answer_set(*, sale_id: int, user_id: int, answer: int) -> None:
    """The answer of the captcha just drawn; it replaces any earlier one."""
    client().set(keys.captcha(sale_id, user_id, shards(sale_id)), answer, ex=keys.CAPTCHA_TTL)


def captcha_answer_take(*, sale_id: int, user_id: int) -> int | None:
    """The expected answer, consumed (one try per captcha); None when none is pending."""
    expected = client().getdel(keys.captcha(sale_id, user_id, shards(sale_id)))
    return int(expected) if expected is not None else None


def path_set(*, sale_id: int, user_id: int, path: str) -> None:
    """The shopper's one-time path; in a draw sale with entry shards also a copy on their shard,
    which enter.lua takes (the sale's copy is reserve.lua's, after the draw)."""
    count = shards(sale_id)
    if count == 1 or not draw_at(sale_id):
        client().set(keys.path(sale_id, user_id), path, ex=keys.PATH_TTL)
        return
    pipeline = client().pipeline(transaction=False)  # two slots: two commands, one round trip per node
    pipeline.set(keys.path(sale_id, user_id), path, ex=keys.PATH_TTL)
    pipeline.set(keys.entry_path(sale_id, user_id, count), path, ex=keys.PATH_TTL)
    pipeline.execute()


def refusals(sale_id: int) -> dict[str, int]:
    """Requests the per-sale limits refused, by action (summed over the entry shards)."""
    return _shard_hashes_summed(sale_id, keys.refused)


def _shard_hashes_summed(sale_id: int, key: Callable[[int, int, int], str]) -> dict[str, int]:
    """A counter hash kept once per entry shard (key(sale, shard, shards)), summed field by field."""
    count = shards(sale_id)
    pipeline = client().pipeline(transaction=False)
    for shard in range(count):
        pipeline.hgetall(key(sale_id, shard, count))
    summed: dict[str, int] = {}
    for found in pipeline.execute():
        for field, n in found.items():
            summed[text(field)] = summed.get(text(field), 0) + int(n)
    return summed


# --- the order writer ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Reservation:
    request_id: str
    user_id: int
    reserved_at: float  # epoch seconds, by Redis's clock
    trace: str  # the id of the HTTP request that bought the unit ("" if unknown)


def _reservation(request_id: bytes | str, value: bytes | str) -> Reservation:
    user_id, reserved_at, *trace = text(value).split(":", 2)  # the trace may hold ":" itself
    return Reservation(text(request_id), int(user_id), float(reserved_at), trace[0] if trace else "")


@dataclass(frozen=True)
class Claim:
    reservations: list[Reservation]
    left: int  # the sale's reservations in all, claimed or not, this batch included


def claim(
    *, sale_id: int, token: str, size: int, lease_ms: int, flush_mark_ms: int, reserved_before: float = 0
) -> Claim:
    """reserved -> claimed by `token`: up to `size` reservations that no writer holds, whose
    writer's lease ran out, or that this token holds already (a redelivered flush); with
    `reserved_before` (epoch seconds), only those made before then."""
    left, found = script("claim")(
        keys=[keys.reservations(sale_id), keys.claims(sale_id), keys.flush(sale_id)],
        args=[token, size, lease_ms, flush_mark_ms, reserved_before],
    )
    pairs = iter(found)
    return Claim([_reservation(request_id, value) for request_id, value in zip(pairs, pairs, strict=True)], left)


class Settlement(enum.Enum):
    """How the database settled a claimed reservation (settle.lua's kinds)."""

    WRITTEN = "W"  # its order is live
    WRITTEN_NOT_LIVE = "X"  # its order exists but was cancelled since
    DUPLICATE = "D"  # the shopper holds another live order of the sale
    SOLD_OUT = "S"  # the database had no unit
    REFUSED = "R"  # the database refuses the row for good


@dataclass(frozen=True)
class Settle:
    request_id: str
    user_id: int
    kind: Settlement
    order_id: int = 0


def settle(*, sale_id: int, token: str, settles: list[Settle], flush_mark_ms: int) -> tuple[int, int]:
    """claimed by `token` -> settled, each as its kind says; (settled, reservations left).
    Reservations this token no longer holds are left alone."""
    if not settles:
        return 0, reservations_count([sale_id])[sale_id]
    settled, left = script("settle")(
        keys=[
            keys.reservations(sale_id),
            keys.claims(sale_id),
            keys.stock(sale_id),
            keys.buyers(sale_id),
            keys.flush(sale_id),
            *(keys.result(sale_id, one.user_id) for one in settles),
        ],
        args=[
            token,
            keys.RESULT_TTL,
            flush_mark_ms,
            *(value for one in settles for value in (one.request_id, one.user_id, one.kind.value, one.order_id)),
        ],
    )
    if any(one.kind in (Settlement.DUPLICATE, Settlement.REFUSED) for one in settles):
        sold_out_clear(sale_id)  # units came back
    return settled, left


def flush_mark_take(*, sale_id: int, flush_mark_ms: int) -> bool:
    """Set the sale's flush mark if none stands; True when the caller must publish the flush."""
    return bool(client().set(keys.flush(sale_id), "sweep", nx=True, px=flush_mark_ms))


# --- units of cancelled orders -------------------------------------------------------------------


def ticket(sale_id: int) -> str:
    """The sale's generation, for a change that reaches Redis after its commit. Read it inside
    the transaction that holds the sale's stock lock."""
    generation = client().get(keys.generation(sale_id))
    return text(generation) if generation is not None else ""


class UnitReturn(enum.Enum):
    RETURNED = 1
    ALREADY = 0  # this order's unit came back before
    LOADED_SINCE = -1  # a load since the ticket counted it
    NOT_LOADED = -2


def unit_return(*, sale_id: int, user_id: int, order_id: int, request_id: str, ticket: str) -> UnitReturn:
    """A cancelled order's unit -> back in the stock, exactly once (see the table above)."""
    answer = script("unit_return")(
        keys=[
            keys.stock(sale_id),
            keys.buyers(sale_id),
            keys.result(sale_id, user_id),
            keys.generation(sale_id),
            keys.returned(sale_id, order_id),
            keys.reservations(sale_id),
            keys.claims(sale_id),
        ],
        args=[user_id, ticket, order_id, keys.RETURNED_TTL, request_id],
    )
    outcome = UnitReturn(answer)
    if outcome is UnitReturn.RETURNED:
        sold_out_clear(sale_id)
    return outcome


# --- a merchant's edits ----------------------------------------------------------------------------


def sale_open(*, sale_id: int, stock: int, start: float, end: float, draw: float = 0) -> bool:
    """Load a new sale (stock and window, and the second of its draw, 0 for none) unless a load
    got there first; True when loaded. The caller holds the sale's stock lock and read `stock`
    under it."""
    loaded = bool(
        script("sale_open")(
            keys=[keys.stock(sale_id), keys.window(sale_id), keys.generation(sale_id)],
            args=[stock, start, end, secrets.token_hex(8), draw],
        )
    )
    _window_spread(sale_id=sale_id, start=start, end=end, draw=draw)
    return loaded


def _window_spread(*, sale_id: int, start: float, end: float, draw: float) -> None:
    """Fix a draw sale's entry shards (settings.SECKILL_DRAW_SHARDS, once: entries already taken
    stay where they are) and copy the window to each shard, where enter.lua reads it."""
    redis = client()
    if draw:
        wanted = min(max(int(settings.SECKILL_DRAW_SHARDS), 1), SHARDS_MAX)
        redis.hsetnx(keys.window(sale_id), "shards", wanted)
    count = _shards_stored(sale_id)
    if count > 1:
        pipeline = redis.pipeline(transaction=False)
        for shard in range(count):
            pipeline.hset(keys.shard_window(sale_id, shard, count), mapping={"start": start, "end": end, "draw": draw})
        pipeline.execute()
    _windows.pop(sale_id, None)


@dataclass(frozen=True)
class StockTake:
    taken: bool | None  # None: the sale is not loaded, the database alone decides
    ticket: str


def stock_take(*, sale_id: int, count: int) -> StockTake:
    """Remove `count` units nobody holds, before the database's own UPDATE (the caller holds
    the sale's stock lock). Units handed out to shoppers cannot be taken back."""
    taken, generation = script("stock_take")(keys=[keys.stock(sale_id), keys.generation(sale_id)], args=[count])
    sold_out_clear(sale_id)
    return StockTake(None if taken == -1 else bool(taken), generation.decode() if generation else "")


def stock_add(*, sale_id: int, count: int, ticket: str) -> bool:
    """`count` units the database gained reach Redis (after the commit), unless a load since
    the ticket counted them already; True when added."""
    added = script("stock_add")(keys=[keys.stock(sale_id), keys.generation(sale_id)], args=[count, ticket])
    if added == 1:
        sold_out_clear(sale_id)
    return added == 1


def window_set(*, sale_id: int, start: float, end: float, draw: float = 0) -> None:
    """A new start or end, or admission (from the committed row): `draw` is the epoch second of
    the draw, 0 for first come, first served. Processes re-read it within WINDOW_CACHE_SECONDS."""
    client().hset(keys.window(sale_id), mapping={"start": start, "end": end, "draw": draw})
    _window_spread(sale_id=sale_id, start=start, end=end, draw=draw)


def sale_forget(*, sale_id: int) -> None:
    """Drop every key of a deleted sale, per-shopper ones included, and its entry shards'. SCAN
    visits each node of a Redis Cluster, and each DEL is one key."""
    redis = client()
    for pattern in (keys.pattern(sale_id), keys.shards_pattern(sale_id)):
        for key in redis.scan_iter(match=pattern, count=500):
            redis.delete(key)
    process_marks_clear(sale_id)


# --- loading from the database ---------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """The database's side of a sale, read in one statement under the sale's stock lock."""

    stock: int
    start: float
    end: float
    written_request_ids: list[str]  # of reservation_ids(), those whose order is in the database
    live_buyer_ids: list[int]
    draw: float = 0  # the epoch second of the sale's draw, 0 for first come, first served
    drawn: bool = False  # the draw is applied in full (SaleDraw.applied_at)


@dataclass(frozen=True)
class LoadReport:
    previous_stock: int | None  # None: Redis did not hold the sale
    stock: int
    previous_buyers: int
    buyers: int
    buyers_differ: bool

    @property
    def drifted(self) -> bool:
        return self.previous_stock != self.stock or self.buyers_differ


def reservation_ids(sale_id: int) -> list[str]:
    return [text(request_id) for request_id in client().hkeys(keys.reservations(sale_id))]


def load(*, sale_id: int, snapshot: Snapshot, apply: bool) -> LoadReport:
    """Compare Redis with `snapshot`, and with `apply` rewrite the stock (the database's less
    the reservations in flight), the buyers and the window, starting a new generation."""
    previous, stock, buyers_before, buyers, differ = script("load")(
        keys=[
            keys.stock(sale_id),
            keys.buyers(sale_id),
            keys.reservations(sale_id),
            keys.window(sale_id),
            keys.generation(sale_id),
        ],
        args=[
            snapshot.stock,
            snapshot.start,
            snapshot.end,
            "apply" if apply else "check",
            secrets.token_hex(8),
            len(snapshot.written_request_ids),
            *snapshot.written_request_ids,
            *snapshot.live_buyer_ids,
        ],
    )
    if apply:
        client().hset(keys.window(sale_id), "draw", snapshot.draw)  # entrants are no buyers: left alone
        if snapshot.drawn:
            drawn_mark(sale_id)
        _window_spread(sale_id=sale_id, start=snapshot.start, end=snapshot.end, draw=snapshot.draw)
        process_marks_clear(sale_id)
    return LoadReport(None if previous == -1 else previous, stock, buyers_before, buyers, bool(differ))


@contextmanager
def reconcile_lock(sale_id: int) -> Iterator[str]:
    """One reconciler per sale at a time; raises seckill_site.redis.LockNotAcquired."""
    with lock(keys.reconcile_lock(sale_id), ttl=keys.RECONCILE_LOCK_TTL) as token:
        yield token


def rebuild_claim(sale_id: int) -> bool:
    """Redis lost the sale: True for the one caller that gets to have it rebuilt (for a while)."""
    return bool(client().set(keys.rebuild_lock(sale_id), 1, nx=True, ex=keys.REBUILD_LOCK_TTL))


# --- reads ------------------------------------------------------------------------------------------


def stock_left(sale_ids: list[int]) -> dict[int, int | None]:
    """Units left per sale; None where the sale is not loaded. Each sale's counter lives in its
    own slot, so this is a pipeline of GETs (one MGET would be refused on a cluster)."""
    if not sale_ids:
        return {}
    pipeline = client().pipeline(transaction=False)
    for sale_id in sale_ids:
        pipeline.get(keys.stock(sale_id))
    values = pipeline.execute()
    return {sale_id: int(value) if value is not None else None for sale_id, value in zip(sale_ids, values, strict=True)}


def result(*, sale_id: int, user_id: int) -> int | None:
    """The shopper's answer: RESULT_QUEUED, an order id, RESULT_FAILED, RESULT_ENTERED, or
    RESULT_NOT_DRAWN (entered in a draw that is made without them); None when Redis holds none.
    One MGET: both keys carry the sale's hash tag. With several entry shards an entrant has no
    answer on the sale's slot until drawn: their shard's set is the answer (one more read)."""
    value, drawn_mark = client().mget([keys.result(sale_id, user_id), keys.drawn(sale_id)])
    if value is None:
        count = shards(sale_id)
        if count > 1 and client().sismember(
            keys.entrants(sale_id, keys.entry_shard(user_id, count), count), str(user_id)
        ):
            return RESULT_NOT_DRAWN if drawn_mark is not None else RESULT_ENTERED
        return None
    answer = int(value)
    return RESULT_NOT_DRAWN if answer == RESULT_ENTERED and drawn_mark is not None else answer


def reservations(sale_id: int) -> list[Reservation]:
    """The sale's reservations in flight, claimed or not."""
    return [_reservation(rid, value) for rid, value in client().hgetall(keys.reservations(sale_id)).items()]


def reservations_count(sale_ids: list[int]) -> dict[int, int]:
    """Reservations in flight per sale, in one pipeline."""
    if not sale_ids:
        return {}
    pipeline = client().pipeline(transaction=False)
    for sale_id in sale_ids:
        pipeline.hlen(keys.reservations(sale_id))
    return dict(zip(sale_ids, pipeline.execute(), strict=True))


def reservations_oldest(sale_ids: list[int]) -> tuple[int, float | None]:
    """(reservations in flight over these sales, the oldest one's epoch seconds or None)."""
    if not sale_ids:
        return 0, None
    pipeline = client().pipeline(transaction=False)
    for sale_id in sale_ids:
        pipeline.hgetall(keys.reservations(sale_id))
    waiting, oldest = 0, None
    for found in pipeline.execute():
        waiting += len(found)
        for request_id, value in found.items():
            reserved_at = _reservation(request_id, value).reserved_at
            oldest = reserved_at if oldest is None else min(oldest, reserved_at)
    return waiting, oldest
