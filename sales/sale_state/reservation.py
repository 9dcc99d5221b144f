"""A sale's reservations: units the gate handed to shoppers whose orders are not settled yet.

reserve (the gate) -> claim (the writer, under a lease) -> settle (after its commit), or
give_back (the gate, when its flush could not be published). docs/architecture.md, "A
reservation's life", has the table.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from sales.sale_state import keys
from sales.sale_state.answers import RESULT_ENTERED, RESULT_NOT_DRAWN, Refusal
from sales.sale_state.marks import shards, sold_out_clear
from seckill_site.redis import client, is_cluster, script, script_durable, text


@dataclass(frozen=True)
class Reserved:
    refusal: Refusal | None
    left: int = 0  # units left after this one
    flush_due: bool = False  # no flush is queued or running: the caller publishes one
    retry_after: int = 0  # seconds, with RATE_LIMITED
    draw_at: float = 0  # epoch seconds, with IN_DRAW and DRAW_PENDING


def reserve(*, sale_id: int, user_id: int, path: str, request_id: str, trace: str, flush_mark_ms: int) -> Reserved:
    """(none) -> reserved: count the rate limit, take the one-time path, check "already bought"
    and the stock, hand out one unit, in one round trip. A unit no replica confirmed (where
    REDIS_WAIT_REPLICAS asks) is given back and answered NOT_DURABLE, unless a writer holds it."""
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


class GiveBack(enum.Enum):
    GIVEN_BACK = 1
    CLAIMED = 2  # a writer holds it and will settle it: the shopper is queued after all
    GONE = 0  # settled already


def give_back(*, sale_id: int, user_id: int, request_id: str) -> GiveBack:
    """reserved, unclaimed -> gone, its unit back; a claimed one is left to its writer."""
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


@dataclass(frozen=True)
class Reservation:
    request_id: str
    user_id: int
    reserved_at: float  # epoch seconds, by Redis's clock
    trace: str  # the HTTP request id of the buy, or ""


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
    """reserved -> claimed by `token`: up to `size` that no live lease holds (or this token does),
    made before `reserved_before` (epoch seconds) when given."""
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
    """claimed by `token` -> settled as each kind says; (settled, left). Others are left alone."""
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


def result(*, sale_id: int, user_id: int) -> int | None:
    """An order id or a RESULT_* answer; None when Redis holds none. With several entry shards an
    entrant's answer is their shard's set until the draw."""
    value, drawn_mark = client().mget([keys.result(sale_id, user_id), keys.drawn(sale_id)])
    if value is None:
        count = shards(sale_id)
        if count > 1 and client().sismember(
            keys.entrants(sale_id, keys.entry_shard(user_id, count), count), str(user_id)
        ):
            return RESULT_NOT_DRAWN if drawn_mark is not None else RESULT_ENTERED
        return None
    return _result_answer(value, drawn_mark)


def _result_answer(value: bytes | str, drawn_mark: bytes | str | None) -> int:
    answer = int(value)
    return RESULT_NOT_DRAWN if answer == RESULT_ENTERED and drawn_mark is not None else answer


def result_beside(*, sale_id: int, user_id: int, others: tuple[str, ...]) -> tuple[int | None, list]:
    """The shopper's result as `result` gives it when the sale's own keys hold it (None where
    that takes a second read: an entrant of a sharded draw, or no answer), and the values of the
    keys `others`, in one pipeline: one round trip, to two Redis Cluster nodes when `others` live
    in another slot (seckill.fastpath reads the user's auth epoch and session beside it)."""
    names = (keys.result(sale_id, user_id), keys.drawn(sale_id), *others)
    redis = client()
    if is_cluster():
        pipeline = redis.pipeline(transaction=False)
        for name in names:
            pipeline.get(name)
        value, drawn_mark, *beside = pipeline.execute()
    else:  # one node holds them all: one MGET, far less client work than a pipeline
        value, drawn_mark, *beside = redis.mget(names)
    return (None if value is None else _result_answer(value, drawn_mark)), beside


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


def reservation_ids(sale_id: int) -> list[str]:
    return [text(request_id) for request_id in client().hkeys(keys.reservations(sale_id))]
