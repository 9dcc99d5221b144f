"""What this process knows of a sale without asking Redis: sold-out marks and window copies.
Both expire on their own, so a change reaches every process within a bound and none is told."""

from __future__ import annotations

import time

from sales.sale_state import keys
from sales.sale_state.answers import Refusal
from seckill_site.redis import REDIS_FAILURES, client
from seckill_site.redis import now as redis_now

# Sale id -> monotonic deadline: one Redis call per mark, not per request, for a sold-out sale.
SOLD_OUT_MARK_SECONDS = 1.0
_sold_out_until: dict[int, float] = {}
# Sale id -> how its mark is told, when not plainly SOLD_OUT (a draw sale after its draw).
_sold_out_as: dict[int, Refusal] = {}

# Sale id -> (start, end, fetched at, draw second or 0, entry shards, when entries open: the start,
# or a draw sale's second for entries taken ahead).
WINDOW_CACHE_SECONDS = 5.0
_windows: dict[int, tuple[float, float, float, float, int, float]] = {}


def sold_out_known(sale_id: int) -> bool:
    """Does this process already know the sale is sold out (no network call)?"""
    return _sold_out_until.get(sale_id, 0.0) > time.monotonic()


def sold_out_mark(sale_id: int) -> None:
    """Remember the sale is sold out, and how to say it: after a draw sale's draw by the window
    copy its caller just read, ENTRIES_CLOSED (whoever comes then has missed the entries)."""
    _sold_out_until[sale_id] = time.monotonic() + SOLD_OUT_MARK_SECONDS
    cached = _window_cached(sale_id, ask=False)
    if cached is not None and cached[3] and redis_now() >= cached[3]:
        _sold_out_as[sale_id] = Refusal.ENTRIES_CLOSED
    else:
        _sold_out_as.pop(sale_id, None)
    _closed_publish(sale_id, sold_out_refusal(sale_id).name)


def _closed_publish(sale_id: int, refusal: str | None) -> None:
    """Tell the edge what this process now tells every buy of the sale, for as long as its mark
    lasts (None: nothing any more, a unit came back). Best effort: an edge that does not see it
    passes the buy here."""
    try:
        if refusal is None:
            client().delete(keys.closed(sale_id))
        else:
            client().set(keys.closed(sale_id), refusal, px=int(SOLD_OUT_MARK_SECONDS * 1000))
    except REDIS_FAILURES:
        pass


def sold_out_refusal(sale_id: int) -> Refusal:
    """How this process tells a sold-out sale (sold_out_mark): SOLD_OUT or ENTRIES_CLOSED."""
    return _sold_out_as.get(sale_id, Refusal.SOLD_OUT)


def sold_out_clear(sale_id: int | None = None) -> None:
    if sale_id is None:
        _sold_out_until.clear()
        _sold_out_as.clear()
    else:
        _sold_out_until.pop(sale_id, None)
        _sold_out_as.pop(sale_id, None)
        _closed_publish(sale_id, None)


def window(sale_id: int) -> tuple[float, float] | None:
    """(start, end) in epoch seconds from this process's copy; None when Redis holds no window."""
    cached = _window_cached(sale_id)
    return None if cached is None else (cached[0], cached[1])


def draw_at(sale_id: int) -> float:
    """The epoch second of the sale's draw, 0 for none or when Redis holds no window."""
    cached = _window_cached(sale_id)
    return 0.0 if cached is None else cached[3]


def shards(sale_id: int) -> int:
    """The sale's entry shards as this process's copy says (1 when it says nothing)."""
    cached = _window_cached(sale_id)
    return 1 if cached is None else cached[4]


def _window_cached(sale_id: int, *, ask: bool = True) -> tuple[float, float, float, float, int, float] | None:
    """The copy; a missing or stale one is read again, or without `ask` answered None."""
    cached = _windows.get(sale_id)
    now = time.monotonic()
    if cached is not None and now - cached[2] < WINDOW_CACHE_SECONDS:
        return cached
    if not ask:
        return None
    start, end, draw, shards, entries = client().hmget(
        keys.window(sale_id), ["start", "end", "draw", "shards", "entries"]
    )
    if start is None or end is None:
        _windows.pop(sale_id, None)
        return None
    opens = float(entries or 0) if float(draw or 0) else 0.0
    _windows[sale_id] = (float(start), float(end), now, float(draw or 0), int(shards or 1), opens or float(start))
    return _windows[sale_id]


def refusal_known(sale_id: int, *, ask: bool) -> Refusal | None:
    """SOLD_OUT (ENTRIES_CLOSED for a draw sale after its draw), NOT_STARTED or ENDED if this
    process knows it: public facts, answered to anyone."""
    if sold_out_known(sale_id):
        return sold_out_refusal(sale_id)
    return window_refusal(sale_id, ask=ask)


def window_refusal(sale_id: int, *, ask: bool = True) -> Refusal | None:
    """NOT_STARTED (before the start, or before a draw sale's entries open ahead of it) or ENDED
    by the shop's clock and the window copy; None when it may be open. Without `ask` nothing
    reaches the network, and a stale copy answers None."""
    cached = _window_cached(sale_id, ask=ask)
    if cached is None:
        return None
    now = redis_now()
    if now < cached[5]:
        return Refusal.NOT_STARTED
    if now >= cached[1]:
        return Refusal.ENDED
    return None


def window_forget(sale_id: int) -> None:
    """Drop this process's copy of the sale's window: the next read asks Redis."""
    _windows.pop(sale_id, None)


def process_marks_clear(sale_id: int | None = None) -> None:
    """Forget this process's sold-out marks and window copies (of one sale, or all)."""
    sold_out_clear(sale_id)
    if sale_id is None:
        _windows.clear()
    else:
        _windows.pop(sale_id, None)
