"""What this process knows of a sale without asking Redis: sold-out marks and window copies.

Both are kept in process memory and expire on their own, so a change reaches every process
within a bounded time and no process needs to be told: a sold-out mark lasts
SOLD_OUT_MARK_SECONDS, a window copy WINDOW_CACHE_SECONDS.
"""

from __future__ import annotations

import time

from goods.sale_state import keys
from goods.sale_state.answers import Refusal
from seckill_site.redis import client
from seckill_site.redis import now as redis_now

# Sale id -> monotonic time until which the sale counts as sold out here. When stock comes back
# (a cancellation, a load) every process sees it within a mark's life, and a sold-out sale costs
# each process at most one Redis call per mark instead of one per request.
SOLD_OUT_MARK_SECONDS = 1.0
_sold_out_until: dict[int, float] = {}

# Sale id -> (start, end, fetched at, draw, entry shards): the sale window as Redis holds it;
# draw is the epoch second of a draw sale's draw, 0 for first come, first served.
WINDOW_CACHE_SECONDS = 5.0
_windows: dict[int, tuple[float, float, float, float, int]] = {}


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
