"""What the sale's scripts answer a shopper: the stored result of a buy, and the refusals.

A refusal carries the envelope code the shopper is told: every layer that refuses answers
from this one table.
"""

from __future__ import annotations

import enum

from sales.codes import SaleCode
from seckill_site.codes import Code, EnvelopeCode

# The shopper's stored answer (keys.result): an order id, or one of these.
RESULT_QUEUED = 0
RESULT_FAILED = -1
RESULT_ENTERED = -2  # in a draw, not drawn yet (enter.lua)
RESULT_NOT_DRAWN = -3  # in a draw that is made, and not among its winners (never stored: read)


class Refusal(enum.IntEnum):
    """reserve.lua's and enter.lua's refusals, by the numbers they answer."""

    code: EnvelopeCode

    def __new__(cls, number: int, code: EnvelopeCode | None = None) -> Refusal:
        assert code is not None, "every refusal names its code"  # Refusal(n) looks a member up
        member = int.__new__(cls, number)
        member._value_ = number
        member.code = code
        return member

    ALREADY_BOUGHT = -1, SaleCode.ALREADY_BOUGHT
    SOLD_OUT = -2, SaleCode.SOLD_OUT
    NOT_LOADED = -3, Code.SERVER_BUSY  # Redis lost the sale: it is rebuilt from the database
    PATH_INVALID = -4, SaleCode.PATH_INVALID  # reused, expired or guessed
    NOT_STARTED = -5, SaleCode.NOT_STARTED
    ENDED = -6, SaleCode.ENDED
    RATE_LIMITED = -7, Code.TOO_MANY_REQUESTS
    # The shopper enters instead; told only when enter.lua and reserve.lua disagree by a tick.
    IN_DRAW = -8, SaleCode.DRAW_PENDING
    DRAW_PENDING = -9, SaleCode.DRAW_PENDING  # the entry window is over and the draw is not made yet
    # No replica confirmed the reservation, which was given back.
    NOT_DURABLE = -10, SaleCode.TRY_AGAIN
    # This process's copy of the entry shards was old; enter() asks once more.
    SHARDS_STALE = -11, SaleCode.TRY_AGAIN
    # Sold out after a draw sale's draw: said as "entries have closed" (never by a script).
    ENTRIES_CLOSED = -12, SaleCode.ENTRIES_CLOSED


# The public facts (marks.refusal_known): refused to anyone, with the same answer from every
# layer that gives them (seckill.fastpath.refusal.refusal_response), the edge's included.
PUBLIC_REFUSALS = (Refusal.SOLD_OUT, Refusal.ENTRIES_CLOSED, Refusal.NOT_STARTED, Refusal.ENDED)
