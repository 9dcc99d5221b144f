"""The merchant's shipping desk: the orders to ship, shipping one, shipping many from a CSV
file (the export filled in, in UTF-8 or GBK, uploaded twice), marking parcels delivered,
answering refund requests, the order's history; and none of it on another merchant's order."""

import csv
import io
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from orders.fulfilment.services import order_ship, refund_request_open
from orders.models import Order, OrderStatus, RefundRequestStatus, Shipment
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(client):
    merchant = make_merchant(nickname="Mia")
    sale = make_sale(goods=make_goods(owner=merchant, name="Kettle", stock=30), stock=10, seckill_price=Decimal("9.90"))
    client.force_login(merchant)
    return {"merchant": merchant, "sale": sale}


def _paid(shop) -> Order:
    return pay(buy(sale=shop["sale"], user=make_user()))


def _url(order: Order, page: str) -> str:
    return f"/admin/orders/order/{order.pk}/{page}/"


def test_the_list_counts_the_orders_to_ship_and_links_them(client, shop):
    _paid(shop), _paid(shop)
    buy(sale=shop["sale"], user=make_user())
    page = client.get("/admin/orders/order/").content.decode()
    assert "To ship: 2 orders" in page and 'href="?to_ship=yes"' in page
    assert "Ship from a CSV file" in page and "refund requests to answer" not in page


def test_an_order_held_by_a_refund_request_is_not_to_ship_nor_in_its_csv(client, shop):
    ready, held = _paid(shop), _paid(shop)
    refund_request_open(order_id=held.pk, reason="ordered twice", actor_id=held.user_id)
    page = client.get("/admin/orders/order/").content.decode()
    assert "To ship: 1 order" in page and "1 refund request to answer" in page
    listed = client.get("/admin/orders/order/?to_ship=yes").content.decode()
    assert ready.order_no in listed and held.order_no not in listed
    numbers = [row[0] for row in _export(client)[1:]]
    assert numbers == [f'="{ready.order_no}"']
    assert (
        'href="/admin/orders/order/export.csv?to_ship=yes"'
        in client.get("/admin/orders/order/ship.csv/").content.decode()
    )


def test_a_merchant_ships_an_order_from_its_page(client, shop):
    order = _paid(shop)
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert f'href="{_url(order, "ship")}"' in page
    form = client.get(_url(order, "ship")).content.decode()
    assert 'name="carrier"' in form and 'for="id_tracking_no"' in form and order.address.recipient in form
    refused = client.post(_url(order, "ship"), {"carrier": "sf", "tracking_no": "SF 12;34"})
    assert refused.status_code == 200 and "letters, digits and dashes" in refused.content.decode()
    assert Order.objects.get(pk=order.pk).status == OrderStatus.PAID
    response = client.post(_url(order, "ship"), {"carrier": "sf", "tracking_no": "sf1234 5678"})
    assert response.status_code == 302
    assert str(Shipment.objects.get(pk=order.pk)) == "SF Express SF12345678"
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "SF Express SF12345678" in page and "History" in page and "Mia" in page
    assert _url(order, "ship") not in page  # shipped: no second ship
    again = client.post(_url(order, "ship"), {"carrier": "jd", "tracking_no": "JD1"})
    assert "Only a paid order can be shipped" in again.content.decode()


def test_shipped_orders_are_marked_delivered_in_bulk(client, shop):
    shipped, waiting = _paid(shop), _paid(shop)
    order_ship(order_id=shipped.pk, carrier="ems", tracking_no="E1", actor_id=None)
    response = client.post(
        "/admin/orders/order/",
        {"action": "mark_delivered", "_selected_action": [shipped.pk, waiting.pk]},
        follow=True,
    )
    page = response.content.decode()
    assert "1 order marked delivered." in page and "1 order was not shipped" in page
    assert Order.objects.get(pk=shipped.pk).status == OrderStatus.DELIVERED
    assert Order.objects.get(pk=waiting.pk).status == OrderStatus.PAID


def _export(client) -> list[list[str]]:
    response = client.get("/admin/orders/order/export.csv?to_ship=yes")
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))


def _upload(client, rows, encoding="utf-8-sig"):
    text = io.StringIO()
    csv.writer(text).writerows(rows)
    upload = SimpleUploadedFile("ship.csv", text.getvalue().encode(encoding), content_type="text/csv")
    return client.post("/admin/orders/order/ship.csv/", {"file": upload})


