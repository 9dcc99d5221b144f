"""Close before release: an unpaid order gives its unit back only once every attempt to pay it
is closed at its provider, so no payment can complete for a unit sold to someone else.

Used by the shopper's cancel, the merchant's, and the expiry sweep. While a provider cannot be
reached, or refuses, the order stays unpaid and holds its unit, and the sweep tries again with
a growing pause; once the sale's hold (Sale.unpaid_hold_minutes) is over, the unit is released
anyway and the attempt marked closed unconfirmed. Unconfirmed closes are asked about again
until the provider confirms them; a payment found or notified after that is refunded
(orders.payments.services.payment_captured).
"""

import logging
from datetime import timedelta
from functools import partial

from django.db.models import DateTimeField, DurationField, Exists, ExpressionWrapper, F, OuterRef, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from orders.models import Order, OrderStatus
from orders.payments.metrics import PAYMENTS, SWEEP_SKIPS
from orders.payments.models import Payment, PaymentStatus
from orders.payments.providers import GatewayDown, ProviderRefused, TradeState, provider
from orders.payments.services import (
    payment_captured,
    payment_due,
    payment_isolated,
    payment_retry_later,
    payment_sync,
)
from orders.services import (
    REASON_EXPIRED,
    REASON_MERCHANT,
    REASON_SHOPPER,
    OrderStateError,
    order_cancel,
    order_refusal,
)
from seckill_site.errors import OUTAGES

logger = logging.getLogger(__name__)


def _closed(payment: Payment, *, confirmed: bool) -> None:
    Payment.objects.filter(pk=payment.pk, status=PaymentStatus.OPEN).update(
        status=PaymentStatus.CLOSED, closed_at=timezone.now(), close_confirmed=confirmed
    )


def _cannot_be_made_any_more(payment: Payment) -> bool:
    """The provider has no such trade: a provider that makes it only when the shopper opens its
    cashier is told to refuse after the attempt's expiry, the order's deadline; before it, a
    saved cashier page could still make it."""
    return timezone.now() >= payment.order.pay_deadline


def payment_close(*, payment: Payment, force: bool = False) -> bool:
    """Close one open attempt at its provider. True once it is closed (or was paid: then the
    order is paid and no cancel will take it). `force`: the hold is over, so a provider that
    cannot be reached, or refuses, closes it unconfirmed; otherwise the attempt is set aside
    and tried again after a pause."""
    try:
        trade = provider(payment.provider).close(payment)
    except (GatewayDown, ProviderRefused) as error:
        if force:
            logger.warning("payment %s closed unconfirmed: %s", payment.trade_no, error)
            _closed(payment, confirmed=False)
            PAYMENTS.labels(payment.provider, "closed unconfirmed").inc()
            return True
        payment_retry_later(payment=payment, sweep="close", error=error)
        return False
    if trade.state == TradeState.PAID:
        payment_captured(payment=payment, trade=trade)
        return True
    if trade.state == TradeState.CLOSED:
        _closed(payment, confirmed=True)
        return True
    if trade.state == TradeState.UNKNOWN:
        # Never made (a cashier never opened): unconfirmed while it still could be, so the
        # unconfirmed-close sweep asks again and a success is refunded.
        _closed(payment, confirmed=_cannot_be_made_any_more(payment))
        return True
    return False  # still being paid (a card processing): ask again later


def payment_close_confirm(*, payment: Payment) -> bool:
    """Ask again about an attempt closed unconfirmed (its order's unit is back on sale, or
    its order cancelled), closing it at the provider if it can still be paid. True once
    settled: the close confirmed, or the money the provider took handed to payment_captured,
    which refunds it (late) unless the order can still take it. False: ask again later."""
    try:
        trade = provider(payment.provider).close(payment)
    except (GatewayDown, ProviderRefused) as error:
        payment_retry_later(payment=payment, sweep="confirm close", error=error)
        return False
    if trade.state == TradeState.PAID:
        payment_captured(payment=payment, trade=trade)
        return True
    if trade.state == TradeState.CLOSED or (trade.state == TradeState.UNKNOWN and _cannot_be_made_any_more(payment)):
        Payment.objects.filter(pk=payment.pk, status=PaymentStatus.CLOSED).update(close_confirmed=True)
        return True
    return False  # it could still be made, or is being paid: the next sweep asks again


def order_close(*, order: Order, reason: str, actor_id: int | None = None, force: bool = False) -> bool:
    """Close every open attempt of `order`, then cancel it (its unit goes back). False when an
    attempt could not be closed yet, or the order was not unpaid (or got paid meanwhile)."""
    open_payments = Payment.objects.filter(order_id=order.pk, status=PaymentStatus.OPEN).select_related("order")
    closed = [payment_close(payment=payment, force=force) for payment in open_payments]
    if not all(closed):
        return False
    return order_cancel(order_id=order.pk, reason=reason, actor_id=actor_id)


