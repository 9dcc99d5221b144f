"""The shopper's texts after the payment: the order shipped (carrier and tracking number), the
merchant's answer to a refund request (approved or declined, with the merchant's word), and to
a return request (approved, with the address to send the parcel to, or declined), and the
refund once a parcel sent back arrived.

Beat's sweep finds what happened within ORDER_NEWS_WORTH_SECONDS and texts each once through
users.notices ("order-shipped:<order number>", "refund-answer:<request>", "return-answer:<request>",
"return-refunded:<request>"; the return's under the shopper's "refund answers"): the moves in
orders.fulfilment.services stay free of the text provider, and a sweep that runs twice, or a
text the provider failed, finds the same notice. Older news is not sent: the shopper has
seen it on the order page by then."""

import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import TypeVar

from django.conf import settings
from django.db.models import CharField, Exists, OuterRef, QuerySet, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from orders.fulfilment.models import RefundRequest, RefundRequestStatus, ReturnRequest, ReturnRequestStatus, Shipment
from orders.models import Order
from orders.tracking import shipment_tracking_link
from users import notices
from users.models import Notice, NoticeKind

logger = logging.getLogger(__name__)

# News sent per sweep and kind at most; the rest wait for the next sweep.
SWEEP_BATCH = 2000
# How long after the event a text about it is still worth sending.
ORDER_NEWS_WORTH_SECONDS = 24 * 3600
# A carrier's page for the parcel goes into the shipping text when its address is at most this
# long: a longer one would cost the shopper's phone another message part for a link the order
# page has anyway.
TEXT_TRACKING_URL_MAX = 80

News = TypeVar("News", Shipment, RefundRequest, ReturnRequest)


def shipped_key(order_no: str) -> str:
    return f"order-shipped:{order_no}"


def refund_answer_key(request_id: int) -> str:
    return f"refund-answer:{request_id}"


def return_answer_key(request_id: int) -> str:
    return f"return-answer:{request_id}"


def return_refunded_key(request_id: int) -> str:
    return f"return-refunded:{request_id}"


def _link(order: Order) -> str:
    return f"{settings.SHOP_PUBLIC_URL}/orders/{order.order_no}"


def _shipped_text(shipment: Shipment) -> str:
    order = shipment.order
    with translation.override(notices.notice_language(order.user)):
        text = _("Your order for %(name)s has shipped with %(carrier)s, tracking number %(tracking)s: %(link)s") % {
            "name": order.item_name,
            "carrier": shipment.get_carrier_display(),
            "tracking": shipment.tracking_no,
            "link": _link(order),
        }
        tracking = shipment_tracking_link(shipment)
        if tracking is not None and tracking.per_number and len(tracking.url) <= TEXT_TRACKING_URL_MAX:
            text += " " + _("Track it: %(url)s") % {"url": tracking.url}
        return text


def _refund_answer_text(request: RefundRequest) -> str:
    order = request.order
    with translation.override(notices.notice_language(order.user)):
        if request.status == RefundRequestStatus.APPROVED:
            return _(
                "The merchant approved your refund for %(name)s: the money goes back the way you paid. %(link)s"
            ) % {"name": order.item_name, "link": _link(order)}
        return _('The merchant declined your refund for %(name)s: "%(answer)s". %(link)s') % {
            "name": order.item_name,
            "answer": request.answer,
            "link": _link(order),
        }


def _return_answer_text(request: ReturnRequest) -> str:
    order = request.order
    with translation.override(notices.notice_language(order.user)):
        if request.status == ReturnRequestStatus.DECLINED:
            return _('The merchant declined the return of %(name)s: "%(answer)s". %(link)s') % {
                "name": order.goods_name,
                "answer": request.answer,
                "link": _link(order),
            }
        return _(
            "The merchant approved the return of %(name)s. Send it to %(address)s, then give the tracking "
            "number on your order: %(link)s"
        ) % {"name": order.goods_name, "address": request.return_address, "link": _link(order)}


def _return_refunded_text(request: ReturnRequest) -> str:
    order = request.order
    with translation.override(notices.notice_language(order.user)):
        return _("Your return of %(name)s is refunded: ¥%(amount)s goes back the way you paid. %(link)s") % {
            "name": order.goods_name,
            "amount": order.price * order.quantity,
            "link": _link(order),
        }


