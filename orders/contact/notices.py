"""The shopper's text when the merchant answers on an order's thread.

Beat's sweep (orders.tasks.merchant_replies_send) finds the merchant's messages of the last
REPLY_WORTH_SECONDS and texts each once through users.notices ("merchant-reply:<message>"), in
the shopper's language, unless they turned such texts off: the answer itself stays free of the
text provider, and a sweep that runs twice, or a text the provider failed, finds the same
notice. The text quotes the start of the answer on one line; the thread is on the order page."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import CharField, Exists, OuterRef, QuerySet, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from orders.contact.models import OrderMessage
from users import notices
from users.models import Notice, NoticeKind

logger = logging.getLogger(__name__)

SWEEP_BATCH = 2000
# How long after the answer a text about it is still worth sending.
REPLY_WORTH_SECONDS = 24 * 3600
# The characters of the answer the text quotes.
QUOTE_MAX = 60


def reply_key(message_id: int) -> str:
    return f"merchant-reply:{message_id}"


def _quote(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= QUOTE_MAX else line[: QUOTE_MAX - 1] + "…"


def _reply_text(message: OrderMessage) -> str:
    order = message.order
    with translation.override(notices.notice_language(order.user)):
        return _("The merchant answered about your order for %(name)s: “%(quote)s” %(link)s") % {
            "name": order.item_name,
            "quote": _quote(message.text),
            "link": f"{settings.SHOP_PUBLIC_URL}/orders/{order.order_no}#messages",
        }


def _replies_due(since) -> QuerySet[OrderMessage]:
    key = Concat(Value("merchant-reply:"), Cast(OuterRef("pk"), CharField()), output_field=CharField())
    done = Notice.objects.filter(key=key, status__in=notices.DONE)
    return (
        OrderMessage.objects.filter(from_merchant=True, created_at__gt=since)
        .exclude(Exists(done))
        .select_related("order__user")
        .order_by("created_at")[:SWEEP_BATCH]
    )


def merchant_replies_send() -> int:
    """Beat's sweep: text the shopper once about each answer the merchant wrote lately; how
    many were sent."""
    sent = 0
    for message in _replies_due(timezone.now() - timedelta(seconds=REPLY_WORTH_SECONDS)):
        # One bad message never holds up the others: it stays unfinished for the next sweep.
        try:
            status = notices.notice_send(
                user=message.order.user,
                kind=NoticeKind.MERCHANT_REPLY,
                key=reply_key(message.pk),
                text=_reply_text(message),
                worth_until=message.created_at + timedelta(seconds=REPLY_WORTH_SECONDS),
            )
        except Exception:
            logger.exception("merchant reply notice of order %s failed", message.order.order_no)
            continue
        if status == notices.WAITING:
            break  # the hour has no room for notices: the rest wait for a later sweep too
        sent += status == "sent"
    return sent
