"""The shopper after paying: the status tabs of "my orders", the order's story and parcel, asking
for a refund before it ships and withdrawing it, confirming receipt on a page of its own; bad
input a 4xx that changes nothing, and another shopper's order out of reach."""

import re

import pytest

from orders.fulfilment.services import (
    order_ship,
    refund_request_approve,
    refund_request_decline,
    refund_request_open,
    refund_request_withdraw,
)
from orders.models import Order, OrderStatus, RefundRequest, RefundRequestStatus
from orders.payments.services import PaymentDeclined, payment_card_confirm, payment_start
from orders.services import OrderStateError
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import CARD_DECLINED, stripe_card_token

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def me(client):
    user = make_user()
    client.force_login(user)
    return user


def _orders_in(page: str, *orders: Order) -> list[bool]:
    return [order.order_no in page for order in orders]


def test_the_tabs_hold_the_orders_of_their_status_and_count_them(client, me):
    sale = make_sale(stock=10)
    unpaid = buy(sale=sale, user=me)
    to_ship, on_the_way, done, asked = (pay(buy(sale=make_sale(), user=me)) for _ in range(4))
    order_ship(order_id=on_the_way.pk, carrier="sf", tracking_no="SF1", actor_id=None)
    order_ship(order_id=done.pk, carrier="sf", tracking_no="SF2", actor_id=None)
    client.post(f"/orders/{done.order_no}/received", {"confirm": "yes"})
    refund_request_open(order_id=asked.pk, reason="mistake", actor_id=me.pk)
    everyone = (unpaid, to_ship, on_the_way, done, asked)
    expected = {
        "": [True] * 5,
        "unpaid": [True, False, False, False, False],
        "to-ship": [False, True, False, False, True],
        "shipped": [False, False, True, False, False],
        "completed": [False, False, False, True, False],
        "refunds": [False, False, False, False, True],
    }
    for tab, holds in expected.items():
        page = client.get(f"/orders/?tab={tab}" if tab else "/orders/").content.decode()
        assert _orders_in(page, *everyone) == holds, tab
    page = client.get("/orders/").content.decode()
    assert 'aria-current="page">All' in page and "Paid, to ship" in page and "On the way" in page
    assert '>To ship <span class="count">2</span>' in page


@pytest.mark.parametrize("tab", ["nope", "to_ship", "%00", "x" * 500])
def test_an_unknown_tab_is_a_404(client, me, tab):
    assert client.get("/orders/", {"tab": tab}).status_code == 404


def test_the_order_page_tells_its_story_and_shows_the_parcel(client, me):
    order = pay(buy(sale=make_sale(), user=me))
    order_ship(order_id=order.pk, carrier="jd", tracking_no="JD0099", actor_id=None)
    page = client.get(f"/orders/{order.order_no}").content.decode()
    for words in ("Order placed", "Payment received", "Shipped", "JD Logistics JD0099", "I received it"):
        assert words in page, words
    assert "Ask for a refund" not in page  # shipped: the merchant takes it back, not this form
    data = client.get(f"/orders/{order.order_no}", **JSON).json()["data"]
    assert data["shipment"]["trackingNo"] == "JD0099" and data["status"] == "shipped"

    assert f'href="/orders/{order.order_no}/received"' in page
    for unconfirmed in (
        client.get(f"/orders/{order.order_no}/received"),
        client.post(f"/orders/{order.order_no}/received"),
    ):
        asked = unconfirmed.content.decode()
        assert unconfirmed.status_code == 200 and "Did the parcel arrive?" in asked and 'value="yes"' in asked
        assert Order.objects.get(pk=order.pk).status == OrderStatus.SHIPPED
    response = client.post(f"/orders/{order.order_no}/received", {"confirm": "yes"})
    assert response.status_code == 302 and Order.objects.get(pk=order.pk).status == OrderStatus.DELIVERED
    assert client.get(f"/orders/{order.order_no}/received")["Location"] == f"/orders/{order.order_no}"
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert "Delivered" in page and "I received it" not in page
    again = client.post(f"/orders/{order.order_no}/received", **JSON)
    assert again.status_code == 409 and "Only a shipped order" in again.json()["msg"]


