"""The admin as a merchant's tool: title and greeting, revenue, orders by sale, the CSV export
of the filtered list for Excel, warnings before odd saves, blocked deletes in plain words,
times in the shop's zone."""

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from orders.admin import OrderAdmin
from orders.selectors import ORDERS_CSV_KEYS
from sales.models import Sale, StockChange
from sales.services import stock_audit_record
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_merchant, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(client):
    merchant = make_merchant(nickname="Mia")
    goods = make_goods(owner=merchant, name="Kettle", stock=30)
    sale = make_sale(goods=goods, stock=10, seckill_price=Decimal("9.90"))
    other_sale = make_sale(goods=goods, stock=10, seckill_price=Decimal("5.00"))
    client.force_login(merchant)
    return {"merchant": merchant, "goods": goods, "sale": sale, "other_sale": other_sale}


def test_the_admin_is_the_shops_and_greets_by_nickname(client, shop):
    page = client.get("/admin/").content.decode()
    assert "Seckill merchant centre" in page and "Django administration" not in page
    assert "<strong>Mia</strong>" in page and shop["merchant"].mobile not in page
    assert "Shop time: Asia/Shanghai (UTC+08:00)" in page


def test_revenue_counts_paid_orders_only(client, shop):
    sale = shop["sale"]
    for _ in range(2):
        pay(buy(sale=sale, user=make_user()))
    buy(sale=sale, user=make_user())  # unpaid: money promised, not taken
    page = client.get("/admin/sales/sale/").content.decode()
    assert "¥19.80" in page and "¥29.70" not in page
    figures = client.get(f"/admin/orders/order/sale/{sale.pk}/live.json").json()
    assert figures["revenue"] == "19.80" and (figures["paid"], figures["unpaid"]) == (2, 1)
    assert abs(figures["serverTime"] - timezone.now().timestamp()) < 5


def test_orders_filter_by_sale_named_in_shop_time(client, shop):
    mine = buy(sale=shop["sale"], user=make_user())
    other = buy(sale=shop["other_sale"], user=make_user())
    page = client.get("/admin/orders/order/").content.decode()
    local = timezone.localtime(shop["sale"].start_at).strftime("%Y-%m-%d %H:%M")
    assert f"?sale__id__exact={shop['sale'].pk}" in page and f"Kettle ¥9.90 ({local})" in page
    filtered = client.get(f"/admin/orders/order/?sale__id__exact={shop['sale'].pk}").content.decode()
    assert mine.order_no in filtered and other.order_no not in filtered


def _csv(response) -> list[list[str]]:
    body = b"".join(response.streaming_content)
    assert body.startswith(b"\xef\xbb\xbf")  # UTF-8 with the byte order mark Excel needs
    return list(csv.reader(io.StringIO(body.decode("utf-8-sig"))))


def test_the_export_is_the_filtered_list_every_page_of_it(client, shop, monkeypatch):
    monkeypatch.setattr(OrderAdmin, "list_per_page", 2)
    shoppers = [make_user(nickname=f"买家{n}") for n in range(4)]
    paid = [buy(sale=shop["sale"], user=user) for user in shoppers[:3]]
    for order in paid:
        pay(order)
    unpaid = buy(sale=shop["sale"], user=shoppers[3])
    elsewhere = pay(buy(sale=shop["other_sale"], user=shoppers[0]))
    rival = make_sale(stock=5)  # another merchant's sale and order
    pay(buy(sale=rival, user=make_user()))

    query = f"sale__id__exact={shop['sale'].pk}&status=paid"
    listing = client.get(f"/admin/orders/order/?{query}").content.decode()
    assert f'href="/admin/orders/order/export.csv?{query.replace("&", "&amp;")}"' in listing
    rows = _csv(client.get(f"/admin/orders/order/export.csv?{query}"))
    assert rows[0][0] == "order number" and len(rows[0]) == len(ORDERS_CSV_KEYS)
    numbers = {row[0] for row in rows[1:]}
    # Three pages' worth on the page (2 per page), all in the file; not the unpaid one,
    # not the other sale's, never another merchant's.
    assert numbers == {f'="{order.order_no}"' for order in paid}
    assert f'="{unpaid.order_no}"' not in numbers and f'="{elsewhere.order_no}"' not in numbers

    row = dict(zip(ORDERS_CSV_KEYS, rows[1], strict=True))
    assert row["recipient"] == "张三" and row["city"] == "杭州市" and row["district"] == "西湖区"
    assert row["street"] == "文三路 100 号"
    assert row["recipient_phone"] == '="13712345678"' and row["postcode"] == '="310000"'
    assert row["buyer"].startswith("买家") and row["status"] == "paid" and row["price"] == "9.90"

    everything = _csv(client.get("/admin/orders/order/export.csv"))
    assert len(everything) == 1 + 5  # this merchant's five orders, no one else's


