"""After the payment: the merchant ships an order and marks it delivered, the shopper confirms
receipt or asks for a refund before it ships (and may withdraw the request while it waits),
and the merchant approves or declines that.

Every move takes the order's row lock, checks where the order is, moves it and writes its line
of the audit trail (orders.services.order_event_record) in one transaction, as paying,
cancelling and refunding do: of two moves racing on one order, the second finds the first's
result and is refused with an OrderStateError that says why, in the actor's language.
"""

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from orders.fulfilment.models import Carrier, RefundRequest, RefundRequestStatus, Shipment
from orders.models import Order, OrderEventKind, OrderStatus
from orders.payments.refunds import order_refund
from orders.services import OrderStateError, order_event_record

TRACKING_NO_MAX = 40


def tracking_no_clean(value: str) -> str:
    """A carrier's tracking number as the shop keeps it: letters and digits (and '-'), upper
    case, spaces dropped. OrderStateError for anything else: no carrier prints one."""
    cleaned = "".join(value.split()).upper()
    if not cleaned:
        raise OrderStateError(_("Give the parcel's tracking number."))
    if len(cleaned) > TRACKING_NO_MAX or not all(
        char.isascii() and (char.isalnum() or char == "-") for char in cleaned
    ):
        raise OrderStateError(_("A tracking number has only letters, digits and dashes, at most 40 of them."))
    return cleaned


class OrderShippedAlready(OrderStateError):
    """The order was shipped already with this very parcel: a repeated ship, nothing to do."""


def _locked(order_id: int) -> Order:
    return Order.objects.select_for_update().get(pk=order_id)


def order_ship(*, order_id: int, carrier: str, tracking_no: str, actor_id: int | None) -> Shipment:
    """paid → shipped with its parcel's carrier and tracking number. Refused while the
    shopper's refund request waits for the merchant's answer: the merchant answers first.
    OrderShippedAlready when the order left with this tracking number before, judged under
    the row lock, so of two identical ships racing the second hears just that."""
    if carrier not in Carrier.values:
        raise OrderStateError(_("Choose the carrier from the list."))
    tracking_no = tracking_no_clean(tracking_no)
    with transaction.atomic():
        order = _locked(order_id)
        if Shipment.objects.filter(order_id=order.pk, tracking_no=tracking_no).exists():
            raise OrderShippedAlready(
                _("Order %(order)s was shipped already with tracking number %(tracking)s.")
                % {"order": order.order_no, "tracking": tracking_no}
            )
        if order.status != OrderStatus.PAID:
            raise OrderStateError(
                _("Only a paid order can be shipped; order %(order)s is %(status)s.")
                % {"order": order.order_no, "status": order.get_status_display()}
            )
        if RefundRequest.objects.filter(order_id=order.pk, status=RefundRequestStatus.OPEN).exists():
            raise OrderStateError(
                _("The shopper asked for a refund of order %(order)s: approve or decline it before shipping.")
                % {"order": order.order_no}
            )
        shipment = Shipment.objects.create(
            order=order, carrier=carrier, tracking_no=tracking_no, shipped_at=timezone.now()
        )
        Order.objects.filter(pk=order.pk).update(status=OrderStatus.SHIPPED)
        # The carrier's name is read from the shipment where shown, in the reader's language.
        order_event_record(order_id=order.pk, kind=OrderEventKind.SHIPPED, actor_id=actor_id, note=tracking_no)
    return shipment


def order_deliver(*, order_id: int, actor_id: int | None) -> None:
    """shipped → delivered: the merchant learnt the parcel arrived, or the shopper confirmed
    receiving it."""
    with transaction.atomic():
        order = _locked(order_id)
        if order.status != OrderStatus.SHIPPED:
            raise OrderStateError(
                _("Only a shipped order can be marked delivered; order %(order)s is %(status)s.")
                % {"order": order.order_no, "status": order.get_status_display()}
            )
        Shipment.objects.filter(order_id=order.pk).update(delivered_at=timezone.now())
        Order.objects.filter(pk=order.pk).update(status=OrderStatus.DELIVERED)
        order_event_record(order_id=order.pk, kind=OrderEventKind.DELIVERED, actor_id=actor_id)


def refund_request_open(*, order_id: int, reason: str, actor_id: int) -> RefundRequest:
    """The shopper asks for their money back on a paid order that has not shipped; one
    request waits at a time (also a constraint: one_open_refund_request_per_order)."""
    reason = reason.strip()
    if not reason:
        raise OrderStateError(_("Say why you want a refund."))
    with transaction.atomic():
        order = _locked(order_id)
        if order.status != OrderStatus.PAID:
            if order.status in (OrderStatus.SHIPPED, OrderStatus.DELIVERED):
                raise OrderStateError(_("This order has shipped; ask to send it back for a refund instead."))
            raise OrderStateError(
                _("Only a paid order can be refunded; this one is %(status)s.") % {"status": order.get_status_display()}
            )
        try:
            with transaction.atomic():
                request = RefundRequest.objects.create(order=order, reason=reason[:200])
        except IntegrityError:
            raise OrderStateError(_("You already asked for a refund; the merchant will answer.")) from None
        order_event_record(order_id=order.pk, kind=OrderEventKind.REFUND_REQUESTED, actor_id=actor_id, note=reason)
    return request


def _open_request(order: Order, request_id: int) -> RefundRequest:
    request = RefundRequest.objects.filter(pk=request_id, order_id=order.pk).first()
    if request is None or request.status != RefundRequestStatus.OPEN:
        raise OrderStateError(_("This refund request was answered already."))
    return request


def refund_request_withdraw(*, order_id: int, actor_id: int) -> None:
    """The shopper takes back the refund request waiting on their order, before the merchant
    answers it: the order stays paid and can ship. Refused once the merchant has answered."""
    with transaction.atomic():
        order = _locked(order_id)
        withdrawn = RefundRequest.objects.filter(order_id=order.pk, status=RefundRequestStatus.OPEN).update(
            status=RefundRequestStatus.WITHDRAWN, decided_at=timezone.now()
        )
        if not withdrawn:
            raise OrderStateError(_("There is no refund request waiting on this order: the merchant answered it."))
        order_event_record(order_id=order.pk, kind=OrderEventKind.REFUND_WITHDRAWN, actor_id=actor_id)


def refund_request_decline(*, order_id: int, request_id: int, answer: str, actor_id: int) -> None:
    """The merchant says no, and why: the order stays paid and can ship."""
    answer = answer.strip()
    if not answer:
        raise OrderStateError(_("Tell the shopper why the refund is declined."))
    with transaction.atomic():
        order = _locked(order_id)
        request = _open_request(order, request_id)
        RefundRequest.objects.filter(pk=request.pk).update(
            status=RefundRequestStatus.DECLINED, answer=answer[:200], decided_at=timezone.now(), decided_by_id=actor_id
        )
        order_event_record(order_id=order.pk, kind=OrderEventKind.REFUND_DECLINED, actor_id=actor_id, note=answer)


def refund_request_approve(*, order_id: int, request_id: int, actor_id: int) -> None:
    """The merchant says yes: the order is refunded in full through its payment provider
    (orders.payments.refunds.order_refund, which marks the request approved)."""
    with transaction.atomic():
        order = _locked(order_id)
        request = _open_request(order, request_id)
        order_refund(
            order=order, reason=_("Asked by the shopper: %(reason)s") % {"reason": request.reason}, actor_id=actor_id
        )
