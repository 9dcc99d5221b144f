"""Attempts are closed at the provider before a unit is released, and after an order is paid
by another attempt; no single attempt the provider forgot or refuses stalls a sweep; a close
left unconfirmed is asked about until the provider confirms it or the money is refunded."""

from datetime import timedelta
from urllib.error import HTTPError

import pytest
from django.utils import timezone

from orders.models import Order, OrderStatus, Payment, PaymentStatus, Refund, RefundStatus
from orders.payments.closing import order_cancel_by_shopper, orders_expire_unpaid, payments_left_open_close
from orders.payments.reconcile import money_check
from orders.payments.refunds import refund_send
from orders.payments.services import payment_start, payment_sync, payments_sync
from orders.payments.tasks import sync_payments
from sales.models import Sale
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import alipay_buyer_pays, alipay_cashier_open

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}


def _attempt(order, provider_name: str, *, opened: bool = False):
    """An attempt at `provider_name` from the order page; Alipay's cashier opened if `opened`.
    The payment and its cashier's address (Alipay's)."""
    payment, checkout = payment_start(
        order=order,
        provider_name=provider_name,
        address=make_address(order.user),
        return_url="http://shop.test/paying",
        notify_url="http://127.0.0.1:9/notify",  # nothing listens: every notify is lost
    )
    if opened:
        alipay_cashier_open(checkout.redirect_url)
    return payment, checkout.redirect_url


def _forgotten_by_stripe(payment: Payment) -> None:
    # The intent is gone at Stripe (another account, test data cleared, an id mangled): the
    # stand-in answers 404 "no such payment_intent" for an id it never made, as Stripe does.
    Payment.objects.filter(pk=payment.pk).update(provider_ref=f"pi_forgotten{payment.pk:06d}")


def _overdue(*orders) -> None:
    Order.objects.filter(pk__in=[o.pk for o in orders]).update(pay_deadline=timezone.now() - timedelta(seconds=1))


def _status(order) -> str:
    return Order.objects.get(pk=order.pk).status


def test_an_attempt_left_open_on_a_paid_order_is_closed_at_alipay():
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    attempts = [
        payment_start(order=order, provider_name="alipay", address=make_address(me), return_url="", notify_url="")
        for _ in range(2)
    ]
    for _payment, checkout in attempts:
        alipay_cashier_open(checkout.redirect_url)
    paid, left = (payment for payment, _checkout in attempts)
    alipay_buyer_pays(paid.trade_no)
    payment_sync(payment=paid)
    order.refresh_from_db()
    assert order.status == OrderStatus.PAID
    assert Payment.objects.get(pk=left.pk).status == PaymentStatus.OPEN
    assert payments_left_open_close() == 1
    assert Payment.objects.get(pk=left.pk).status == PaymentStatus.CLOSED
    assert payments_left_open_close() == 0


def test_the_provider_forgets_an_attempt_mid_sweep_and_every_order_still_expires():
    """A card attempt Stripe no longer knows, first in the batch, an Alipay one after it: the
    forgotten intent can never be paid, so its close is confirmed, and both units go back."""
    sale = make_sale(stock=2)
    carded, alipayed = buy(sale=sale, user=make_user()), buy(sale=sale, user=make_user())
    card, _url = _attempt(carded, "stripe")
    _attempt(alipayed, "alipay", opened=True)
    _forgotten_by_stripe(card)
    _overdue(carded, alipayed)
    assert orders_expire_unpaid() == 2
    assert (_status(carded), _status(alipayed)) == (OrderStatus.CANCELLED, OrderStatus.CANCELLED)
    closed = Payment.objects.get(pk=card.pk)
    assert closed.status == PaymentStatus.CLOSED and closed.close_confirmed
    assert Sale.objects.get(pk=sale.pk).stock_count == 2 and money_check() == []


