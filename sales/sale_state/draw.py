"""A draw sale's entries and its draw (docs/draw.md), with everything about its entry shards.

`enter` (none -> entered), `draw_due` (window -> closed, per shard), `draw_apply` (entered ->
reserved for the stored winners); docs/architecture.md has the table.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings

from sales.sale_state import keys
from sales.sale_state.answers import Refusal
from sales.sale_state.marks import shards, sold_out_clear, window_forget
from seckill_site.redis import client, lock_try, script, text

# Bounds of a sale's entry shards (settings.SECKILL_DRAW_SHARDS).
SHARDS_MAX = 64


def shards_stored(sale_id: int) -> int:
    """The sale's entry shards as Redis holds them now, not this process's copy."""
    return int(client().hget(keys.window(sale_id), "shards") or 1)


def window_spread(*, sale_id: int, start: float, end: float, draw: float, entries: float = 0) -> None:
    """Fix a draw sale's entry shard count once, and copy the window to each shard."""
    redis = client()
    if draw:
        wanted = min(max(int(settings.SECKILL_DRAW_SHARDS), 1), SHARDS_MAX)
        redis.hsetnx(keys.window(sale_id), "shards", wanted)
    count = shards_stored(sale_id)
    if count > 1:
        pipeline = redis.pipeline(transaction=False)
        for shard in range(count):
            pipeline.hset(
                keys.shard_window(sale_id, shard, count),
                mapping={"start": start, "end": end, "draw": draw, "entries": entries},
            )
        pipeline.execute()
    window_forget(sale_id)


def shard_hashes_summed(sale_id: int, key: Callable[[int, int, int], str]) -> dict[str, int]:
    """A counter hash kept per entry shard, summed field by field."""
    count = shards(sale_id)
    pipeline = client().pipeline(transaction=False)
    for shard in range(count):
        pipeline.hgetall(key(sale_id, shard, count))
    summed: dict[str, int] = {}
    for found in pipeline.execute():
        for field, n in found.items():
            summed[text(field)] = summed.get(text(field), 0) + int(n)
    return summed


@dataclass(frozen=True)
class Entered:
    refusal: Refusal | None  # IN_DRAW here means "no entry window now": the caller reserves
    draw_at: float = 0  # epoch seconds of the draw, when entered
    first: bool = False  # entered by this call (not before)
    retry_after: int = 0


def enter_call(*, sale_id: int, user_id: int, path: str, shards: int) -> dict:
    """enter.lua's keys and arguments for this shopper (lab/draw_bench sends them itself)."""
    shard = keys.entry_shard(user_id, shards)
    on_shard = [
        keys.shard_window(sale_id, shard, shards),
        keys.entrants(sale_id, shard, shards),
        keys.entry_path(sale_id, user_id, shards),
        keys.entry_rate(sale_id, user_id, shards),
        keys.entries(sale_id, shard, shards),
    ]
    # With one shard the call is on the sale's slot and checks "already bought" too.
    on_sale = [keys.stock(sale_id), keys.buyers(sale_id), keys.result(sale_id, user_id)] if shards == 1 else []
    return {
        "keys": on_shard + on_sale,
        "args": [user_id, keys.RESULT_TTL, path, keys.GATE_RATE_COUNT, keys.GATE_RATE_SECONDS],
    }


def enter(*, sale_id: int, user_id: int, path: str) -> Entered:
    """(none) -> entered: one entry per shopper in the entry window, no unit taken; the same rate
    limit and one-time path as reserve. One round trip, on the shopper's shard."""
    answer, extra = script("enter")(**enter_call(sale_id=sale_id, user_id=user_id, path=path, shards=shards(sale_id)))
    if answer == Refusal.SHARDS_STALE:  # the sale became a draw sale with shards since this copy
        window_forget(sale_id)
        answer, extra = script("enter")(**enter_call(sale_id=sale_id, user_id=user_id, path=path, shards=int(extra)))
    if answer < 0:
        refusal = Refusal(answer)
        return Entered(refusal, retry_after=max(1, int(extra)) if refusal is Refusal.RATE_LIMITED else 0)
    return Entered(None, draw_at=float(extra), first=answer == 1)


# Entrants per SSCAN page: short enough that no call holds a shard for long.
ENTRANTS_PAGE = 1000


def entrants(sale_id: int) -> list[int]:
    """The sale's entrants less its buyers, sorted; complete once draw_due() answered True."""
    redis = client()
    count = shards_stored(sale_id)
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
    """Entries taken per epoch second of the entry window."""
    return {int(second): n for second, n in shard_hashes_summed(sale_id, keys.entries).items()}


def draw_due(sale_id: int) -> bool:
    """Has the entry window closed on every shard, by the clock of the node holding it? A shard
    found due is marked closed, so its entrants no longer change."""
    count = shards_stored(sale_id)
    due = [script("draw_due")(keys=[keys.shard_window(sale_id, shard, count)]) == 1 for shard in range(count)]
    return all(due)


def drawn(sale_id: int) -> bool:
    """Is the sale's draw applied in full?"""
    return bool(client().exists(keys.drawn(sale_id)))


def drawn_mark(sale_id: int) -> None:
    """Restore the mark from PostgreSQL (SaleDraw.applied_at), so a draw is never applied twice."""
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
    per call, then the drawn mark. Safe to repeat."""
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