def test_a_refund_is_asked_for_before_it_ships_then_answered(client, me):
    order = pay(buy(sale=make_sale(), user=me))
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert "Ask for a refund" in page and 'name="reason"' in page
    response = client.post(
        f"/orders/{order.order_no}/refund-request", {"reason": "other", "detail": "Found it cheaper"}
    )
    assert response.status_code == 302
    request = RefundRequest.objects.get(order=order)
    assert request.reason == "Another reason: Found it cheaper"
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert "You asked for a refund on" in page and 'name="reason"' not in page
    twice = client.post(f"/orders/{order.order_no}/refund-request", {"reason": "mistake"}, **JSON)
    assert twice.status_code == 409 and RefundRequest.objects.filter(order=order).count() == 1

    refund_request_decline(order_id=order.pk, request_id=request.pk, answer="Already packed", actor_id=None)
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert "The merchant declined your refund: “Already packed”" in page and "Ask for a refund" in page


@pytest.mark.parametrize(
    "form",
    [
        {},
        {"reason": "other"},
        {"reason": "other", "detail": "   "},
        {"reason": "because"},
        {"reason": "mistake", "detail": "x" * 151},
        {"reason": "mistake\x00"},
    ],
)
def test_a_bad_refund_request_is_a_400_and_asks_nothing(client, me, form):
    order = pay(buy(sale=make_sale(), user=me))
    page = client.post(f"/orders/{order.order_no}/refund-request", form)
    assert page.status_code == 400 and "refund-ask" in page.content.decode()
    assert client.post(f"/orders/{order.order_no}/refund-request", form, **JSON).status_code == 400
    assert not RefundRequest.objects.exists()


def test_what_an_order_cannot_do_now_is_refused_with_a_reason(client, me):
    unpaid = buy(sale=make_sale(), user=me)
    for action in ("refund-request", "received"):
        response = client.post(f"/orders/{unpaid.order_no}/{action}", {"reason": "mistake"}, **JSON)
        assert response.status_code == 409, action
    assert Order.objects.get(pk=unpaid.pk).status == OrderStatus.UNPAID


def test_another_shoppers_order_is_out_of_reach(client, me):
    theirs = pay(buy(sale=make_sale(), user=make_user()))
    for action in ("refund-request", "received"):
        assert client.post(f"/orders/{theirs.order_no}/{action}", {"reason": "mistake"}).status_code == 404
        assert client.post(f"/orders/{theirs.order_no}/{action}", {"reason": "mistake"}, **JSON).status_code == 404
    assert client.get(f"/orders/{theirs.order_no}/refund-request").status_code == 405
    assert client.get(f"/orders/{theirs.order_no}/received").status_code == 404
    refund_request_open(order_id=theirs.pk, reason="mistake", actor_id=theirs.user_id)
    assert client.post(f"/orders/{theirs.order_no}/refund-request/withdraw").status_code == 404
    assert RefundRequest.objects.get().status == RefundRequestStatus.OPEN
    RefundRequest.objects.all().delete()
    client.logout()
    assert client.post(f"/orders/{theirs.order_no}/received", **JSON).status_code == 401
    assert not RefundRequest.objects.exists() and Order.objects.get(pk=theirs.pk).status == OrderStatus.PAID


def test_the_api_carries_the_parcel_and_takes_the_two_moves(client, me):
    order = pay(buy(sale=make_sale(), user=me))
    api = f"/api/v1/orders/{order.order_no}"
    bad = client.post(f"{api}/refund-request", {"reason": "other", "detail": " "}, content_type="application/json")
    assert bad.status_code == 400 and not RefundRequest.objects.exists()
    asked = client.post(f"{api}/refund-request", {"reason": "mistake"}, content_type="application/json")
    assert asked.status_code == 200 and asked.json()["data"]["refundRequest"]["status"] == "open"
    again = client.post(f"{api}/refund-request", {"reason": "mistake"}, content_type="application/json")
    assert again.status_code == 409
    refund_request_decline(
        order_id=order.pk, request_id=RefundRequest.objects.get().pk, answer="Packed already", actor_id=None
    )
    order_ship(order_id=order.pk, carrier="ems", tracking_no="E123", actor_id=None)
    data = client.get(api).json()["data"]
    assert data["shipment"]["trackingNo"] == "E123" and data["refundRequest"]["answer"] == "Packed already"
    done = client.post(f"{api}/received")
    assert done.status_code == 200 and done.json()["data"]["status"] == OrderStatus.DELIVERED
    assert client.post(f"{api}/received").status_code == 409


