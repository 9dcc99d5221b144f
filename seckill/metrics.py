"""The seckill app's metrics: the gate's answers, the order writer, the reconciler, and the
reservations waiting (read at scrape time). Counting makes no network call."""

import time

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

from sales import sale_state
from sales.codes import SaleCode
from seckill.selectors import captcha_pool_size, sales_to_reconcile
from seckill_site.codes import Code, EnvelopeCode

SECKILL_ATTEMPTS = Counter("seckill_attempts_total", "doSeckill answers (page and API), by outcome", ["outcome"])
ATTEMPT_OUTCOMES = {
    Code.SUCCESS: "queued",
    SaleCode.SOLD_OUT: "sold_out",
    SaleCode.ALREADY_BOUGHT: "already_bought",
    Code.TOO_MANY_REQUESTS: "limited",
    SaleCode.PATH_INVALID: "invalid_path",
    Code.SERVER_BUSY: "busy",
    SaleCode.TRY_AGAIN: "busy",  # the broker refused the flush; the unit went back
    SaleCode.NOT_STARTED: "not_started",
    SaleCode.ENDED: "ended",
    SaleCode.ENTERED: "entered",  # in a draw sale's opening window
    SaleCode.DRAW_PENDING: "draw_pending",
    SaleCode.ENTRIES_CLOSED: "entries_closed",  # sold out after a draw sale's draw
}
# Children made once, so counting an answer is a dict lookup and an add.
_attempt_counters = {code: SECKILL_ATTEMPTS.labels(outcome) for code, outcome in ATTEMPT_OUTCOMES.items()}
_attempt_other = SECKILL_ATTEMPTS.labels("other")


def attempt_outcome(code: EnvelopeCode) -> str:
    return ATTEMPT_OUTCOMES.get(code, "other")


def attempt_counted(code: EnvelopeCode) -> None:
    """Count one answer of the gate; the views and the API call it where they answer."""
    _attempt_counters.get(code, _attempt_other).inc()


# Many "drawn" rather than "pool" at an opening means the captcha pool ran dry: make it larger.
CAPTCHAS_SERVED = Counter("seckill_captchas_total", "captcha pictures handed out, by source", ["source"])


DRAWS = Counter(
    "seckill_draws_total",
    "Draws of draw sales, by who made them (drawn: stored and applied; applied: finished one stored before; sweep),"
    " and draws refused for want of their seed's key (key_lost)",
    ["outcome"],
)

ORDERS_WRITTEN = Counter(
    "seckill_order_writes_total",
    "Reservations settled by the order writer, by outcome (refused: a row the database refuses for good)",
    ["outcome"],
)
WRITER_BATCH_SIZE = Histogram(
    "seckill_writer_batch_size",
    "Reservations per batch of the order writer",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
)
WRITER_BATCH_SECONDS = Histogram(
    "seckill_writer_batch_seconds",
    "Time to write one batch of orders (its transaction, or one by one when refused)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
RECONCILE_REPAIRS = Counter(
    "seckill_reconcile_repairs_total",
    "Sales whose Redis state the reconciler repaired or whose reservations it finished",
)
RECONCILE_FAILURES = Counter(
    "seckill_reconcile_failures_total", "Sales the reconciler failed on (the others were reconciled all the same)"
)


def redis_figures() -> list[GaugeMetricFamily]:
    """The scrape-time gauges: reservations waiting, the oldest one's age, the captcha pool."""
    waiting, oldest_at = sale_state.reservations_oldest(sales_to_reconcile())
    return [
        GaugeMetricFamily(
            "seckill_captcha_pool_ready", "Captchas drawn ahead, not handed out yet", value=captcha_pool_size()
        ),
        GaugeMetricFamily(
            "seckill_reservations_waiting", "Units handed out whose orders are not written yet", value=waiting
        ),
        GaugeMetricFamily(
            "seckill_reservation_oldest_age_seconds",
            "Age of the oldest reservation still waiting for its order (0 when none)",
            value=max(0.0, time.time() - oldest_at) if oldest_at is not None else 0.0,
        ),
    ]


def attempts_folded(key: tuple, count: int) -> None:
    """seckill_site.metrics.fast_counts' fold listener: the fast path's refusals, whose series
    key ends with the gate's code, counted as the gate's answers are."""
    code = key[-1]
    if isinstance(code, EnvelopeCode):
        _attempt_counters.get(code, _attempt_other).inc(count)
