"""Full refunds: asked for by the merchant, or made by the shop itself for money an order could
not take (orders.payments.services.payment_captured). A refund is written first (pending) and
sent after the commit, then again by the sweep until the provider confirms it; its number is
the provider's idempotency key, so a resend never refunds twice."""

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from orders.models import (
    PAID_STATUSES,
    RETURN_ACTIVE,
    Order,
    OrderEventKind,
    OrderStatus,
    RefundRequest,
    RefundRequestStatus,
    ReturnRequest,
    ReturnRequestStatus,
)
from orders.payments.metrics import REFUNDS
from orders.payments.models import Payment, PaymentStatus, Refund, RefundKind, RefundStatus
from orders.payments.providers import GatewayDown, ProviderRefused, provider
from orders.payments.services import refund_confirmed, refund_publish
from orders.services import OrderStateError, order_event_record
from seckill_site.errors import OUTAGES

logger = logging.getLogger(__name__)


def order_refund(*, order: Order, reason: str, actor_id: int | None) -> Refund:
    """paid, shipped or delivered → refunded, the order's payment → refunding, and a pending
        full refund, in one transaction under the order's row lock; the refund is sent after the
        commit. A shipped order is refunded once its parcel came back: the merchant says so by
        refunding. A refund request still open is approved by it, a return under way is marked
    refunded (orders.fulfilment.returns). The unit does not go back on
        sale: the merchant restocks by editing the sale, which is audited."""
    reason = reason.strip()
    if not reason:
        raise OrderStateError(_("Say why the order is refunded."))
    with transaction.atomic():
        locked = Order.objects.select_for_update().get(pk=order.pk)
        if locked.status not in PAID_STATUSES:
            raise OrderStateError(
                _("Only a paid order can be refunded; this one is %(status)s.")
                % {"status": locked.get_status_display()}
            )
        payment = Payment.objects.select_for_update().filter(order_id=locked.pk, status=PaymentStatus.SUCCEEDED).first()
        if payment is None:  # paid before the shop took payments through providers
            raise OrderStateError(_("This order has no payment on record to refund."))
        Order.objects.filter(pk=locked.pk).update(status=OrderStatus.REFUNDED)
        Payment.objects.filter(pk=payment.pk).update(status=PaymentStatus.REFUNDING)
        RefundRequest.objects.filter(order_id=locked.pk, status=RefundRequestStatus.OPEN).update(
            status=RefundRequestStatus.APPROVED, decided_at=timezone.now(), decided_by_id=actor_id
        )
        ReturnRequest.objects.filter(order_id=locked.pk, status__in=RETURN_ACTIVE).update(
            status=ReturnRequestStatus.REFUNDED, refunded_at=timezone.now()
        )
        order_event_record(order_id=locked.pk, kind=OrderEventKind.REFUNDED, actor_id=actor_id, note=reason)
        refund = Refund.objects.create(
            payment=payment,
            request_no=f"R{payment.trade_no}",
            amount=payment.amount,
            kind=RefundKind.MERCHANT,
            reason=reason[:200],
            actor_id=actor_id,
        )
        refund_publish(refund.pk)
    REFUNDS.labels(payment.provider, "requested").inc()
    return refund


def refund_send(*, refund_id: int) -> bool:
    """Send a pending refund to its provider. True once the provider confirmed it; raises
    GatewayDown (the caller retries); a provider's refusal is recorded and left for the merchant."""
    refund = Refund.objects.select_related("payment").filter(pk=refund_id, status=RefundStatus.PENDING).first()
    if refund is None:
        return True  # confirmed already
    Refund.objects.filter(pk=refund.pk).update(tries=F("tries") + 1)
    try:
        reference = provider(refund.payment.provider).refund(refund)
    except GatewayDown as error:
        Refund.objects.filter(pk=refund.pk).update(last_error=str(error)[:200])
        REFUNDS.labels(refund.payment.provider, "unreachable").inc()
        raise
    except ProviderRefused as refusal:
        logger.error("refund %s refused by %s: %s", refund.request_no, refund.payment.provider, refusal)
        Refund.objects.filter(pk=refund.pk).update(last_error=str(refusal)[:200])
        REFUNDS.labels(refund.payment.provider, "refused").inc()
        return False
    refund_confirmed(payment=refund.payment, provider_ref=reference)
    REFUNDS.labels(refund.payment.provider, "refunded").inc()
    return True


def refunds_resend(*, older_than_s: int = 30, limit: int = 200) -> int:
    """The refund sweep: pending refunds not sent for a while (a lost task, an outage). The
    number the providers confirmed."""
    cutoff = timezone.now() - timedelta(seconds=older_than_s)
    confirmed = 0
    pending = Refund.objects.filter(status=RefundStatus.PENDING, created_at__lte=cutoff)
    for refund_id, provider_name in pending.values_list("pk", "payment__provider")[:limit]:
        try:
            confirmed += refund_send(refund_id=refund_id)
        except GatewayDown:
            continue  # one provider down does not hold up the others' refunds
        except OUTAGES:
            raise  # the shop's own database or Redis: the task retries the whole sweep
        except Exception:
            # One refund that fails for a reason of its own never holds up the others.
            logger.exception("refund %s: the refund sweep failed on it", refund_id)
            REFUNDS.labels(provider_name, "failed").inc()
    return confirmed
