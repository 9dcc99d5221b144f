"""The money's metrics: attempts, notifications, refunds, reconciliation and the sweeps."""

from prometheus_client import Counter, Gauge

PAYMENTS = Counter(
    "seckill_payments_total", "Payment attempts by provider and what became of them", ["provider", "event"]
)
NOTICES = Counter(
    "seckill_payment_notices_total",
    "Provider notifications by provider and outcome (refused ones by why)",
    ["provider", "outcome"],
)
REFUNDS = Counter("seckill_refunds_total", "Refunds by provider and event", ["provider", "event"])
# The last reconciliation's figure stands until the next one, whichever worker child ran it.
MISMATCHES = Gauge(
    "seckill_payment_mismatches",
    "Unresolved differences the last reconciliation found, by kind",
    ["kind"],
    multiprocess_mode="mostrecent",
)
SWEEP_SKIPS = Counter(
    "seckill_payment_sweep_skips_total",
    "Payment attempts a sweep or a shopper's check set aside for a later try, by sweep and why "
    "(unreachable: the provider's outage; refused: its refusal; failed: an error of the shop's)",
    ["sweep", "reason"],
)