def _send_each(
    due: Iterable[News],
    *,
    kind: str,
    key: Callable[[News], str],
    text: Callable[[News], str],
    at: Callable[[News], datetime],
) -> int:
    """Text each of `due` once, worth sending for ORDER_NEWS_WORTH_SECONDS after `at`; how
    many were sent."""
    sent = 0
    for news in due:
        # One bad order never holds up the others: it stays unfinished for the next sweep.
        try:
            status = notices.notice_send(
                user=news.order.user,
                kind=kind,
                key=key(news),
                text=text(news),
                worth_until=at(news) + timedelta(seconds=ORDER_NEWS_WORTH_SECONDS),
            )
        except Exception:
            logger.exception("%s notice of order %s failed", kind, news.order.order_no)
            continue
        if status == notices.WAITING:
            break  # the hour has no room for notices: the rest wait for a later sweep too
        sent += status == "sent"
    return sent


def _not_done(prefix: str, field: str) -> Exists:
    key = Concat(Value(prefix), Cast(OuterRef(field), CharField()), output_field=CharField())
    return Exists(Notice.objects.filter(key=key, status__in=notices.DONE))


def _shipped_due(since: datetime) -> QuerySet[Shipment]:
    return (
        Shipment.objects.filter(shipped_at__gt=since)
        .exclude(_not_done("order-shipped:", "order__order_no"))
        .select_related("order__user")
        .order_by("shipped_at")[:SWEEP_BATCH]
    )


def _answers_due(since: datetime) -> QuerySet[RefundRequest]:
    return (
        RefundRequest.objects.filter(
            status__in=(RefundRequestStatus.APPROVED, RefundRequestStatus.DECLINED), decided_at__gt=since
        )
        .exclude(_not_done("refund-answer:", "pk"))
        .select_related("order__user")
        .order_by("decided_at")[:SWEEP_BATCH]
    )


def _return_answers_due(since: datetime) -> QuerySet[ReturnRequest]:
    # Approved, then maybe sent and refunded before the sweep came: the approval is still news.
    answered = (
        ReturnRequestStatus.APPROVED,
        ReturnRequestStatus.SENT,
        ReturnRequestStatus.REFUNDED,
        ReturnRequestStatus.DECLINED,
    )
    return (
        ReturnRequest.objects.filter(status__in=answered, decided_at__gt=since)
        .exclude(_not_done("return-answer:", "pk"))
        .select_related("order__user")
        .order_by("decided_at")[:SWEEP_BATCH]
    )


def _returns_refunded_due(since: datetime) -> QuerySet[ReturnRequest]:
    return (
        ReturnRequest.objects.filter(status=ReturnRequestStatus.REFUNDED, refunded_at__gt=since)
        .exclude(_not_done("return-refunded:", "pk"))
        .select_related("order__user")
        .order_by("refunded_at")[:SWEEP_BATCH]
    )


def order_news_send() -> int:
    """Beat's sweep: text each order shipped, each refund or return request answered and each
    return refunded lately, once; how many were sent."""
    since = timezone.now() - timedelta(seconds=ORDER_NEWS_WORTH_SECONDS)
    sent = _send_each(
        _shipped_due(since),
        kind=NoticeKind.ORDER_SHIPPED,
        key=lambda shipment: shipped_key(shipment.order.order_no),
        text=_shipped_text,
        at=lambda shipment: shipment.shipped_at,
    )
    sent += _send_each(
        _answers_due(since),
        kind=NoticeKind.REFUND_ANSWER,
        key=lambda request: refund_answer_key(request.pk),
        text=_refund_answer_text,
        at=lambda request: request.decided_at or timezone.now(),
    )
    sent += _send_each(
        _return_answers_due(since),
        kind=NoticeKind.REFUND_ANSWER,
        key=lambda request: return_answer_key(request.pk),
        text=_return_answer_text,
        at=lambda request: request.decided_at or timezone.now(),
    )
    return sent + _send_each(
        _returns_refunded_due(since),
        kind=NoticeKind.REFUND_ANSWER,
        key=lambda request: return_refunded_key(request.pk),
        text=_return_refunded_text,
        at=lambda request: request.refunded_at or timezone.now(),
    )
