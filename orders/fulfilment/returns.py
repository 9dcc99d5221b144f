"""After-sales on a shipped or delivered order (退货退款), and shipped orders completing by
themselves. A return request's life:

    open ──approve (return address)──▶ approved ──parcel sent back──▶ sent ──received──▶ refunded
      │                                   │
      ├──decline (answer)──▶ declined     │
      └──withdraw──▶ withdrawn ◀──────────┘

Asked on a shipped order, or on a delivered one within RETURN_WINDOW_DAYS of delivery; one
under way per order (RETURN_ACTIVE, also a constraint). Receiving the parcel refunds the order
in full through its provider (orders.payments.refunds.order_refund); the unit does not go back
on sale. A shipped order completes by itself ORDER_AUTO_COMPLETE_DAYS after shipping unless a
return is under way.

Every move takes the order's row lock, checks the order and its request, moves them and writes
its line of the trail in one transaction: of two racing moves the second sees the first's
result, and is refused with an OrderStateError that says why, or (the sweep) does nothing.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from orders.fulfilment.models import RETURN_ACTIVE, Carrier, ReturnRequest, ReturnRequestStatus, Shipment
from orders.fulfilment.services import tracking_no_clean
from orders.models import Order, OrderEventKind, OrderStatus
from orders.payments.refunds import order_refund
from orders.selectors import auto_complete_at, return_until
from orders.services import OrderStateError, order_event_record
from seckill_site.errors import OUTAGES

logger = logging.getLogger(__name__)

# Overdue orders completed per sweep at most; the rest wait for the next sweep.
COMPLETE_BATCH = 500


def _locked(order_id: int) -> Order:
    return Order.objects.select_for_update().get(pk=order_id)


def _request(order: Order, request_id: int, *statuses: str) -> ReturnRequest:
    request = ReturnRequest.objects.filter(pk=request_id, order_id=order.pk).first()
    if request is None or request.status not in statuses:
        raise OrderStateError(_("This return request has moved on already; reload the order."))
    return request


def return_request_open(*, order_id: int, reason: str, actor_id: int | None) -> ReturnRequest:
    """The shopper asks to send a shipped or delivered order back for a refund, within the
    return window after delivery; refused while another return is under way."""
    reason = reason.strip()
    if not reason:
        raise OrderStateError(_("Say why you want to send it back."))
    with transaction.atomic():
        order = _locked(order_id)
        if order.status not in (OrderStatus.SHIPPED, OrderStatus.DELIVERED):
            raise OrderStateError(
                _("Only a shipped or delivered order can be sent back; this one is %(status)s.")
                % {"status": order.get_status_display()}
            )
        until = return_until(Shipment.objects.filter(order_id=order.pk).first())
        if until is not None and timezone.now() > until:
            raise OrderStateError(
                _("The time to send this order back ended %(days)d days after delivery.")
                % {"days": settings.RETURN_WINDOW_DAYS}
            )
        try:
            with transaction.atomic():
                request = ReturnRequest.objects.create(order=order, reason=reason[:200])
        except IntegrityError:
            raise OrderStateError(_("A return of this order is under way already.")) from None
        order_event_record(order_id=order.pk, kind=OrderEventKind.RETURN_REQUESTED, actor_id=actor_id, note=reason)
    return request


def return_request_approve(*, order_id: int, request_id: int, return_address: str, actor_id: int | None) -> None:
    """The merchant agrees to take the parcel back, at `return_address`."""
    return_address = " ".join(return_address.split())
    if not return_address:
        raise OrderStateError(_("Give the address the parcel goes back to."))
    with transaction.atomic():
        order = _locked(order_id)
        request = _request(order, request_id, ReturnRequestStatus.OPEN)
        ReturnRequest.objects.filter(pk=request.pk).update(
            status=ReturnRequestStatus.APPROVED,
            return_address=return_address[:200],
            decided_at=timezone.now(),
            decided_by_id=actor_id,
        )
        order_event_record(order_id=order.pk, kind=OrderEventKind.RETURN_APPROVED, actor_id=actor_id)


def return_request_decline(*, order_id: int, request_id: int, answer: str, actor_id: int | None) -> None:
    """The merchant says no, and why; the order stays shipped or delivered."""
    answer = answer.strip()
    if not answer:
        raise OrderStateError(_("Tell the shopper why the return is declined."))
    with transaction.atomic():
        order = _locked(order_id)
        request = _request(order, request_id, ReturnRequestStatus.OPEN)
        ReturnRequest.objects.filter(pk=request.pk).update(
            status=ReturnRequestStatus.DECLINED, answer=answer[:200], decided_at=timezone.now(), decided_by_id=actor_id
        )
        order_event_record(order_id=order.pk, kind=OrderEventKind.RETURN_DECLINED, actor_id=actor_id, note=answer)


def return_request_withdraw(*, order_id: int, actor_id: int | None) -> None:
    """The shopper takes the return back, before sending the parcel: the order goes on as if
    it had not been asked. Refused once the parcel is on its way back."""
    with transaction.atomic():
        order = _locked(order_id)
        withdrawn = ReturnRequest.objects.filter(
            order_id=order.pk, status__in=(ReturnRequestStatus.OPEN, ReturnRequestStatus.APPROVED)
        ).update(status=ReturnRequestStatus.WITHDRAWN)
        if not withdrawn:
            raise OrderStateError(
                _("There is no return to withdraw: the parcel is on its way back, or none was asked.")
            )
        order_event_record(order_id=order.pk, kind=OrderEventKind.RETURN_WITHDRAWN, actor_id=actor_id)


def return_parcel_sent(*, order_id: int, carrier: str, tracking_no: str, actor_id: int | None) -> ReturnRequest:
    """The shopper sent the parcel back after the merchant approved: its carrier and tracking
    number, as the shipping desk takes them."""
    if carrier not in Carrier.values:
        raise OrderStateError(_("Choose the carrier from the list."))
    tracking_no = tracking_no_clean(tracking_no)
    with transaction.atomic():
        order = _locked(order_id)
        request = ReturnRequest.objects.filter(order_id=order.pk, status=ReturnRequestStatus.APPROVED).first()
        if request is None:
            raise OrderStateError(_("Send the parcel back once the merchant approved the return."))
        ReturnRequest.objects.filter(pk=request.pk).update(
            status=ReturnRequestStatus.SENT, carrier=carrier, tracking_no=tracking_no, sent_at=timezone.now()
        )
        order_event_record(order_id=order.pk, kind=OrderEventKind.RETURN_SENT, actor_id=actor_id, note=tracking_no)
    request.refresh_from_db()
    return request


def return_parcel_received(*, order_id: int, request_id: int, actor_id: int | None) -> None:
    """The merchant has the parcel back: the order is refunded in full through its provider
    (order_refund, which marks the return refunded)."""
    with transaction.atomic():
        order = _locked(order_id)
        request = _request(order, request_id, ReturnRequestStatus.SENT)
        order_event_record(order_id=order.pk, kind=OrderEventKind.RETURN_RECEIVED, actor_id=actor_id)
        reason = _("Sent back by the shopper: %(reason)s") % {"reason": request.reason}
        order_refund(order=order, reason=reason, actor_id=actor_id)


def order_complete_overdue(*, order_id: int, now: datetime | None = None) -> bool:
    """shipped → delivered by the shop itself, ORDER_AUTO_COMPLETE_DAYS after shipping, unless
    a return is under way. False when the order moved, is not due, or a return holds it: all
    judged under the row lock, so a return asked at the same moment either holds the order or
    comes after its completion (then on a delivered order, in its window)."""
    now = now or timezone.now()
    with transaction.atomic():
        order = _locked(order_id)
        shipment = Shipment.objects.filter(order_id=order.pk).first()
        due = auto_complete_at(shipment)
        if order.status != OrderStatus.SHIPPED or due is None or due > now:
            return False
        if ReturnRequest.objects.filter(order_id=order.pk, status__in=RETURN_ACTIVE).exists():
            return False
        Shipment.objects.filter(order_id=order.pk).update(delivered_at=now)
        Order.objects.filter(pk=order.pk).update(status=OrderStatus.DELIVERED)
        order_event_record(order_id=order.pk, kind=OrderEventKind.COMPLETED, actor_id=None)
    return True


def orders_complete_overdue(*, limit: int = COMPLETE_BATCH) -> int:
    """Beat's sweep: complete the shipped orders due; how many it completed. One order that
    fails never holds up the others."""
    now = timezone.now()
    due = (
        Order.objects.filter(
            status=OrderStatus.SHIPPED,
            shipment__shipped_at__lte=now - timedelta(days=settings.ORDER_AUTO_COMPLETE_DAYS),
        )
        .exclude(return_requests__status__in=RETURN_ACTIVE)
        .order_by("shipment__shipped_at")
        .values_list("pk", flat=True)[:limit]
    )
    completed = 0
    for order_id in list(due):
        try:
            completed += order_complete_overdue(order_id=order_id, now=now)
        except OUTAGES:
            raise  # the shop's own database: the task retries the whole sweep
        except Exception:
            logger.exception("order %s: the auto-complete sweep failed on it", order_id)
    return completed
