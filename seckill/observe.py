"""What the pages and the API note about each answer of the gate: a counter and log fields.

Called where the views turn `Attempt.code` into a response, so the gate itself
(`seckill.services.seckill_attempt`) stays free of it; no network call either way.
"""

from seckill_site.codes import Code
from seckill_site.logs import log_context_set
from seckill_site.metrics import attempt_counted, attempt_outcome


def attempt_answered(*, sale_id: int, code: Code) -> None:
    attempt_counted(code)
    log_context_set(sale=sale_id, outcome=attempt_outcome(code))
