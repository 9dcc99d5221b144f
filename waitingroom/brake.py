"""The brake: how much of a room's set pace the shop's health allows now, a factor in (0, 1].

It reads what the shop already measures: the order writer's backlog for the sale (how many
reservations wait for their order, and how long the oldest has waited: sales.sale_state, as the
seckill metrics read them), Redis's latency (the round trip of that same read) and the share of
this process's recent answers that were 503. Each signal past its threshold halves the pace; a
writer far behind halves it again. Read at most once per BRAKE_SECONDS per sale and process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sales import sale_state
from seckill_site.metrics import HTTP_REQUESTS

__all__ = ["BRAKE_SECONDS", "Health", "brake_factor", "health_factor", "health_read"]

BRAKE_SECONDS = 1.0
# Past these the shop is struggling: orders written this late, this many waiting, Redis this
# slow, this share of answers refused as busy.
WRITER_LAG_SECONDS = 5.0
OUTBOX_MAX = 2000
REDIS_SECONDS = 0.05
BUSY_SHARE = 0.05
FACTOR_MIN = 0.1


@dataclass(frozen=True)
class Health:
    writer_lag: float = 0.0  # seconds the oldest reservation has waited for its order
    outbox: int = 0  # reservations waiting for their orders
    redis_seconds: float = 0.0  # one Redis round trip
    busy_share: float = 0.0  # of this process's answers since the last read, the 503s


def health_factor(health: Health) -> float:
    """The share of the set pace the shop can take in `health`: 1 when well, halved for each
    signal past its threshold (twice for a writer four times late), never below FACTOR_MIN."""
    factor = 1.0
    if health.writer_lag > WRITER_LAG_SECONDS:
        factor /= 2
    if health.writer_lag > 4 * WRITER_LAG_SECONDS:
        factor /= 2
    if health.outbox > OUTBOX_MAX:
        factor /= 2
    if health.redis_seconds > REDIS_SECONDS:
        factor /= 2
    if health.busy_share > BUSY_SHARE:
        factor /= 2
    return max(FACTOR_MIN, factor)


_answers_seen: tuple[float, float] = (0.0, 0.0)  # (answers, 503s) at the last read


def _busy_share() -> float:
    """The share of 503s among this process's answers since the last call."""
    global _answers_seen
    total = busy = 0.0
    for metric in HTTP_REQUESTS.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total"):
                total += sample.value
                if sample.labels.get("status") == "503":
                    busy += sample.value
    seen_total, seen_busy = _answers_seen
    _answers_seen = (total, busy)
    answered = total - seen_total
    return (busy - seen_busy) / answered if answered > 0 else 0.0


def health_read(sale_id: int, *, now: float | None = None) -> Health:
    """The shop's health as it bears on `sale_id`, measured now (a Redis read)."""
    started = time.perf_counter()
    waiting, oldest_at = sale_state.reservations_oldest([sale_id])
    redis_seconds = time.perf_counter() - started
    at = time.time() if now is None else now
    return Health(
        writer_lag=max(0.0, at - oldest_at) if oldest_at is not None else 0.0,
        outbox=waiting,
        redis_seconds=redis_seconds,
        busy_share=_busy_share(),
    )


# sale id -> (read at, monotonic; its factor)
_factors: dict[int, tuple[float, float]] = {}


def brake_factor(sale_id: int, *, now: float | None = None, fresh: bool = False) -> float:
    """health_factor of the sale's health, at most BRAKE_SECONDS old (`fresh`: measured now)."""
    clock = time.monotonic()
    known = _factors.get(sale_id)
    if known is not None and not fresh and clock - known[0] < BRAKE_SECONDS:
        return known[1]
    factor = health_factor(health_read(sale_id, now=now))
    _factors[sale_id] = (clock, factor)
    return factor
