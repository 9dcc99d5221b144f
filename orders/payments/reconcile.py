"""Reconciliation: the money invariants over the shop's own tables (money_check, which every
test and fault run uses), and the shop's payments and refunds against each provider's records
for one day (payments_reconcile, run daily by beat and by `manage.py payments_reconcile`)."""

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.db.models import Count, F, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from orders.models import PAID_STATUSES, Order, OrderStatus, SeckillOrder
from orders.payments.metrics import MISMATCHES
from orders.payments.models import Payment, PaymentMismatch, PaymentStatus, Refund, RefundStatus
from orders.payments.providers import GatewayDown, ProviderRefused, Trade, TradeState, provider, providers_enabled
from orders.payments.services import payment_captured

logger = logging.getLogger(__name__)

_CAPTURED = (PaymentStatus.SUCCEEDED, PaymentStatus.REFUNDING, PaymentStatus.REFUNDED)
# What reconciliation records, by movement kind: stored in English, translated where shown.
_NOT_AT_PROVIDER = {
    "payment": gettext_noop("payment not at the provider"),
    "refund": gettext_noop("refund not at the provider"),
}
_NOT_IN_SHOP = {"payment": gettext_noop("payment not in the shop"), "refund": gettext_noop("refund not in the shop")}
_AMOUNT_DIFFERS = {
    "payment": gettext_noop("payment amount differs"),
    "refund": gettext_noop("refund amount differs"),
}


# How long after its close and its order's deadline an unconfirmed close may stay unconfirmed:
# the unconfirmed-close sweep asks every PAYMENT_SYNC_SECONDS, so past this it cannot reach
# the provider, and money may be taken that no order holds.
UNCONFIRMED_CLOSE_GRACE = timedelta(hours=1)


@dataclass(frozen=True)
class Problem:
    kind: str
    trade_no: str  # the payment's, or the order number when no payment is involved
    detail: str


def money_check(*, orders: list[int] | None = None) -> list[Problem]:
    """The money invariants, over every order (or the orders with these ids):

    - every captured payment belongs to exactly one paid order, or is refunded in full;
    - no order is paid twice (also a constraint: one_kept_payment_per_order);
    - no paid (or refunded) order lacks its captured payment;
    - a paid order's unit is never also back in the sale (its sale order stays live);
    - no attempt stays closed unconfirmed long after its deadline (UNCONFIRMED_CLOSE_GRACE):
      the provider may hold money of it that the shop has not seen.
    """
    payments = Payment.objects.all() if orders is None else Payment.objects.filter(order_id__in=orders)
    scope = Order.objects.all() if orders is None else Order.objects.filter(pk__in=orders)
    problems = []
    kept_elsewhere = payments.filter(status=PaymentStatus.SUCCEEDED).exclude(order__status__in=PAID_STATUSES)
    for trade_no, order_status in kept_elsewhere.values_list("trade_no", "order__status"):
        problems.append(Problem(gettext_noop("kept payment of an order not paid"), trade_no, f"order {order_status}"))
    # Refunding or refunded: its refund must be of the whole amount.
    unrefunded = payments.filter(status__in=_CAPTURED[1:]).exclude(refund__amount=F("amount"))
    for trade_no, refund_amount in unrefunded.values_list("trade_no", "refund__amount"):
        problems.append(
            Problem(gettext_noop("captured payment neither kept nor refunded"), trade_no, f"refund {refund_amount}")
        )
    kept = scope.annotate(kept=Count("payments", filter=Q(payments__status=PaymentStatus.SUCCEEDED)))
    for order_no, count in kept.filter(status__in=PAID_STATUSES).exclude(kept=1).values_list("order_no", "kept"):
        problems.append(Problem(gettext_noop("paid order without exactly one kept payment"), order_no, f"{count} kept"))
    refunded_orders = scope.filter(status=OrderStatus.REFUNDED).exclude(payments__status__in=_CAPTURED[1:])
    for order_no in refunded_orders.values_list("order_no", flat=True):
        problems.append(Problem(gettext_noop("refunded order without a refunded payment"), order_no, ""))
    released = SeckillOrder.objects.filter(order__in=scope, order__status__in=PAID_STATUSES, live=False)
    for order_no in released.values_list("order__order_no", flat=True):
        problems.append(Problem(gettext_noop("paid order whose unit went back on sale"), order_no, ""))
    settled_by = timezone.now() - UNCONFIRMED_CLOSE_GRACE
    unconfirmed = payments.filter(
        status=PaymentStatus.CLOSED, close_confirmed=False, closed_at__lt=settled_by, order__pay_deadline__lt=settled_by
    )
    for trade_no, closed_at in unconfirmed.values_list("trade_no", "closed_at"):
        problems.append(
            Problem(gettext_noop("closed attempt the provider never confirmed"), trade_no, f"closed {closed_at}")
        )
    return problems


