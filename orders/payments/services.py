"""Writes on an order's money: starting an attempt, a card's confirmation, a provider's
notification, the query sweep. Each transition is a conditional change under the order's row
lock (the table is in orders/payments/__init__.py); closing and refunds have modules of their own.
"""

import enum
import logging
from collections.abc import Callable, Mapping
from datetime import timedelta
from functools import partial
from typing import TypeVar

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from orders.models import ORDER_ADDRESS_FIELDS, PAID_STATUSES, Order, OrderAddress, OrderEventKind, OrderStatus
from orders.payments.limits import attempts_too_many
from orders.payments.metrics import NOTICES, PAYMENTS, SWEEP_SKIPS
from orders.payments.models import (
    Payment,
    PaymentFailure,
    PaymentNotice,
    PaymentStatus,
    Refund,
    RefundKind,
    RefundStatus,
)
from orders.payments.providers import (
    CardDeclined,
    Checkout,
    GatewayDown,
    Notice,
    NoticeRefused,
    ProviderRefused,
    Trade,
    TradeState,
    provider,
    providers_enabled,
)
from orders.reoffer import offer_close, waitlist_publish_quietly
from orders.services import OrderStateError, order_event_record, order_refusal
from sales.models import OfferOutcome
from seckill_site.errors import OUTAGES
from seckill_site.publish import task_publish
from users.models import Address

logger = logging.getLogger(__name__)
T = TypeVar("T")

# The pause before a sweep asks a provider again about an attempt it could not settle:
# doubling, up to a ceiling.
RETRY_FIRST_S = 5
RETRY_MAX_S = 300


class PaymentUnavailable(OrderStateError):
    """The provider could not be reached or refused; nothing was charged. For the shopper."""


class Captured(enum.Enum):
    PAID = "paid"  # the order is paid by this payment
    REFUNDING = "refunding"  # the order could not take it (closed, or paid already): refunded
    ALREADY = "already"  # this payment was captured before: nothing changed


def refund_publish(refund_id: int) -> None:
    """Send the refund once the transaction commits. Robust: with the broker down the refund
    stays pending, and the refund sweep sends it."""
    transaction.on_commit(lambda: task_publish("orders.refund_send", kwargs={"refund_id": refund_id}), robust=True)


def payment_start(
    *, order: Order, provider_name: str, address: Address, return_url: str, notify_url: str, mobile: bool = False
) -> tuple[Payment, Checkout]:
    """unpaid → an open attempt at `provider_name`, before the order's deadline, shipping to
    `address` (one of the buyer's, copied onto the order). The attempt is written before the
    provider hears of it, so the expiry sweep always knows what to close. PaymentUnavailable
    when the provider cannot be reached: the attempt is closed then, as no one can pay it.
    TooOften, with nothing written, when the order started too many attempts lately
    (orders.payments.limits): counted under the row lock, so racing starts cannot slip past."""
    if address.user_id != order.user_id:
        raise ValueError("the address is not the buyer's")  # callers look addresses up per shopper
    return _attempt_open(
        order=order,
        provider_name=provider_name,
        address=address,
        return_url=return_url,
        notify_url=notify_url,
        mobile=mobile,
    )


def payment_again(*, payment: Payment, return_url: str, notify_url: str) -> Payment:
    """A new open attempt at `payment`'s provider behind a failed one, shipping where the
    order already ships: what paying again with another card on the same form opens. As
    payment_start otherwise (its refusals, its limits)."""
    new, _checkout = _attempt_open(
        order=payment.order,
        provider_name=payment.provider,
        address=None,
        return_url=return_url,
        notify_url=notify_url,
        mobile=False,
    )
    return new


