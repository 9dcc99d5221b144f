"""How often a shopper may write to merchants: enough for a conversation, too few to flood a
merchant. Counted in Redis (django-ratelimit) per shopper over all their orders, once a message
is found good and before it is kept; the page and the API share the count."""

from django.http import HttpRequest
from django.utils.translation import gettext as _
from django_ratelimit.core import get_usage, is_ratelimited

from orders.payments.limits import TooOften
from seckill_site.ratelimit import rate_period

MESSAGE_RATE = "5/10m"


def message_try_refused(request: HttpRequest) -> TooOften | None:
    """Count one message by the signed-in shopper; the refusal when that was one too many,
    else None. Call before the message is kept."""
    usage = get_usage(request, group="orders.message", key="user", rate=MESSAGE_RATE, method=is_ratelimited.ALL,
                      increment=True)  # fmt: skip
    if usage is None or not usage["should_limit"]:
        return None
    wait = min(int(usage["time_left"]) + 1, rate_period(MESSAGE_RATE))
    return TooOften(_("You have sent several messages just now; wait a few minutes."), retry_after=wait)