def _cancel_refusal(order: Order) -> OrderStateError:
    order.refresh_from_db()
    if order.status != OrderStatus.UNPAID:
        return order_refusal(order, "cancelled")
    return OrderStateError(_("The payment service could not be reached to stop the payment; try again in a minute."))


def order_cancel_by_shopper(*, order: Order) -> Order:
    if not order_close(order=order, reason=REASON_SHOPPER, actor_id=order.user_id):
        raise _cancel_refusal(order)
    order.refresh_from_db()
    return order


def order_cancel_by_merchant(*, order: Order, actor_id: int) -> bool:
    return order_close(order=order, reason=REASON_MERCHANT, actor_id=actor_id)


def payments_left_open_close(*, limit: int = 200) -> int:
    """Close attempts still open on orders that no longer wait for money (paid by another
    attempt, or closed): a card form left open after a decline could otherwise take a second
    payment, which would only be refunded. Each attempt isolated. The number closed."""
    left_open = (
        Payment.objects.filter(payment_due(), status=PaymentStatus.OPEN)
        .exclude(order__status=OrderStatus.UNPAID)
        .select_related("order")
        .order_by("pk")[:limit]
    )
    return sum(
        bool(payment_isolated(sweep="close left open", payment=p, step=partial(payment_close, payment=p)))
        for p in left_open
    )


def payments_unconfirmed_close(*, limit: int = 200) -> int:
    """Ask again about attempts closed unconfirmed until the provider confirms the close, or
    reports the money taken (then refunded late): a saved cashier page can still pay one until
    its time_expire, and that payment's notification may be lost. Each attempt isolated. The
    number settled."""
    unconfirmed = (
        Payment.objects.filter(payment_due(), status=PaymentStatus.CLOSED, close_confirmed=False)
        .select_related("order")
        .order_by("close_tries", "pk")[:limit]
    )
    return sum(
        bool(payment_isolated(sweep="confirm close", payment=p, step=partial(payment_close_confirm, payment=p)))
        for p in unconfirmed
    )


def payments_check(*, order: Order) -> None:
    """The shopper's "check now": ask about each of the order's open attempts (payment_sync)
    and those closed unconfirmed (payment_close_confirm), each isolated, so a provider's
    refusal or an error about one attempt never fails the page."""
    unsettled = Q(status=PaymentStatus.OPEN) | Q(status=PaymentStatus.CLOSED, close_confirmed=False)
    attempts = order.payments.filter(unsettled)
    for payment in attempts.select_related("order"):
        if payment.status == PaymentStatus.OPEN:
            step = partial(payment_sync, payment=payment, sweep="check now")
            payment_isolated(sweep="check now", payment=payment, step=step)
        else:
            payment_isolated(sweep="check now", payment=payment, step=partial(payment_close_confirm, payment=payment))


EXPIRE_BATCH_SIZE = 200


def _order_close_isolated(order: Order, *, force: bool) -> bool:
    """order_close for the expiry sweep: an order that fails is logged, counted and its open
    attempts set aside, and the sweep goes on."""
    try:
        return order_close(order=order, reason=REASON_EXPIRED, force=force)
    except OUTAGES:
        raise
    except Exception as error:
        logger.exception("order %s: the expiry sweep failed on it", order.order_no)
        open_payments = list(Payment.objects.filter(order_id=order.pk, status=PaymentStatus.OPEN))
        for payment in open_payments:
            payment_retry_later(payment=payment, sweep="expire", error=error)
        if not open_payments:
            SWEEP_SKIPS.labels("expire", "failed").inc()
        return False


def orders_expire_unpaid(*, batch_size: int = EXPIRE_BATCH_SIZE, max_batches: int = 50) -> int:
    """Close and cancel unpaid orders past their deadline, in batches of ids in primary-key order.

    Each order is its own short transactions (order_close), so a sweep never holds many row
    locks and two sweeps at once find each other's orders no longer unpaid; one that fails is
    set aside, never stopping the rest. An order whose attempt was set aside waits for its
    pause, until its sale's hold is over: then it is released anyway. The number cancelled.
    """
    now = timezone.now()
    waiting = Payment.objects.filter(order=OuterRef("pk"), status=PaymentStatus.OPEN, close_next_at__gt=now)
    hold = ExpressionWrapper(
        Coalesce(F("sale__unpaid_hold_minutes"), Value(0)) * timedelta(minutes=1), output_field=DurationField()
    )
    expired = 0
    last_id = 0
    for _batch in range(max_batches):
        due = (
            Order.objects.filter(status=OrderStatus.UNPAID, pay_deadline__lte=now, pk__gt=last_id)
            .annotate(hold_over_at=ExpressionWrapper(F("pay_deadline") + hold, output_field=DateTimeField()))
            .exclude(Q(Exists(waiting)) & Q(hold_over_at__gt=now))
            .order_by("pk")[:batch_size]
        )
        orders = list(due)
        if not orders:
            break
        for order in orders:
            expired += _order_close_isolated(order, force=now >= order.hold_over_at)
        last_id = orders[-1].pk
    return expired