def test_the_export_speaks_the_merchants_language(client, shop):
    pay(buy(sale=shop["sale"], user=make_user()))
    client.cookies["django_language"] = "zh-hans"
    rows = _csv(client.get("/admin/orders/order/export.csv"))
    assert rows[0][:3] == ["订单号", "下单时间", "状态"] and rows[1][2] == "已支付"


def test_the_export_needs_a_merchant(client, shop):
    client.force_login(make_user())
    assert client.get("/admin/orders/order/export.csv").status_code == 302  # to the admin's login


def _sale_post(sale: Sale | None, goods, **changes) -> dict:
    now = timezone.localtime()
    start = timezone.localtime(sale.start_at) if sale else now + timedelta(hours=1)
    end = timezone.localtime(sale.end_at) if sale else now + timedelta(hours=2)
    data = {
        "goods": goods.pk,
        "seckill_price": str(sale.seckill_price) if sale else "9.90",
        "stock_count": sale.stock_count if sale else 10,
        "initial-stock_count": sale.stock_count if sale else 10,
        "start_at_0": start.strftime("%Y-%m-%d"),
        "start_at_1": start.strftime("%H:%M:%S"),
        "end_at_0": end.strftime("%Y-%m-%d"),
        "end_at_1": end.strftime("%H:%M:%S"),
    }
    return {**data, **changes}


def test_a_sale_beyond_the_goods_stock_is_saved_only_once_confirmed(client, shop, django_capture_on_commit_callbacks):
    data = _sale_post(None, shop["goods"], stock_count=50, **{"initial-stock_count": 50})
    page = client.post("/admin/sales/sale/add/", data)
    assert page.status_code == 200
    assert "This sale offers 50 units, but Kettle has only 30 in stock." in page.content.decode()
    assert not Sale.objects.filter(stock_count=50).exists()
    with django_capture_on_commit_callbacks(execute=True):
        saved = client.post("/admin/sales/sale/add/", {**data, "confirm": "on"})
    assert saved.status_code == 302 and Sale.objects.filter(stock_count=50).exists()
    # Within the goods' stock: no question asked.
    with django_capture_on_commit_callbacks(execute=True):
        saved = client.post("/admin/sales/sale/add/", _sale_post(None, shop["goods"], stock_count=30))
    assert saved.status_code == 302


def test_units_already_ordered_count_towards_what_a_sale_offers(client, shop, django_capture_on_commit_callbacks):
    sale = shop["sale"]  # 10 units, goods stock 30
    for _ in range(5):
        buy(sale=sale, user=make_user())
    sale.refresh_from_db()  # 5 left, 5 in orders
    url = f"/admin/sales/sale/{sale.pk}/change/"
    page = client.post(url, _sale_post(sale, shop["goods"], stock_count=26))  # 26 left + 5 ordered = 31
    assert "This sale offers 31 units, but Kettle has only 30 in stock." in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url, _sale_post(sale, shop["goods"], stock_count=25)).status_code == 302
    sale.refresh_from_db()
    assert sale.stock_count == 25