def _day_bounds(day: date) -> tuple[datetime, datetime]:
    start = timezone.make_aware(datetime.combine(day, time()))
    return start, start + timedelta(days=1)


def _shop_movements(provider_name: str, day: date) -> dict[tuple[str, str], Decimal]:
    """(kind, trade number) -> amount: what the shop recorded as captured or refunded that day."""
    start, end = _day_bounds(day)
    found: dict[tuple[str, str], Decimal] = {}
    captured = Payment.objects.filter(
        provider=provider_name, status__in=_CAPTURED, succeeded_at__gte=start, succeeded_at__lt=end
    )
    for trade_no, amount in captured.values_list("trade_no", "amount"):
        found[("payment", trade_no)] = amount
    refunded = Refund.objects.filter(
        payment__provider=provider_name, status=RefundStatus.SUCCEEDED, refunded_at__gte=start, refunded_at__lt=end
    )
    for trade_no, amount in refunded.values_list("payment__trade_no", "amount"):
        found[("refund", trade_no)] = amount
    return found


def _record(day: date, provider_name: str, kind: str, trade_no: str, detail: dict) -> None:
    PaymentMismatch.objects.get_or_create(
        day=day, kind=kind, trade_no=trade_no, defaults={"provider": provider_name, "detail": detail}
    )


def _captured_unseen(provider_name: str, trade_no: str, amount: Decimal, provider_ref: str) -> None:
    """The provider's records hold a payment of an attempt of ours that the shop never saw
    paid (its notification lost, its close unconfirmed): the provider's word that it was paid,
    handed to payment_captured as any other, which refunds it unless its order can take it.
    Another amount is only recorded: the merchant looks."""
    payment = Payment.objects.filter(
        provider=provider_name, trade_no=trade_no, status__in=(PaymentStatus.OPEN, PaymentStatus.CLOSED)
    ).first()
    if payment is None or payment.amount != amount:
        return
    outcome = payment_captured(payment=payment, trade=Trade(TradeState.PAID, provider_ref=provider_ref))
    logger.warning("reconciliation found %s paid at %s, unseen: %s", trade_no, provider_name, outcome.value)


def payments_reconcile(*, day: date) -> dict[str, int]:
    """Compare `day`'s payments and refunds (the shop's time zone) with each enabled provider's
    records, and check the money invariants; record each difference once (PaymentMismatch) and
    set the metric. Kind -> count of what was found."""
    found: dict[str, int] = defaultdict(int)
    for provider_name in providers_enabled():
        try:
            theirs: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
            refs: dict[tuple[str, str], str] = {}
            start, end = _day_bounds(day)
            # A provider's day may be in another time zone: read the days it can overlap.
            for their_day in (day - timedelta(days=1), day, day + timedelta(days=1)):
                for movement in provider(provider_name).movements(their_day):
                    if start <= movement.at < end:
                        theirs[(movement.kind, movement.trade_no)] += movement.amount
                        refs[(movement.kind, movement.trade_no)] = movement.provider_ref
        except (GatewayDown, ProviderRefused) as error:
            logger.warning("reconciliation of %s on %s: %s", provider_name, day, error)
            found["provider unreachable"] += 1
            continue
        ours = _shop_movements(provider_name, day)
        for key in ours.keys() | theirs.keys():
            kind, trade_no = key
            if key not in theirs:
                name = _NOT_AT_PROVIDER[kind]
            elif key not in ours:
                name = _NOT_IN_SHOP[kind]
                if kind == "payment":
                    _captured_unseen(provider_name, trade_no, theirs[key], refs.get(key, ""))
            elif ours[key] != theirs[key]:
                name = _AMOUNT_DIFFERS[kind]
            else:
                continue
            _record(day, provider_name, name, trade_no, {"shop": str(ours.get(key)), "provider": str(theirs.get(key))})
            found[name] += 1
    for problem in money_check():
        _record(day, "", problem.kind, problem.trade_no, {"detail": problem.detail})
        found[problem.kind] += 1
    open_by_kind = dict(
        PaymentMismatch.objects.filter(resolved_at=None)
        .values_list("kind")
        .annotate(n=Count("pk"))
        .values_list("kind", "n")
    )
    for kind in set(open_by_kind) | set(found):
        MISMATCHES.labels(kind).set(open_by_kind.get(kind, 0))
    return dict(found)
