"""The page a shopper lands on once an order is paid (orders/paying.html as a receipt): the
amount and the way paid (the card's last four digits when paid by card), the goods, the
address, what happens next as the shop knows it, and the ways on."""

import pytest

from orders import selectors
from orders.models import Order
from orders.payments.services import payment_card_confirm, payment_start
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.pages import written_at
from testutils.providers import stripe_card_token
from users.models import NoticeSettings

pytestmark = pytest.mark.django_db

GOOD_CARD = "4242424242424242"


@pytest.fixture
def me(client):
    user = make_user()
    client.force_login(user)
    return user


def test_an_order_paid_with_alipay_shows_a_receipt_with_the_address_and_what_comes_next(client, me):
    address = make_address(me, recipient="Wang Fang", street="88 Century Avenue")
    order = pay(buy(sale=make_sale(), user=me), address=address)
    page = client.get(f"/orders/{order.order_no}/paying").content.decode()
    assert "<title>Payment received" in page and "<h1>Payment received</h1>" in page
    assert f"¥{order.price} paid with Alipay" in page
    assert order.goods_name in page and order.order_no in page
    assert "Wang Fang" in page and "88 Century Avenue" in page
    assert "We will text you when it ships" in page
    assert "ask for a refund on the order page" in page
    assert f'href="/orders/{order.order_no}" id="view-order"' in page
    assert 'href="/goods/goodsList" id="keep-shopping"' in page
    assert 'id="paying-check"' not in page  # nothing to wait for: the page's script stays idle


def test_an_order_paid_by_card_names_the_cards_last_four_digits(client, me):
    order = buy(sale=make_sale(), user=me)
    payment, _checkout = payment_start(
        order=order, provider_name="stripe", address=make_address(me), return_url="", notify_url=""
    )
    payment, _secret = payment_card_confirm(payment=payment, token=stripe_card_token(GOOD_CARD))
    assert payment.card_last4 == "4242"
    page = client.get(f"/orders/{order.order_no}/paying").content.decode()
    assert f"¥{order.price} paid with Bank card •••• 4242" in page


def test_a_shopper_who_turned_shipping_texts_off_is_not_promised_one(client, me):
    NoticeSettings.objects.create(user=me, shipping_news=False)
    order = pay(buy(sale=make_sale(), user=me))
    page = client.get(f"/orders/{order.order_no}/paying").content.decode()
    assert "We will text you" not in page
    assert "appear on the order page when it ships" in page


def test_the_receipt_is_chinese_on_a_chinese_page(client, me):
    order = pay(buy(sale=make_sale(), user=me))
    client.cookies["django_language"] = "zh-hans"
    page = client.get(f"/orders/{order.order_no}/paying", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "支付成功" in page and "已通过支付宝支付" in page and "继续逛逛" in page


def test_the_receipt_writes_its_paid_at_with_the_time_zone_as_the_order_page_does(client, me):
    order = Order.objects.get(pk=pay(buy(sale=make_sale(), user=me)).pk)
    assert written_at(order.created_at) in client.get(f"/orders/{order.order_no}").content.decode()
    assert written_at(order.paid_at) in client.get(f"/orders/{order.order_no}/paying").content.decode()


def test_a_payment_landing_while_the_page_is_made_shows_the_receipt(client, me, monkeypatch):
    """The notification commits between the view's read of the order and its read of the
    payment: the page must not say "paid" without the receipt (its script would stop
    polling, and the shopper never see the receipt)."""
    order = buy(sale=make_sale(), user=me)
    payment_data = selectors.order_payment_data

    def paid_meanwhile(read_order):
        pay(Order.objects.get(pk=read_order.pk))
        monkeypatch.setattr(selectors, "order_payment_data", payment_data)
        return payment_data(read_order)

    monkeypatch.setattr(selectors, "order_payment_data", paid_meanwhile)
    page = client.get(f"/orders/{order.order_no}/paying").content.decode()
    assert "<h1>Payment received</h1>" in page
    assert 'data-state="settled"' in page


def test_another_shoppers_receipt_is_a_404(client, me):
    order = pay(buy(sale=make_sale(), user=make_user()))
    assert client.get(f"/orders/{order.order_no}/paying").status_code == 404
