"""Reconciliation against the providers' own records, through their stand-ins."""

from datetime import datetime, time, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from orders.models import Order, OrderStatus, Payment, PaymentMismatch, PaymentStatus, Refund, SeckillOrder
from orders.payments.closing import order_cancel_by_shopper
from orders.payments.reconcile import money_check, payments_reconcile
from orders.payments.services import payment_start, payment_sync
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import alipay_buyer_pays, alipay_cashier_open

pytestmark = pytest.mark.django_db


def _paid_at_alipay():
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    payment, checkout = payment_start(
        order=order, provider_name="alipay", address=make_address(me), return_url="", notify_url="http://127.0.0.1:9/n"
    )
    alipay_cashier_open(checkout.redirect_url)
    alipay_buyer_pays(payment.trade_no)
    return payment


def test_a_payment_the_shop_missed_is_found_and_one_it_recorded_matches(capsys):
    recorded, missed = _paid_at_alipay(), _paid_at_alipay()
    payment_sync(payment=recorded)
    found = payments_reconcile(day=timezone.localdate())
    missing = PaymentMismatch.objects.filter(kind="payment not in the shop").values_list("trade_no", flat=True)
    assert missed.trade_no in missing and recorded.trade_no not in missing
    assert found["payment not in the shop"] >= 1
    payment_sync(payment=Payment.objects.get(pk=missed.pk))  # the sweep repairs it
    with pytest.raises(CommandError):
        call_command("payments_reconcile", "--date", "not-a-date")


def test_money_check_names_each_broken_invariant():
    """Each rule, broken by hand in the tables, is reported (and a sound shop reports nothing)."""
    sale = make_sale(stock=4)
    paid = [pay(buy(sale=sale, user=make_user())) for _ in range(4)]
    assert money_check() == []
    kept_elsewhere, unrefunded, refunded_order, released = paid
    Order.objects.filter(pk=kept_elsewhere.pk).update(status=OrderStatus.CANCELLED)
    Payment.objects.filter(order=unrefunded).update(status=PaymentStatus.REFUNDED)  # no refund row
    Order.objects.filter(pk=refunded_order.pk).update(status=OrderStatus.REFUNDED)  # its payment still kept
    SeckillOrder.objects.filter(order=released).update(live=False)
    found = {(problem.kind, problem.trade_no) for problem in money_check()}
    trade = {order.pk: Payment.objects.get(order=order).trade_no for order in paid}
    assert found == {
        ("kept payment of an order not paid", trade[kept_elsewhere.pk]),
        ("kept payment of an order not paid", trade[refunded_order.pk]),
        ("captured payment neither kept nor refunded", trade[unrefunded.pk]),
        ("paid order without exactly one kept payment", unrefunded.order_no),
        ("refunded order without a refunded payment", refunded_order.order_no),
        ("paid order whose unit went back on sale", released.order_no),
    }


def _mismatches(trade_no: str) -> set[tuple[str, str]]:
    return {
        (str(day), kind) for day, kind in PaymentMismatch.objects.filter(trade_no=trade_no).values_list("day", "kind")
    }


def test_a_payment_before_midnight_learned_after_it_is_dated_by_the_provider(monkeypatch):
    """Paid at Alipay today; the shop hears of it just after its next midnight. Both days
    reconcile clean: the payment is dated by Alipay's time, as Alipay's bill dates it."""
    payment = _paid_at_alipay()
    today = timezone.localdate()
    learned = timezone.make_aware(datetime.combine(today + timedelta(days=1), time(0, 0, 5)))
    with monkeypatch.context() as clock:
        clock.setattr(timezone, "now", lambda: learned)
        payment_sync(payment=payment)
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
    payments_reconcile(day=today)
    payments_reconcile(day=today + timedelta(days=1))
    assert _mismatches(payment.trade_no) == set()
    assert timezone.localdate(Payment.objects.get(pk=payment.pk).succeeded_at) == today


def test_reconciliation_refunds_a_payment_on_a_closed_attempt_the_shop_never_saw():
    """A cashier paid after the shopper cancelled, its notify lost: the provider's bill names
    our trade, and reconciliation hands it to the late-refund path."""
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    payment, checkout = payment_start(
        order=order, provider_name="alipay", address=make_address(me), return_url="", notify_url="http://127.0.0.1:9/n"
    )
    order_cancel_by_shopper(order=order)
    alipay_cashier_open(checkout.redirect_url)
    alipay_buyer_pays(payment.trade_no)
    payments_reconcile(day=timezone.localdate())
    assert (str(timezone.localdate()), "payment not in the shop") in _mismatches(payment.trade_no)
    refund = Refund.objects.get(payment=payment)
    assert (refund.kind, refund.amount) == ("late", payment.amount)
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.REFUNDING
    assert Order.objects.get(pk=order.pk).status == OrderStatus.CANCELLED and money_check(orders=[order.pk]) == []


def test_money_check_names_a_close_the_provider_never_confirmed():
    """Closed unconfirmed long after its deadline: the provider may hold money of it."""
    order = buy(sale=make_sale(), user=make_user())
    payment, _checkout = payment_start(
        order=order, provider_name="alipay", address=make_address(order.user), return_url="", notify_url=""
    )
    order_cancel_by_shopper(order=order)
    assert money_check(orders=[order.pk]) == []  # its deadline is ahead: it may still be confirmed
    long_ago = timezone.now() - timedelta(hours=2)
    Payment.objects.filter(pk=payment.pk).update(closed_at=long_ago)
    Order.objects.filter(pk=order.pk).update(pay_deadline=long_ago)
    found = {(problem.kind, problem.trade_no) for problem in money_check(orders=[order.pk])}
    assert found == {("closed attempt the provider never confirmed", payment.trade_no)}
