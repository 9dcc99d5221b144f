"""Attempts are closed at the provider before a unit is released, and after an order is paid
by another attempt."""

import pytest

from goods.tests.factories import make_sale
from orders.models import OrderStatus, Payment, PaymentStatus
from orders.payments.closing import payments_left_open_close
from orders.payments.services import payment_start, payment_sync
from orders.tests.factories import buy
from orders.tests.providers import alipay_buyer_pays, alipay_cashier_open
from users.tests.factories import make_address, make_user

pytestmark = pytest.mark.django_db


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
