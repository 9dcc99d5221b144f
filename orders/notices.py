"""The buyer's warning that an unpaid order is about to expire: texted once (users.notices,
"pay-reminder:<order number>") when beat's sweep finds the order unpaid within
PAY_REMINDER_LEAD_SECONDS of its deadline. After the deadline it is worth nothing and is not sent."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import CharField, Exists, OuterRef, Value
from django.db.models.functions import Concat
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from orders.models import Order, OrderStatus
from users import notices
from users.models import Notice, NoticeKind

logger = logging.getLogger(__name__)

# Orders warned per sweep at most; the rest wait for the next sweep.
SWEEP_BATCH = 2000


def notice_key(order_no: str) -> str:
    return f"pay-reminder:{order_no}"


def _text(order: Order) -> str:
    with translation.override(notices.notice_language(order.user)):
        return _("Your order for %(name)s expires at %(time)s (%(zone)s) unless paid: %(link)s") % {
            "name": order.item_name,
            "time": timezone.localtime(order.pay_deadline).strftime("%H:%M"),
            "zone": settings.TIME_ZONE,
            "link": f"{settings.SHOP_PUBLIC_URL}/orders/{order.order_no}",
        }


def pay_reminders_send() -> int:
    """Beat's sweep: warn the buyer of each unpaid order whose deadline is near; how many were sent."""
    now = timezone.now()
    key = Concat(Value("pay-reminder:"), OuterRef("order_no"), output_field=CharField())
    done = Notice.objects.filter(key=key, status__in=notices.DONE)
    due = (
        Order.objects.filter(
            status=OrderStatus.UNPAID,
            pay_deadline__gt=now,
            pay_deadline__lte=now + timedelta(seconds=settings.PAY_REMINDER_LEAD_SECONDS),
        )
        .exclude(Exists(done))
        .select_related("user")
        .order_by("pay_deadline")[:SWEEP_BATCH]
    )
    sent = 0
    for order in due:
        # One bad order never holds up the others: it stays unfinished for the next sweep.
        try:
            status = notices.notice_send(
                user=order.user,
                kind=NoticeKind.PAY_REMINDER,
                key=notice_key(order.order_no),
                text=_text(order),
                worth_until=order.pay_deadline,
            )
        except Exception:
            logger.exception("pay reminder of order %s failed", order.order_no)
            continue
        if status == notices.WAITING:
            break  # the hour has no room for notices: the rest wait for a later sweep too
        sent += status == "sent"
    return sent