def _attempt_open(
    *,
    order: Order,
    provider_name: str,
    address: Address | None,
    return_url: str,
    notify_url: str,
    mobile: bool,
) -> tuple[Payment, Checkout]:
    if provider_name not in providers_enabled():
        raise PaymentUnavailable(_("This way to pay is not available."))
    with transaction.atomic():
        locked = Order.objects.select_for_update().get(pk=order.pk)
        if locked.status != OrderStatus.UNPAID or locked.pay_deadline <= timezone.now():
            raise order_refusal(locked, "paid")
        started = list(locked.payments.order_by("created_at").values_list("created_at", flat=True))
        refusal = attempts_too_many(started=started, now=timezone.now())
        if refusal is not None:
            raise refusal
        payment = Payment.objects.create(
            order=locked,
            provider=provider_name,
            trade_no=f"{settings.PAYMENT_TRADE_PREFIX}{locked.order_no}{locked.payments.count() + 1:02d}",
            amount=locked.price * locked.quantity,
            currency=settings.PAYMENT_CURRENCY,
        )
        if address is not None:
            OrderAddress.objects.update_or_create(
                order_id=locked.pk, defaults={name: getattr(address, name) for name in ORDER_ADDRESS_FIELDS}
            )
    try:
        checkout = provider(provider_name).checkout(
            payment, return_url=return_url, notify_url=notify_url, mobile=mobile
        )
    except (GatewayDown, ProviderRefused) as error:
        logger.warning("payment %s could not start: %s", payment.trade_no, error)
        # No one holds a way to pay it (an intent made meanwhile has no card and no one has
        # its secret), so it is closed for good.
        Payment.objects.filter(pk=payment.pk, status=PaymentStatus.OPEN).update(
            status=PaymentStatus.CLOSED, closed_at=timezone.now()
        )
        PAYMENTS.labels(provider_name, "unavailable").inc()
        raise PaymentUnavailable(
            _("The payment service could not be reached; nothing was charged. Try again, or choose another way to pay.")
        ) from error
    if checkout.provider_ref:
        Payment.objects.filter(pk=payment.pk).update(provider_ref=checkout.provider_ref)
        payment.provider_ref = checkout.provider_ref
    PAYMENTS.labels(provider_name, "started").inc()
    return payment, checkout


def payment_failed(*, payment: Payment, failure: str) -> bool:
    """The provider says the open attempt `payment` failed (a PaymentFailure value): recorded
    once, so the shopper's pages say the payment did not go through and offer to pay again.
    The attempt stays open (it is closed before the unit is released, as any), and money it
    takes after all still pays the order. False when it was not open, or failed already."""
    failed = Payment.objects.filter(pk=payment.pk, status=PaymentStatus.OPEN, failure="").update(
        failure=failure, failed_at=timezone.now()
    )
    if failed:
        PAYMENTS.labels(payment.provider, "failed").inc()
    return bool(failed)


def payment_retry_later(*, payment: Payment, sweep: str, error: Exception) -> int:
    """Set `payment` aside after `error`: the sweeps leave it until its pause is over
    (close_next_at), and the metric counts why. The pause, in seconds."""
    pause = min(RETRY_FIRST_S * 2 ** min(payment.close_tries, 16), RETRY_MAX_S)
    Payment.objects.filter(pk=payment.pk).update(
        close_tries=F("close_tries") + 1, close_next_at=timezone.now() + timedelta(seconds=pause)
    )
    reason = "unreachable" if isinstance(error, GatewayDown) else "refused"
    if not isinstance(error, (GatewayDown, ProviderRefused)):
        reason = "failed"
    SWEEP_SKIPS.labels(sweep, reason).inc()
    logger.warning("payment %s set aside by %s for %s s (%s): %s", payment.trade_no, sweep, pause, reason, error)
    return pause


def payment_isolated(*, sweep: str, payment: Payment, step: Callable[[], T]) -> T | None:
    """Run `step` on one attempt so that nothing about that attempt stops the rest of a sweep.
    The shop's own outages (its database, Redis) propagate: every item would fail alike, and
    the sweep's task retries. Anything else is logged with its traceback, counted, and the
    attempt set aside (payment_retry_later); None then."""
    try:
        return step()
    except OUTAGES:
        raise
    except Exception as error:
        logger.exception("payment %s: %s failed on it", payment.trade_no, sweep)
        payment_retry_later(payment=payment, sweep=sweep, error=error)
        return None


def payment_due() -> Q:
    """Attempts no sweep has set aside, or whose pause is over."""
    return Q(close_next_at__isnull=True) | Q(close_next_at__lte=timezone.now())


