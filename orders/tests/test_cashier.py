"""Going to a cashier when the provider cannot be reached: a clear answer, nothing charged,
nothing left open."""

import pytest

from orders.models import Order, OrderStatus, Payment, PaymentStatus
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}


def test_card_payments_unreachable_answer_clearly_and_change_nothing(client, settings):
    settings.STRIPE_API_BASE = "http://127.0.0.1:9"  # nothing listens there: Stripe is down
    me = make_user()
    make_address(me)
    order = buy(sale=make_sale(), user=me)
    client.force_login(me)
    refused = client.post(f"/orders/{order.order_no}/pay", {"method": "stripe"}, **JSON)
    assert refused.status_code == 409 and refused.json()["code"] == 500603
    assert "nothing was charged" in refused.json()["msg"]
    page = client.post(f"/orders/{order.order_no}/pay", {"method": "stripe"}, follow=True)
    assert "nothing was charged" in page.content.decode()
    assert Order.objects.get(pk=order.pk).status == OrderStatus.UNPAID
    assert set(Payment.objects.filter(order=order).values_list("status", flat=True)) == {PaymentStatus.CLOSED}
    # Alipay's cashier needs no call first: the shopper goes there, and the order still expires
    # or is cancelled normally (no attempt is left open by the failed card).
    assert client.post(f"/orders/{order.order_no}/cancel", **JSON).json()["data"]["status"] == "cancelled"
