"""What the pages and the API note about each answer of the gate: a counter and log fields.

Called where the views turn `Attempt.code` into a response, so the gate itself
(`seckill.services.seckill_attempt`) stays free of it; no network call either way.
"""

from seckill.metrics import attempt_counted, attempt_outcome
from seckill_site.codes import Code
from seckill_site.logs import log_context_set


def attempt_answered(*, sale_id: int, code: Code, reservation: str | None = None) -> None:
    """`reservation`: the id of the unit a queued buy holds. The batch writer's log line for
    its order carries it, so the request and its order are found together in the logs."""
    attempt_counted(code)
    if reservation is None:
        log_context_set(sale=sale_id, outcome=attempt_outcome(code))
    else:
        log_context_set(sale=sale_id, outcome=attempt_outcome(code), reservation=reservation)
