"""How often a shopper may start paying an order and try a card: enough for any real shopper (a
double click, a change between cashier and card, a few mistyped or declined cards), far too few
for a script that opens attempts by the hundred or tests stolen cards one after another.

Attempts are counted in PostgreSQL under the order's row lock (services.payment_start), so
racing requests cannot slip past. Card tries are counted in Redis (django-ratelimit) per
attempt and per shopper before a token leaves the shop; the page and the API share the counts.
"""

from datetime import datetime, timedelta

from django.http import HttpRequest
from django.utils.translation import ngettext
from django_ratelimit.core import get_usage, is_ratelimited

from orders.payments.models import Payment
from orders.services import OrderStateError
from seckill_site.ratelimit import rate_period

ATTEMPTS_PER_ORDER = 6
ATTEMPTS_WINDOW = timedelta(minutes=10)
CARD_TRIES_PER_ATTEMPT = "5/15m"
CARD_TRIES_PER_SHOPPER = "10/h"


class TooOften(OrderStateError):
    """Refused for now, nothing sent to any provider: over a limit until `retry_after` seconds pass."""

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.retry_after = max(1, retry_after)


def _minutes(seconds: int) -> int:
    return max(1, -(-seconds // 60))  # rounded up: coming back on time is never too early


def attempts_too_many(*, started: list[datetime], now: datetime) -> TooOften | None:
    """The refusal for one more attempt on an order whose attempts started at `started` (the
    order's, oldest first), or None while it has fewer than ATTEMPTS_PER_ORDER in the window."""
    recent = [moment for moment in started if moment > now - ATTEMPTS_WINDOW]
    if len(recent) < ATTEMPTS_PER_ORDER:
        return None
    frees_at = recent[-ATTEMPTS_PER_ORDER] + ATTEMPTS_WINDOW
    wait = int((frees_at - now).total_seconds()) + 1
    minutes = _minutes(wait)
    return TooOften(
        ngettext(
            "You started paying this order too many times; try again in %(minutes)d minute.",
            "You started paying this order too many times; try again in %(minutes)d minutes.",
            minutes,
        )
        % {"minutes": minutes},
        retry_after=wait,
    )


def card_try_refused(request: HttpRequest, *, payment: Payment) -> TooOften | None:
    """Count one card try on `payment` by the signed-in shopper; the refusal when that was one
    too many for the attempt or for the shopper, else None. Call before the token is sent."""
    counts = [
        (f"orders.card.attempt:{payment.pk}", CARD_TRIES_PER_ATTEMPT),
        (f"orders.card.shopper:{request.user.pk}", CARD_TRIES_PER_SHOPPER),
    ]
    for key, rate in counts:
        usage = get_usage(request, group="orders.card", key=lambda _group, _request, key=key: key, rate=rate,
                          method=is_ratelimited.ALL, increment=True)  # fmt: skip
        if usage is not None and usage["should_limit"]:
            wait = min(int(usage["time_left"]) + 1, rate_period(rate))
            minutes = _minutes(wait)
            return TooOften(
                ngettext(
                    "Too many card tries; nothing was sent to the bank. Try again in %(minutes)d minute.",
                    "Too many card tries; nothing was sent to the bank. Try again in %(minutes)d minutes.",
                    minutes,
                )
                % {"minutes": minutes},
                retry_after=wait,
            )
    return None
