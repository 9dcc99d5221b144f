"""A merchant's full refund, through the Alipay stand-in, and what cannot be refunded."""

import pytest

from orders.models import Order, OrderStatus, Payment, PaymentStatus, RefundStatus
from orders.payments.reconcile import money_check
from orders.payments.refunds import order_refund, refund_send
from orders.payments.services import payment_start, payment_sync
from orders.services import OrderStateError
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import alipay_buyer_pays, alipay_cashier_open

pytestmark = pytest.mark.django_db


def test_a_paid_order_is_refunded_once_at_alipay():
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    payment, checkout = payment_start(
        order=order, provider_name="alipay", address=make_address(me), return_url="", notify_url="http://127.0.0.1:9/n"
    )
    alipay_cashier_open(checkout.redirect_url)
    alipay_buyer_pays(payment.trade_no)
    payment_sync(payment=payment)
    refund = order_refund(order=Order.objects.get(pk=order.pk), reason="damaged in transit", actor_id=None)
    assert Order.objects.get(pk=order.pk).status == OrderStatus.REFUNDED
    assert refund_send(refund_id=refund.pk) is True
    assert refund_send(refund_id=refund.pk) is True  # a resend finds it confirmed and sends nothing
    refund.refresh_from_db()
    assert (refund.status, refund.tries, refund.amount) == (RefundStatus.SUCCEEDED, 1, payment.amount)
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.REFUNDED
    assert money_check() == []
    with pytest.raises(OrderStateError, match="Only a paid order"):
        order_refund(order=order, reason="again", actor_id=None)


def test_what_cannot_be_refunded_is_refused_and_nothing_changes():
    order = buy(sale=make_sale(), user=make_user())
    with pytest.raises(OrderStateError, match="Only a paid order"):
        order_refund(order=order, reason="why not", actor_id=None)
    Order.objects.filter(pk=order.pk).update(status=OrderStatus.PAID)  # paid before payments had providers
    with pytest.raises(OrderStateError, match="no payment on record"):
        order_refund(order=order, reason="why not", actor_id=None)
    with pytest.raises(OrderStateError, match="Say why"):
        order_refund(order=order, reason="  ", actor_id=None)
    assert Order.objects.get(pk=order.pk).status == OrderStatus.PAID and not Payment.objects.exists()