def test_the_export_filled_in_ships_every_order_and_again_ships_nothing_twice(client, shop):
    orders = [_paid(shop) for _ in range(3)]
    rows = _export(client)
    header = rows[0]
    assert header[-2:] == ["carrier", "tracking number"]
    for number, row in enumerate(rows[1:]):
        row[-2:] = ["SF Express" if number else "sf", f"SF00{number}"]
    page = _upload(client, rows).content.decode()
    assert "3 orders shipped." in page
    assert sorted(Shipment.objects.values_list("tracking_no", flat=True)) == ["SF000", "SF001", "SF002"]
    page = _upload(client, rows).content.decode()
    assert "0 orders shipped." in page and "3 were shipped already" in page
    assert Order.objects.filter(pk__in=[o.pk for o in orders], status=OrderStatus.SHIPPED).count() == 3


def test_a_chinese_spreadsheet_in_gbk_ships(client, shop):
    order = _paid(shop)
    page = _upload(
        client, [["订单号", "承运商", "运单号"], [order.order_no, "顺丰速运", "SF9"]], "gbk"
    ).content.decode()
    assert "1 order shipped." in page
    assert Shipment.objects.get(pk=order.pk).carrier == "sf"


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ([["order", "carrier", "tracking number"]], "no “order number” column"),
        ([["order number", "carrier", "tracking number"], ["{no}", "pigeon", "P1"]], "unknown carrier"),
        ([["order number", "carrier", "tracking number"], ["{no}", "sf", ""]], "tracking number"),
        ([["order number", "carrier", "tracking number"], ["999", "sf", "SF1"]], "no such order of yours"),
        ([["order number", "carrier", "tracking number"], ["{other}", "sf", "SF1"]], "no such order of yours"),
        ([], "empty"),
    ],
)
def test_a_file_with_a_bad_line_ships_nothing_and_says_which(client, shop, rows, words):
    order = _paid(shop)
    other = pay(buy(sale=make_sale(), user=make_user()))  # another merchant's
    good = [order.order_no, "sf", "SF1"]
    rows = [[cell.format(no=order.order_no, other=other.order_no) for cell in row] for row in rows]
    response = _upload(client, [*rows[:1], good, *rows[1:]] if rows else [])
    assert response.status_code == 200 and words in response.content.decode()
    assert not Shipment.objects.exists()


def test_a_file_that_is_not_text_is_refused(client, shop):
    _paid(shop)
    upload = SimpleUploadedFile("ship.csv", b"\xff\xfe\x00\x81\x30\x00", content_type="text/csv")
    page = client.post("/admin/orders/order/ship.csv/", {"file": upload}).content.decode()
    assert "not text in UTF-8 or GBK" in page and not Shipment.objects.exists()


def test_a_refund_request_is_approved_or_declined_from_the_order(client, shop):
    asked, declined = _paid(shop), _paid(shop)
    refund_request_open(order_id=asked.pk, reason="Bought by mistake", actor_id=asked.user_id)
    refund_request_open(order_id=declined.pk, reason="Too slow", actor_id=declined.user_id)
    assert "2 refund requests to answer" in client.get("/admin/orders/order/").content.decode()
    listed = client.get("/admin/orders/order/?refund_request=open").content.decode()
    assert asked.order_no in listed and declined.order_no in listed
    page = client.get(f"/admin/orders/order/{asked.pk}/change/").content.decode()
    assert _url(asked, "refund-request") in page and _url(asked, "ship") not in page
    assert "Bought by mistake" in client.get(_url(asked, "refund-request")).content.decode()

    client.post(_url(asked, "refund-request"), {"decision": "approve"})
    assert Order.objects.get(pk=asked.pk).status == OrderStatus.REFUNDED
    empty = client.post(_url(declined, "refund-request"), {"decision": "decline", "answer": " "})
    assert "The refund was not declined" in empty.content.decode()
    client.post(_url(declined, "refund-request"), {"decision": "decline", "answer": "Shipping today"})
    request = declined.refund_requests.get()
    assert (request.status, request.answer) == (RefundRequestStatus.DECLINED, "Shipping today")
    assert Order.objects.get(pk=declined.pk).status == OrderStatus.PAID


def test_another_merchants_order_cannot_be_shipped_or_answered(client, shop):
    other = pay(buy(sale=make_sale(), user=make_user()))
    refund_request_open(order_id=other.pk, reason="mine", actor_id=other.user_id)
    for page in ("ship", "refund-request"):
        assert client.get(_url(other, page)).status_code == 404
        assert (
            client.post(_url(other, page), {"carrier": "sf", "tracking_no": "X1", "decision": "approve"}).status_code
            == 404
        )
    client.post("/admin/orders/order/", {"action": "mark_delivered", "_selected_action": [other.pk]})
    assert Order.objects.get(pk=other.pk).status == OrderStatus.PAID
    assert other.refund_requests.get().status == RefundRequestStatus.OPEN
