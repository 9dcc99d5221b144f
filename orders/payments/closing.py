"""Close before release: an unpaid order gives its unit back only once every attempt to pay it
is closed at its provider, so no payment can complete for a unit sold to someone else.

Used by the shopper's cancel, the merchant's, and the expiry sweep. While a provider cannot be
reached the order stays unpaid and holds its unit, and the sweep tries again with a growing
pause; once the sale's hold (Sale.unpaid_hold_minutes) is over, the unit is released anyway,
the attempt marked closed unconfirmed, and a payment that arrives after that is refunded
(orders.payments.services.payment_captured).
"""

import logging
from datetime import timedelta

from django.db.models import Exists, F, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from orders.metrics import PAYMENTS
from orders.models import Order, OrderStatus, Payment, PaymentStatus
from orders.payments.providers import GatewayDown, TradeState, provider
from orders.payments.services import payment_captured
from orders.services import (
    REASON_EXPIRED,
    REASON_MERCHANT,
    REASON_SHOPPER,
    OrderStateError,
    order_cancel,
    order_refusal,
)

logger = logging.getLogger(__name__)

# The sweep's pause before asking an unreachable provider again: doubling, up to a ceiling.
CLOSE_RETRY_FIRST_S = 5
CLOSE_RETRY_MAX_S = 300


def _closed(payment: Payment, *, confirmed: bool) -> None:
    Payment.objects.filter(pk=payment.pk, status=PaymentStatus.OPEN).update(
        status=PaymentStatus.CLOSED, closed_at=timezone.now(), close_confirmed=confirmed
    )


def payment_close(*, payment: Payment, force: bool = False) -> bool:
    """Close one open attempt at its provider. True once it is closed (or was paid: then the
    order is paid and no cancel will take it). `force`: the hold is over, so an unreachable
    provider closes it unconfirmed."""
    try:
        trade = provider(payment.provider).close(payment)
    except GatewayDown as error:
        if force:
            logger.warning("payment %s closed unconfirmed: %s", payment.trade_no, error)
            _closed(payment, confirmed=False)
            PAYMENTS.labels(payment.provider, "closed unconfirmed").inc()
            return True
        pause = min(CLOSE_RETRY_FIRST_S * 2**payment.close_tries, CLOSE_RETRY_MAX_S)
        Payment.objects.filter(pk=payment.pk).update(
            close_tries=F("close_tries") + 1, close_next_at=timezone.now() + timedelta(seconds=pause)
        )
        logger.warning("payment %s: provider unreachable to close it, next try in %s s", payment.trade_no, pause)
        return False
    if trade.state == TradeState.PAID:
        payment_captured(payment=payment, trade=trade)
        return True
    if trade.state == TradeState.CLOSED:
        _closed(payment, confirmed=True)
        return True
    if trade.state == TradeState.UNKNOWN:
        # The provider never made the trade (a cashier never opened). The provider refuses to
        # make it after the order's deadline, which the attempt carries; before it, a saved
        # cashier page could still make it, so the close is unconfirmed and a success refunded.
        _closed(payment, confirmed=timezone.now() >= payment.order.pay_deadline)
        return True
    return False  # still being paid (a card processing): ask again later


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
    payment, which would only be refunded. The number closed."""
    left_open = (
        Payment.objects.filter(status=PaymentStatus.OPEN)
        .exclude(order__status=OrderStatus.UNPAID)
        .select_related("order")
        .order_by("pk")[:limit]
    )
    return sum(payment_close(payment=payment) for payment in left_open)


EXPIRE_BATCH_SIZE = 200


def orders_expire_unpaid(*, batch_size: int = EXPIRE_BATCH_SIZE, max_batches: int = 50) -> int:
    """Close and cancel unpaid orders past their deadline, in batches of ids in primary-key order.

    Each order is its own short transactions (order_close), so a sweep never holds many row
    locks and two sweeps at once find each other's orders no longer unpaid. An order whose
    provider is unreachable waits for its attempt's next try; once past its sale's hold it is
    released anyway. The number cancelled.
    """
    now = timezone.now()
    waiting = Payment.objects.filter(order=OuterRef("pk"), status=PaymentStatus.OPEN, close_next_at__gt=now)
    expired = 0
    last_id = 0
    for _batch in range(max_batches):
        due = (
            Order.objects.filter(status=OrderStatus.UNPAID, pay_deadline__lte=now, pk__gt=last_id)
            .exclude(Exists(waiting))
            .annotate(hold_minutes=F("sale__unpaid_hold_minutes"))
            .order_by("pk")[:batch_size]
        )
        orders = list(due)
        if not orders:
            break
        for order in orders:
            hold = timedelta(minutes=order.hold_minutes or 0)
            expired += order_close(order=order, reason=REASON_EXPIRED, force=now >= order.pay_deadline + hold)
        last_id = orders[-1].pk
    return expired