def test_ship_to_is_shown_once_after_a_failed_payment(client, me):
    order = buy(sale=make_sale(), user=me)
    payment, _checkout = payment_start(
        order=order, provider_name="stripe", address=make_address(me), return_url="", notify_url=""
    )
    with pytest.raises(PaymentDeclined):
        payment_card_confirm(payment=payment, token=stripe_card_token(CARD_DECLINED))
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert "Payment not completed" in page and page.count("Ship to") == 1
    paid = pay(buy(sale=make_sale(), user=me))
    assert client.get(f"/orders/{paid.order_no}").content.decode().count("Ship to") == 1


def test_the_status_pill_follows_a_refund_request_and_it_can_be_withdrawn(client, me):
    order = pay(buy(sale=make_sale(), user=me))
    client.post(f"/orders/{order.order_no}/refund-request", {"reason": "mistake"})
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert '<span class="pill refund-asked">Refund requested</span>' in page and "Paid, to ship" not in page
    listed = client.get("/orders/").content.decode()
    assert '<span class="pill refund-asked">Refund requested</span>' in listed and "Paid, to ship" not in listed
    assert f'action="/orders/{order.order_no}/refund-request/withdraw"' in page

    response = client.post(f"/orders/{order.order_no}/refund-request/withdraw")
    assert response.status_code == 302
    assert RefundRequest.objects.get(order=order).status == RefundRequestStatus.WITHDRAWN
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert '<span class="pill paid">Paid, to ship</span>' in page and "You withdrew the refund request" in page
    assert "Ask for a refund" in page and "/refund-request/withdraw" not in page
    again = client.post(f"/orders/{order.order_no}/refund-request/withdraw", **JSON)
    assert again.status_code == 409
    assert client.get(f"/orders/{order.order_no}/refund-request/withdraw").status_code == 405
    # Withdrawn, the order ships; and the shopper may ask again.
    request = refund_request_open(order_id=order.pk, reason="changed my mind", actor_id=me.pk)
    assert RefundRequest.objects.filter(order=order).count() == 2
    refund_request_withdraw(order_id=order.pk, actor_id=me.pk)
    with pytest.raises(OrderStateError, match="answered already"):
        refund_request_approve(order_id=order.pk, request_id=request.pk, actor_id=None)
    order_ship(order_id=order.pk, carrier="sf", tracking_no="SF3", actor_id=None)
    assert Order.objects.get(pk=order.pk).status == OrderStatus.SHIPPED


def test_an_answered_request_cannot_be_withdrawn(client, me):
    order = pay(buy(sale=make_sale(), user=me))
    request = refund_request_open(order_id=order.pk, reason="mistake", actor_id=me.pk)
    refund_request_decline(order_id=order.pk, request_id=request.pk, answer="Packed", actor_id=None)
    refused = client.post(f"/orders/{order.order_no}/refund-request/withdraw", **JSON)
    assert refused.status_code == 409 and "answered" in refused.json()["msg"]
    assert RefundRequest.objects.get().status == RefundRequestStatus.DECLINED


def test_the_new_words_are_in_chinese(client, me):
    client.cookies["django_language"] = "zh-hans"
    asked, shipped = pay(buy(sale=make_sale(), user=me)), pay(buy(sale=make_sale(), user=me))
    refund_request_open(order_id=asked.pk, reason="mistake", actor_id=me.pk)
    page = client.get(f"/orders/{asked.order_no}").content.decode()
    assert "退款申请中" in page and "撤回退款申请" in page
    order_ship(order_id=shipped.pk, carrier="sf", tracking_no="SF4", actor_id=None)
    assert "确认已收到包裹" in client.get(f"/orders/{shipped.order_no}/received").content.decode()


@pytest.mark.parametrize("language, title", [("en", "Order: "), ("zh-hans", "订单：")])
def test_the_order_is_titled_by_its_goods_and_its_number_is_small(client, me, language, title):
    """A 24-digit number as the title ran to three lines on a phone."""
    client.cookies["django_language"] = language
    order = buy(sale=make_sale(), user=me)
    pages = [client.get(f"/orders/{order.order_no}").content.decode()]
    pages.append(client.get(f"/orders/{order.order_no}/paying").content.decode())
    for page in pages:
        heading = re.search(r"<h1>(.*?)</h1>", page, re.S).group(1)
        assert heading == f"{title}{order.goods_name}" and order.order_no not in heading
        number = "Order number" if language == "en" else "订单号"
        assert f'<p class="order-no">{number} <span class="num">{order.order_no}</span></p>' in page
    assert re.search(r"<title>(.*?)</title>", pages[0], re.S).group(1).startswith(f"{title}{order.goods_name}")