class PaymentDeclined(PaymentUnavailable):
    """The bank declined the card on `payment`, which is failed now; another card goes on a
    new attempt (payment_card_confirm)."""

    def __init__(self, message: str, *, payment: Payment) -> None:
        super().__init__(message)
        self.payment = payment


def payment_card_confirm(
    *, payment: Payment, token: str, return_url: str = "", notify_url: str = ""
) -> tuple[Payment, str]:
    """Pay an open card attempt with the card the browser tokenized. The attempt the card went
    on (captured if the bank said yes at once), and a client secret when the shopper must
    authenticate first. A failed attempt is never tried again: the card goes on a new attempt
    behind it (payment_again, with `return_url` and `notify_url`), so a shopper retries on
    the same form. PaymentDeclined when the bank said no (the attempt is failed then),
    PaymentUnavailable with words for the shopper when the card did not go through otherwise."""
    payment.refresh_from_db(fields=["status", "failure"])  # a try a moment ago may have failed it
    order = payment.order
    if order.status != OrderStatus.UNPAID or order.pay_deadline <= timezone.now():
        raise order_refusal(order, "paid")
    if payment.status != PaymentStatus.OPEN:
        raise PaymentUnavailable(_("This payment was closed; start again from the order."))
    if payment.failure:
        payment = payment_again(payment=payment, return_url=return_url, notify_url=notify_url)
    try:
        trade, secret = provider(payment.provider).card_confirm(payment, token=token)
    except CardDeclined as refusal:
        payment_failed(payment=payment, failure=PaymentFailure.DECLINED)
        raise PaymentDeclined(
            _("The card was not accepted: %(reason)s. Nothing was charged; try another card.") % {"reason": refusal},
            payment=payment,
        ) from refusal
    except ProviderRefused as refusal:
        # The provider's own words ("Bad request") mean nothing to a shopper: the log keeps them.
        logger.warning("payment %s: the card was refused: %s", payment.trade_no, refusal)
        raise PaymentUnavailable(
            _("The card service did not take this payment; nothing was charged. Start again from the order.")
        ) from refusal
    except GatewayDown as error:
        raise PaymentUnavailable(_("The card service could not be reached; try again in a minute.")) from error
    if trade.state == TradeState.CLOSED:  # the provider no longer has it: no one can pay it
        payment_closed_at_provider(payment=payment)
        raise PaymentUnavailable(_("This payment was closed; start again from the order."))
    if len(trade.card_last4) == 4 and trade.card_last4.isdigit():
        Payment.objects.filter(pk=payment.pk).update(card_last4=trade.card_last4)
    if trade.state == TradeState.PAID:
        payment_captured(payment=payment, trade=trade)
    payment.refresh_from_db()
    return payment, secret


def payment_captured(*, payment: Payment, trade: Trade) -> Captured:
    """The provider says `payment` was paid (a verified notification, or its own API's answer).

    Paying an unpaid order needs no deadline check: an unpaid order's unit is never released
    while an attempt is open (orders.payments.closing), so the money and the unit meet. Money the
    order cannot take — it was closed meanwhile, or another attempt paid it — is refunded in
    full. Idempotent: a payment captured before changes nothing.
    """
    now = timezone.now()
    # Dated by the provider's clock, as its records are: reconciliation compares days.
    paid_at = trade.paid_at or now
    with transaction.atomic():
        # The order's row first, as starting, closing and cancelling take it.
        order = Order.objects.select_for_update().get(pk=payment.order_id)
        current = Payment.objects.select_for_update().get(pk=payment.pk)
        if current.status not in (PaymentStatus.OPEN, PaymentStatus.CLOSED):
            return Captured.ALREADY
        provider_ref = trade.provider_ref or current.provider_ref
        if order.status == OrderStatus.UNPAID:
            Payment.objects.filter(pk=current.pk).update(
                status=PaymentStatus.SUCCEEDED, succeeded_at=paid_at, provider_ref=provider_ref
            )
            Order.objects.filter(pk=order.pk).update(status=OrderStatus.PAID, paid_at=now)
            order_event_record(order_id=order.pk, kind=OrderEventKind.PAID, note=current.trade_no)
            offer_close(order_id=order.pk, outcome=OfferOutcome.PAID)  # a draw's offer, if it is one
            if order.sale_id is not None:  # one unit fewer that could come back to a waiting list
                transaction.on_commit(partial(waitlist_publish_quietly, order.sale_id), robust=True)
            PAYMENTS.labels(current.provider, "paid").inc()
            return Captured.PAID
        Payment.objects.filter(pk=current.pk).update(
            status=PaymentStatus.REFUNDING, succeeded_at=paid_at, provider_ref=provider_ref
        )
        paid_already = order.status in (*PAID_STATUSES, OrderStatus.REFUNDED)
        refund = Refund.objects.create(
            payment=current,
            request_no=f"R{current.trade_no}",
            amount=current.amount,
            kind=RefundKind.DUPLICATE if paid_already else RefundKind.LATE,
            reason="order paid by another payment" if paid_already else "paid after the order closed",
        )
        refund_publish(refund.pk)
        PAYMENTS.labels(current.provider, "refunding").inc()
        return Captured.REFUNDING


