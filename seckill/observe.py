"""What the pages and the API note about each answer of the gate: a counter and log fields,
outside the gate itself and with no network call."""

from seckill.metrics import attempt_counted, attempt_outcome
from seckill_site.codes import EnvelopeCode
from seckill_site.logs import log_context_set


def attempt_answered(*, sale_id: int, code: EnvelopeCode, reservation: str | None = None) -> None:
    """`reservation`, a queued buy's unit, is logged so the writer's line for its order matches."""
    attempt_counted(code)
    if reservation is None:
        log_context_set(sale=sale_id, outcome=attempt_outcome(code))
    else:
        log_context_set(sale=sale_id, outcome=attempt_outcome(code), reservation=reservation)