def test_editing_a_live_sales_price_or_start_asks_first(client, shop, django_capture_on_commit_callbacks):
    sale = shop["sale"]  # on now
    url = f"/admin/sales/sale/{sale.pk}/change/"
    page = client.post(url, _sale_post(sale, shop["goods"], seckill_price="4.90")).content.decode()
    assert "This sale is on now. Shoppers have already bought at ¥9.90; the new price ¥4.90" in page
    assert 'type="checkbox" name="confirm"' in page
    later = timezone.localtime() + timedelta(minutes=30)
    page = client.post(
        url,
        _sale_post(sale, shop["goods"], start_at_0=later.strftime("%Y-%m-%d"), start_at_1=later.strftime("%H:%M:%S")),
    ).content.decode()
    assert "Moving its start changes when shoppers may buy" in page
    assert Sale.objects.get(pk=sale.pk).seckill_price == Decimal("9.90")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, _sale_post(sale, shop["goods"], seckill_price="4.90", confirm="on"))
    assert response.status_code == 302 and Sale.objects.get(pk=sale.pk).seckill_price == Decimal("4.90")
    # The end of a live sale, or anything of a sale not started, is no surprise to shoppers.
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, _sale_post(Sale.objects.get(pk=sale.pk), shop["goods"], end_at_1="23:59:59"))
    assert response.status_code == 302
    upcoming = make_sale(goods=shop["goods"], starts_in=3600)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/admin/sales/sale/{upcoming.pk}/change/", _sale_post(upcoming, shop["goods"], seckill_price="1")
        )
    assert response.status_code == 302


def test_the_blocked_delete_says_why_in_plain_words(client, shop):
    sale = shop["sale"]
    pay(buy(sale=sale, user=make_user()))
    buy(sale=sale, user=make_user())
    page = client.get(f"/admin/sales/sale/{sale.pk}/delete/").content.decode()
    assert "This sale cannot be deleted:" in page
    assert "It has 2 orders (1 paid, 1 waiting for payment)." in page
    assert "edit it and set its end to now" in page and f"/admin/sales/sale/{sale.pk}/change/" in page
    assert "permission" not in page and "protected" not in page
    client.post(f"/admin/sales/sale/{sale.pk}/delete/", {"post": "yes"})
    assert Sale.objects.filter(pk=sale.pk).exists()
    goods_page = client.get(f"/admin/goods/goods/{shop['goods'].pk}/delete/").content.decode()
    assert "These goods cannot be deleted, because of their sales:" in goods_page and "permission" not in goods_page