def _payment_of(provider_name: str, notice: Notice) -> Payment:
    found = Payment.objects.filter(provider=provider_name).select_related("order")
    if notice.trade_no:
        payment = found.filter(trade_no=notice.trade_no).first()
    else:
        payment = found.filter(provider_ref=notice.provider_ref).first() if notice.provider_ref else None
    if payment is None:
        raise NoticeRefused("trade")
    if notice.provider_ref and payment.provider_ref and notice.provider_ref != payment.provider_ref:
        raise NoticeRefused("trade")
    if notice.amount is not None and notice.amount != payment.amount:
        raise NoticeRefused("amount")
    if notice.currency and notice.currency != payment.currency:
        raise NoticeRefused("currency")
    return payment


def notice_receive(*, provider_name: str, notice: Notice) -> str:
    """A verified notification: checked against the attempt we made (our trade number, the
    provider's reference, the amount, the currency; NoticeRefused if any differs), stored once,
    and applied in the same transaction — so a duplicate, even one arriving at the same moment,
    finds the stored row and changes nothing. The outcome, for the log."""
    payment = _payment_of(provider_name, notice)
    try:
        with transaction.atomic():
            stored = PaymentNotice.objects.create(
                provider=provider_name,
                event_id=notice.event_id,
                payment=payment,
                kind=notice.kind,
                outcome="received",
                payload=notice.payload,
            )
            if notice.paid:
                paid = Trade(TradeState.PAID, provider_ref=notice.provider_ref, paid_at=notice.paid_at)
                outcome = payment_captured(payment=payment, trade=paid).value
            elif notice.refunded:
                outcome = "refunded" if refund_confirmed(payment=payment) else "refund unknown"
            elif notice.failure:
                outcome = "failed" if payment_failed(payment=payment, failure=notice.failure) else "noted"
            else:
                outcome = "noted"
            PaymentNotice.objects.filter(pk=stored.pk).update(outcome=outcome)
    except IntegrityError:
        NOTICES.labels(provider_name, "duplicate").inc()
        return "duplicate"
    NOTICES.labels(provider_name, outcome).inc()
    return outcome


def refund_confirmed(*, payment: Payment, provider_ref: str = "") -> bool:
    """refunding → refunded, once the provider confirms the refund (its answer or its
    notification). False when the payment had no refund of ours to confirm."""
    now = timezone.now()
    with transaction.atomic():
        refunded = Refund.objects.filter(payment_id=payment.pk, status=RefundStatus.PENDING).update(
            status=RefundStatus.SUCCEEDED, refunded_at=now, **({"provider_ref": provider_ref} if provider_ref else {})
        )
        Payment.objects.filter(pk=payment.pk, status=PaymentStatus.REFUNDING).update(status=PaymentStatus.REFUNDED)
    return bool(refunded) or Refund.objects.filter(payment_id=payment.pk).exists()