def test_a_rejected_key_sets_card_attempts_aside_and_the_sweeps_go_on(settings):
    """Stripe refuses the shop's key (rotated) while the query and expiry sweeps run: the card
    attempt is set aside with a pause, and every other order is still paid or expired."""
    sale = make_sale(stock=3)
    carded, paid, left = (buy(sale=sale, user=make_user()) for _ in range(3))
    card, _url = _attempt(carded, "stripe")
    lost_notify, _url = _attempt(paid, "alipay", opened=True)
    alipay_buyer_pays(lost_notify.trade_no)
    _attempt(left, "alipay")
    settings.STRIPE_SECRET_KEY = "rotated"  # not a key Stripe takes: 401
    assert payments_sync(older_than_s=0) == 1
    assert _status(paid) == OrderStatus.PAID
    aside = Payment.objects.get(pk=card.pk)
    assert aside.status == PaymentStatus.OPEN and aside.close_tries == 1 and aside.close_next_at > timezone.now()
    Payment.objects.filter(pk=card.pk).update(close_next_at=None)  # its pause, over
    _overdue(carded, left)
    assert orders_expire_unpaid() == 1
    assert (_status(carded), _status(left)) == (OrderStatus.UNPAID, OrderStatus.CANCELLED)
    assert Payment.objects.get(pk=card.pk).close_tries == 2  # held, as while Stripe is down
    assert money_check() == []


def test_check_now_and_cancel_answer_clearly_whatever_stripe_says(client, settings):
    """The shopper's pages ask the provider too: a forgotten intent is closed and the order
    cancelled; a rejected key answers 409 with a message; never a 500."""
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    card, _url = _attempt(order, "stripe")
    client.force_login(me)
    key, settings.STRIPE_SECRET_KEY = settings.STRIPE_SECRET_KEY, "rotated"
    assert client.post(f"/orders/{order.order_no}/paying", **JSON).status_code == 200
    refused = client.post(f"/orders/{order.order_no}/cancel", **JSON)
    assert refused.status_code == 409 and "try again" in refused.json()["msg"]
    assert _status(order) == OrderStatus.UNPAID
    settings.STRIPE_SECRET_KEY = key
    _forgotten_by_stripe(card)
    assert client.post(f"/orders/{order.order_no}/paying").status_code == 302
    assert Payment.objects.get(pk=card.pk).status == PaymentStatus.CLOSED
    cancelled = client.post(f"/orders/{order.order_no}/cancel", **JSON)
    assert cancelled.status_code == 200 and cancelled.json()["data"]["status"] == "cancelled"


def test_a_late_payment_on_an_unconfirmed_close_with_its_notify_lost_is_refunded(django_capture_on_commit_callbacks):
    """The shopper cancels before opening Alipay's cashier (the close cannot be confirmed: the
    trade does not exist yet), then pays on the saved cashier page; the notify is lost. The
    query sweep asks about the unconfirmed close, finds the money, and refunds it as late."""
    order = buy(sale=make_sale(), user=make_user())
    payment, cashier = _attempt(order, "alipay")
    order_cancel_by_shopper(order=order)
    closed = Payment.objects.get(pk=payment.pk)
    assert closed.status == PaymentStatus.CLOSED and not closed.close_confirmed
    alipay_cashier_open(cashier)
    assert alipay_buyer_pays(payment.trade_no)["trade_status"] == "TRADE_SUCCESS"
    with django_capture_on_commit_callbacks(execute=False):
        sync_payments()  # the beat's query sweep
    refund = Refund.objects.get(payment=payment)
    assert (refund.kind, refund.amount, refund.status) == ("late", payment.amount, RefundStatus.PENDING)
    assert refund_send(refund_id=refund.pk) is True
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.REFUNDED
    assert _status(order) == OrderStatus.CANCELLED and money_check() == []


def test_an_unconfirmed_close_is_asked_about_until_the_provider_confirms_it():
    """Before its deadline the trade could still be made; once the cashier opened, the sweep
    closes it at Alipay, and the close is confirmed."""
    order = buy(sale=make_sale(), user=make_user())
    payment, cashier = _attempt(order, "alipay")
    order_cancel_by_shopper(order=order)
    sync_payments()
    assert not Payment.objects.get(pk=payment.pk).close_confirmed  # not made at Alipay yet
    alipay_cashier_open(cashier)
    sync_payments()
    assert Payment.objects.get(pk=payment.pk).close_confirmed
    with pytest.raises(HTTPError, match="409"):  # closed: it takes no payment
        alipay_buyer_pays(payment.trade_no)


def test_the_query_sweep_is_fair_across_orders():
    """One order with many open attempts takes one place in the sweep's batch: another
    shopper's lost notify is still found."""
    sale = make_sale(stock=2)
    busy, other = buy(sale=sale, user=make_user()), buy(sale=sale, user=make_user())
    for _ in range(3):
        _attempt(busy, "alipay")
    lost_notify, _url = _attempt(other, "alipay", opened=True)
    alipay_buyer_pays(lost_notify.trade_no)
    assert payments_sync(older_than_s=0, limit=3) == 1
    assert _status(other) == OrderStatus.PAID