def test_a_merchant_deletes_a_sale_made_in_the_admin_that_sold_nothing(
    client, shop, django_capture_on_commit_callbacks
):
    """Its stock log (written by sale_create) goes with it: no "permission" refusal any more."""
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/admin/sales/sale/add/", _sale_post(None, shop["goods"], stock_count=3))
    sale = Sale.objects.get(goods=shop["goods"], stock_count=3)
    assert sale.stock_audit.count() == 1
    page = client.get(f"/admin/sales/sale/{sale.pk}/delete/").content.decode()
    assert "Are you sure" in page and "permission" not in page
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/admin/sales/sale/{sale.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Sale.objects.filter(pk=sale.pk).exists()


def test_a_live_sale_without_orders_warns_before_it_is_deleted(client, shop):
    page = client.get(f"/admin/sales/sale/{shop['sale'].pk}/delete/").content.decode()
    assert "This sale is on now: shoppers looking at it will find it gone." in page


def test_times_are_the_shops_with_the_zone_named(client, shop):
    sale = shop["sale"]
    local = timezone.localtime(sale.start_at)
    assert str(sale).endswith(f"({local:%Y-%m-%d %H:%M})")
    stock_audit_record(sale_id=sale.pk, delta=10, reason=StockChange.OPENING)
    audit = client.get("/admin/sales/stockaudit/").content.decode()
    assert f"{local:%Y-%m-%d %H:%M}" in audit  # the sale filter and the rows name sales in shop time
    change = client.get(f"/admin/sales/sale/{sale.pk}/change/").content.decode()
    assert f"Kettle ¥9.90 ({local:%Y-%m-%d %H:%M})" in change  # the breadcrumbs
    assert "Shop time (Asia/Shanghai)." in change
    registrations = client.get("/admin/users/user/registrations/").content.decode()
    assert "hour starting (Asia/Shanghai)" in registrations and "UTC)" not in registrations


def test_the_sale_list_shows_status_and_filters_by_it(client, shop):
    upcoming = make_sale(goods=shop["goods"], starts_in=3600, seckill_price=Decimal("7.77"))
    page = client.get("/admin/sales/sale/?status=0").content.decode()
    assert "¥7.77" in page and "¥9.90" not in page and "Not started" in page
    page = client.get("/admin/sales/sale/?status=1").content.decode()
    assert "¥9.90" in page and "¥7.77" not in page and "On sale" in page
    assert f"/admin/orders/order/sale/{upcoming.pk}/live/" in client.get("/admin/sales/sale/").content.decode()


def test_the_order_page_shows_where_it_ships(client, shop):
    buyer = make_user()
    make_address(buyer, recipient="李四", street="朝阳区建国路 88 号")
    order = pay(buy(sale=shop["sale"], user=buyer))
    page = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "李四" in page and "朝阳区建国路 88 号" in page
    unpaid = buy(sale=shop["sale"], user=make_user())
    page = client.get(f"/admin/orders/order/{unpaid.pk}/change/").content.decode()
    assert "Not paid yet: the shopper chooses the address when paying." in page
    listing = client.get("/admin/orders/order/?q=李四").content.decode()
    assert order.order_no in listing and unpaid.order_no not in listing


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_order_page_writes_times_one_way_prices_in_yuan_and_statuses_by_their_label(client, shop, language):
    order = pay(buy(sale=shop["sale"], user=make_user()))
    client.cookies["django_language"] = language
    page = client.get(f"/admin/orders/order/{order.pk}/change/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert "¥9.90" in page
    assert (">Paid<" if language == "en" else ">已支付<") in page  # the status's label, never "paid"
    for moment in (order.created_at, order.pay_deadline, order.paid_at):
        assert f"{timezone.localtime(moment):%Y-%m-%d %H:%M}" in page
    # Django's own format ("Dec. 2, 2026, 5:36 a.m." / "2026年12月2日 05:36") appears nowhere.
    paid = timezone.localtime(order.paid_at)
    assert "a.m." not in page and "p.m." not in page and f"{paid.year}年{paid.month}月{paid.day}日" not in page


def test_a_live_sale_saved_from_the_chinese_form_keeps_its_seconds_and_asks_nothing(
    client, shop, django_capture_on_commit_callbacks
):
    """The admin's Chinese time input shows hours and minutes only: posting a start of
    18:16:47 back as 18:16 is no change of the start, and no warning about moving it."""
    sale = shop["sale"]
    Sale.objects.filter(pk=sale.pk).update(start_at=sale.start_at.replace(second=47))
    sale.refresh_from_db()
    client.cookies["django_language"] = "zh-hans"
    start, end = timezone.localtime(sale.start_at), timezone.localtime(sale.end_at)
    data = _sale_post(
        sale,
        shop["goods"],
        start_at_0=start.strftime("%Y/%m/%d"),
        start_at_1=start.strftime("%H:%M"),
        end_at_0=end.strftime("%Y/%m/%d"),
        end_at_1=end.strftime("%H:%M"),
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/sales/sale/{sale.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    saved = Sale.objects.get(pk=sale.pk)
    assert saved.start_at == sale.start_at and saved.start_at.second == 47
