"""A sale as a whole: loading it, a merchant's edits, removing it, the units of cancelled
orders coming back or handed to the next of a draw's ranking (docs/architecture.md has their
table), and the stock reads.

A ticket is the sale's generation, read in the transaction that holds the sale's stock lock
(sales.services.sale_stock_lock). A change that reaches Redis after its commit carries it; a
load in between read that change already, and the ticket no longer matches.
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sales.sale_state import keys
from sales.sale_state.draw import drawn_mark, window_spread
from sales.sale_state.marks import process_marks_clear, sold_out_clear
from seckill_site.redis import client, lock, script, text


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
    """A cancelled order's unit -> back in the stock, exactly once (the table above)."""
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


def unit_hand_over(
    *, sale_id: int, user_id: int, order_id: int, request_id: str, ticket: str, to_user_id: int, to_order_id: int
) -> UnitReturn:
    """A cancelled order's unit -> the order that offers it to the next entrant of the draw's
    ranking (orders.reoffer), exactly once and never through the stock: the entrant becomes a
    buyer answered with `to_order_id`. Its outcomes are unit_return's."""
    answer = script("unit_hand_over")(
        keys=[
            keys.stock(sale_id),
            keys.buyers(sale_id),
            keys.result(sale_id, user_id),
            keys.generation(sale_id),
            keys.returned(sale_id, order_id),
            keys.reservations(sale_id),
            keys.claims(sale_id),
            keys.result(sale_id, to_user_id),
            keys.returned(sale_id, to_order_id),
        ],
        args=[user_id, ticket, order_id, keys.RETURNED_TTL, request_id, to_user_id, to_order_id, keys.RESULT_TTL],
    )
    return UnitReturn(answer)


def buyer_is(*, sale_id: int, user_id: int) -> bool:
    """Does the shopper hold a unit of the sale in Redis (a live order or one in flight)?"""
    return bool(client().sismember(keys.buyers(sale_id), str(user_id)))


def sale_open(*, sale_id: int, stock: int, start: float, end: float, draw: float = 0, entries: float = 0) -> bool:
    """Load a new sale unless a load got there first; True when loaded. The caller holds the
    sale's stock lock and read `stock` under it. `entries`: the epoch second a draw sale's
    entries open ahead of its start, 0 when they open at the start."""
    loaded = bool(
        script("sale_open")(
            keys=[keys.stock(sale_id), keys.window(sale_id), keys.generation(sale_id)],
            args=[stock, start, end, secrets.token_hex(8), draw, entries],
        )
    )
    window_spread(sale_id=sale_id, start=start, end=end, draw=draw, entries=entries)
    return loaded


@dataclass(frozen=True)
class StockTake:
    taken: bool | None  # None: the sale is not loaded, the database alone decides
    ticket: str


def stock_take(*, sale_id: int, count: int) -> StockTake:
    """Remove `count` units nobody holds, before the database's UPDATE, under the stock lock."""
    taken, generation = script("stock_take")(keys=[keys.stock(sale_id), keys.generation(sale_id)], args=[count])
    sold_out_clear(sale_id)
    return StockTake(None if taken == -1 else bool(taken), generation.decode() if generation else "")


def stock_add(*, sale_id: int, count: int, ticket: str) -> bool:
    """Add units the database gained, after its commit, unless a load since `ticket` counted them."""
    added = script("stock_add")(keys=[keys.stock(sale_id), keys.generation(sale_id)], args=[count, ticket])
    if added == 1:
        sold_out_clear(sale_id)
    return added == 1


def window_set(*, sale_id: int, start: float, end: float, draw: float = 0, entries: float = 0) -> None:
    """A new window or admission from the committed row; processes see it within a copy's life."""
    client().hset(keys.window(sale_id), mapping={"start": start, "end": end, "draw": draw, "entries": entries})
    window_spread(sale_id=sale_id, start=start, end=end, draw=draw, entries=entries)


def sale_forget(*, sale_id: int) -> None:
    """Drop every key of a deleted sale and of its entry shards, on every node."""
    redis = client()
    for pattern in (keys.pattern(sale_id), keys.shards_pattern(sale_id)):
        for key in redis.scan_iter(match=pattern, count=500):
            redis.delete(key)
    process_marks_clear(sale_id)


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
    entries: float = 0  # the epoch second a draw sale's entries open ahead of its start, 0 at the start


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


def load(*, sale_id: int, snapshot: Snapshot, apply: bool) -> LoadReport:
    """Compare Redis with `snapshot`; with `apply` rewrite the stock (less the reservations in
    flight), the buyers and the window, starting a new generation."""
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
        # Entrants are no buyers: left alone.
        client().hset(keys.window(sale_id), mapping={"draw": snapshot.draw, "entries": snapshot.entries})
        if snapshot.drawn:
            drawn_mark(sale_id)
        window_spread(
            sale_id=sale_id, start=snapshot.start, end=snapshot.end, draw=snapshot.draw, entries=snapshot.entries
        )
        process_marks_clear(sale_id)
    return LoadReport(None if previous == -1 else previous, stock, buyers_before, buyers, bool(differ))


@contextmanager
def reconcile_lock(sale_id: int) -> Iterator[str]:
    """One reconciler per sale at a time; raises seckill_site.redis.LockNotAcquired."""
    with lock(keys.reconcile_lock(sale_id), ttl=keys.RECONCILE_LOCK_TTL) as token:
        yield token


def rebuild_claim(sale_id: int) -> bool:
    """True for the one caller that gets a lost sale rebuilt (for a while)."""
    return bool(client().set(keys.rebuild_lock(sale_id), 1, nx=True, ex=keys.REBUILD_LOCK_TTL))


def stock_left(sale_ids: list[int]) -> dict[int, int | None]:
    """Units left per sale, None where it is not loaded. A pipeline: each counter has its own slot."""
    if not sale_ids:
        return {}
    pipeline = client().pipeline(transaction=False)
    for sale_id in sale_ids:
        pipeline.get(keys.stock(sale_id))
    values = pipeline.execute()
    return {sale_id: int(value) if value is not None else None for sale_id, value in zip(sale_ids, values, strict=True)}


def memory_used(sale_id: int) -> tuple[int, int]:
    """(keys, bytes by MEMORY USAGE) of the sale's own keys, per-shopper ones included: what a
    hot sale costs its node, for sizing."""
    redis = client()
    names = list(redis.scan_iter(match=keys.pattern(sale_id), count=1000))
    pipeline = redis.pipeline(transaction=False)
    for name in names:
        pipeline.memory_usage(name, samples=0)
    return len(names), sum(size or 0 for size in pipeline.execute())