def payment_closed_at_provider(*, payment: Payment) -> bool:
    """open → closed, confirmed: the provider says no one can pay the attempt any more (it
    closed it, or has no such trade and can no longer make one). False when it was not open."""
    return bool(
        Payment.objects.filter(pk=payment.pk, status=PaymentStatus.OPEN).update(
            status=PaymentStatus.CLOSED, closed_at=timezone.now(), close_confirmed=True
        )
    )


def payment_sync(*, payment: Payment, sweep: str = "query") -> TradeState | None:
    """Ask the provider about an open attempt whose notification has not come: capture it if
    paid, close it if the provider closed it (or no longer has it), note it failed if its
    last try did. None when the provider
    could not be reached or refused to answer: the attempt is set aside for a while."""
    try:
        trade = provider(payment.provider).query(payment)
    except (GatewayDown, ProviderRefused) as error:
        payment_retry_later(payment=payment, sweep=sweep, error=error)
        return None
    if trade.state == TradeState.PAID:
        if trade.amount is not None and trade.amount != payment.amount:
            logger.error(
                "payment %s: the provider reports %s paid, not %s", payment.trade_no, trade.amount, payment.amount
            )
            return None
        payment_captured(payment=payment, trade=trade)
    elif trade.state == TradeState.CLOSED:
        payment_closed_at_provider(payment=payment)
    elif trade.state == TradeState.OPEN and trade.failure:
        payment_failed(payment=payment, failure=trade.failure)
    return trade.state


def payment_returned(*, order: Order, params: Mapping[str, str]) -> None:
    """The shopper is back from a cashier (the paying page, the cashier's return_url), `params`
    the query they came with: unless they bring the provider's signed word that they paid,
    ask the provider about the order's newest attempt at once, so the page says what
    happened rather than wait for a sweep. Paid or failed as the provider says
    (payment_sync); and at a provider that sends a payer back with its signed word
    (signs_return), an attempt still unpaid whose shopper came back without that word is
    failed as left: they left the cashier. It stays open, so paying on it after all still
    pays the order."""
    payment = order.payments.order_by("-created_at", "-pk").first()
    if payment is None or payment.status != PaymentStatus.OPEN or payment.failure:
        return
    if order.status != OrderStatus.UNPAID or payment.provider not in providers_enabled():
        return  # a provider switched off since: the sweeps settle its attempts
    taking = provider(payment.provider)
    if taking.signs_return and taking.return_verified(params, payment):
        return  # the payer's signed word: its notification, or the query sweep, settles it
    step = partial(payment_sync, payment=payment, sweep="return")
    state = payment_isolated(sweep="return", payment=payment, step=step)
    if state in (TradeState.OPEN, TradeState.UNKNOWN) and taking.signs_return:
        payment_failed(payment=payment, failure=PaymentFailure.LEFT)


SYNC_BATCH = 200


def payments_to_query(*, older_than_s: int | None = None, limit: int = SYNC_BATCH) -> list[Payment]:
    """The query sweep's attempts: open longer than PAYMENT_QUERY_AFTER_SECONDS and not set
    aside, the newest of each order only, so one order with many attempts takes one place in
    the batch and never crowds out another shopper's; orders waiting longest first. An older
    attempt of the same order is asked about when the order is closed (closing's close finds
    it paid)."""
    age = settings.PAYMENT_QUERY_AFTER_SECONDS if older_than_s is None else older_than_s
    cutoff = timezone.now() - timedelta(seconds=age)
    due = Payment.objects.filter(payment_due(), status=PaymentStatus.OPEN, created_at__lte=cutoff)
    newest = due.filter(order_id=OuterRef("order_id")).order_by("-created_at", "-pk").values("pk")[:1]
    chosen = due.filter(pk=Subquery(newest)).select_related("order")
    return list(chosen.order_by("created_at", "pk")[:limit])


def payments_sync(*, older_than_s: int | None = None, limit: int = SYNC_BATCH) -> int:
    """The query sweep (payments_to_query), each attempt isolated (payment_isolated). The
    number found paid."""
    paid = 0
    for payment in payments_to_query(older_than_s=older_than_s, limit=limit):
        state = payment_isolated(sweep="query", payment=payment, step=partial(payment_sync, payment=payment))
        paid += state == TradeState.PAID
    return paid
