"""Merchant scoping in the admin: merchant A never sees or changes merchant B's rows."""

import re

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from goods.models import Goods
from orders.models import Order
from sales.models import Sale
from sales.sale_state import keys
from seckill.services import paths as seckill_paths
from seckill_site.redis import client as redis
from testutils.factories.goods import make_goods
from testutils.factories.orders import make_order
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_merchants():
    a, b = make_merchant(nickname="A"), make_merchant(nickname="B")
    goods_a, goods_b = make_goods(owner=a, name="A-Phone"), make_goods(owner=b, name="B-Phone")
    sale_a, sale_b = make_sale(goods=goods_a), make_sale(goods=goods_b)
    order_a, order_b = make_order(sale=sale_a), make_order(sale=sale_b)
    return {
        "a": a,
        "b": b,
        "goods_b": goods_b,
        "sale_a": sale_a,
        "sale_b": sale_b,
        "order_b": order_b,
        "goods_a": goods_a,
        "order_a": order_a,
    }


def test_lists_show_only_own_rows(client, two_merchants):
    client.force_login(two_merchants["a"])
    goods = client.get("/admin/goods/goods/").content
    assert b"A-Phone" in goods and b"B-Phone" not in goods
    sales = client.get("/admin/sales/sale/").content
    assert b"A-Phone" in sales and b"B-Phone" not in sales
    orders = client.get("/admin/orders/order/").content
    assert two_merchants["order_a"].order_no.encode() in orders
    assert two_merchants["order_b"].order_no.encode() not in orders


@pytest.mark.parametrize("old", ["goods/seckillgoods", "goods/sale"])
def test_a_bookmark_from_before_the_sale_was_renamed_or_moved_still_opens_the_sale(client, two_merchants, old):
    client.force_login(two_merchants["a"])
    sale = two_merchants["sale_a"]
    response = client.get(f"/admin/{old}/{sale.pk}/change/?_changelist_filters=o%3D1")
    assert response.status_code == 301
    assert response["Location"] == f"/admin/sales/sale/{sale.pk}/change/?_changelist_filters=o%3D1"
    assert b"A-Phone" in client.get(response["Location"]).content


@pytest.mark.parametrize("model", ["stockaudit", "saledraw", "salereminder"])
def test_the_sales_other_admin_pages_moved_with_it(client, two_merchants, model):
    client.force_login(two_merchants["a"])
    response = client.get(f"/admin/goods/{model}/?sale__id__exact=1")
    assert response.status_code == 301
    assert response["Location"] == f"/admin/sales/{model}/?sale__id__exact=1"


@pytest.mark.parametrize(
    "url",
    [
        "/admin/goods/goods/{goods_b}/change/",
        "/admin/goods/goods/{goods_b}/delete/",
        "/admin/sales/sale/{sale_b}/change/",
        "/admin/orders/order/{order_b}/change/",
    ],
)
def test_direct_urls_to_another_merchants_rows_are_refused(client, two_merchants, url):
    client.force_login(two_merchants["a"])
    ids = {k: two_merchants[k].pk for k in ("goods_b", "sale_b", "order_b")}
    response = client.get(url.format(**ids))
    assert response.status_code in (302, 403, 404)
    assert b"B-Phone" not in response.content


def test_cannot_post_changes_to_another_merchants_goods(client, two_merchants):
    client.force_login(two_merchants["a"])
    goods_b = two_merchants["goods_b"]
    edit = {"name_en": "hacked", "title_en": "x", "price": "1", "stock": 1}
    client.post(f"/admin/goods/goods/{goods_b.pk}/change/", edit)
    goods_b.refresh_from_db()
    assert goods_b.name == "B-Phone"


def test_cannot_create_a_sale_on_another_merchants_goods(client, two_merchants):
    client.force_login(two_merchants["a"])
    response = client.post(
        "/admin/sales/sale/add/",
        {
            "goods": two_merchants["goods_b"].pk,
            "seckill_price": "1",
            "stock_count": 5,
            "start_at_0": "2030-01-01",
            "start_at_1": "10:00:00",
            "end_at_0": "2030-01-01",
            "end_at_1": "11:00:00",
        },
    )
    assert response.status_code == 200  # the form comes back with an error
    assert not Sale.objects.filter(goods=two_merchants["goods_b"], stock_count=5).exists()


def test_merchant_creates_goods_with_image_and_a_sale_that_reaches_redis_and_the_list(
    client, two_merchants, django_capture_on_commit_callbacks
):
    from sales.management.commands.seed_demo import product_image

    client.force_login(two_merchants["a"])
    image = SimpleUploadedFile("p.png", product_image("New", (10, 20, 30)).read(), content_type="image/png")
    response = client.post(
        "/admin/goods/goods/add/",
        {
            "name_en": "Brand New",
            "title_en": "New thing",
            "price": "100",
            "stock": 10,
            "detail": "",
            "image": image,
            "sales-TOTAL_FORMS": 0,
            "sales-INITIAL_FORMS": 0,
        },
    )
    assert response.status_code == 302, response.content[:2000]
    goods = Goods.objects.get(name="Brand New")
    assert goods.owner == two_merchants["a"] and goods.image
    client.get("/goods/goodsList")  # cache the list before the sale exists
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/admin/sales/sale/add/",
            {
                "goods": goods.pk,
                "seckill_price": "9.9",
                "stock_count": 6,
                "start_at_0": "2020-01-01",
                "start_at_1": "10:00:00",
                "end_at_0": "2099-01-01",
                "end_at_1": "11:00:00",
            },
        )
    assert response.status_code == 302
    sale = Sale.objects.get(goods=goods)
    assert redis().get(keys.stock(sale.pk)) == b"6"
    assert b"Brand New" in client.get("/goods/goodsList").content


def test_rejects_a_non_image_upload(client, two_merchants):
    client.force_login(two_merchants["a"])
    fake = SimpleUploadedFile("p.png", b"not an image", content_type="image/png")
    response = client.post(
        "/admin/goods/goods/add/",
        {
            "name_en": "Bad",
            "title_en": "x",
            "price": "1",
            "stock": 1,
            "image": fake,
            "sales-TOTAL_FORMS": 0,
            "sales-INITIAL_FORMS": 0,
        },
    )
    assert response.status_code == 200 and not Goods.objects.filter(name="Bad").exists()


def test_shoppers_cannot_enter_the_admin(client):
    client.force_login(make_user())
    assert client.get("/admin/goods/goods/").status_code == 302


def test_superuser_sees_everything(client, two_merchants):
    from users.models import User

    client.force_login(User.objects.create_superuser("13999999999", "admin-pass-1"))
    page = client.get("/admin/goods/goods/").content
    assert b"A-Phone" in page and b"B-Phone" in page
    assert Order.objects.count() == 2


def test_live_view_shows_figures_and_is_scoped(client, two_merchants):
    from testutils.factories.orders import buy, pay

    sale = two_merchants["sale_a"]  # stock 10, one order made by the fixture (not through Redis)
    paid = buy(sale=sale, user=make_user())
    pay(paid)
    buy(sale=sale, user=make_user())
    client.force_login(two_merchants["a"])
    page = client.get(f"/admin/orders/order/sale/{sale.pk}/live/")
    assert page.status_code == 200 and b'id="chart"' in page.content
    data = client.get(f"/admin/orders/order/sale/{sale.pk}/live.json").json()
    assert data["stockDatabase"] == 8 and data["stockRedis"] == 8 and data["inFlight"] == 0
    assert (data["unpaid"], data["paid"], data["cancelled"]) == (2, 1, 0)
    assert data["series"][-1]["cumulative"] == 3 and sum(p["orders"] for p in data["series"]) == 3
    b_sale = two_merchants["sale_b"].pk
    assert client.get(f"/admin/orders/order/sale/{b_sale}/live/").status_code == 404
    assert client.get(f"/admin/orders/order/sale/{b_sale}/live.json").status_code == 404


def test_live_view_needs_a_merchant(client, two_merchants):
    client.force_login(make_user())
    response = client.get(f"/admin/orders/order/sale/{two_merchants['sale_a'].pk}/live.json")
    assert response.status_code == 302  # to the admin login


def test_a_stock_edit_keeps_units_sold_since_the_form_was_loaded(
    client, two_merchants, django_capture_on_commit_callbacks
):
    from testutils.factories.orders import buy

    sale = two_merchants["sale_a"]  # stock 10
    client.force_login(two_merchants["a"])
    form = client.get(f"/admin/sales/sale/{sale.pk}/change/")
    assert form.status_code == 200 and b'name="initial-stock_count" value="10"' in form.content
    buy(sale=sale, user=make_user())  # a unit sells while the merchant looks at the form: 9 left
    local = sale.start_at.astimezone(timezone.get_current_timezone())
    end = sale.end_at.astimezone(timezone.get_current_timezone())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/admin/sales/sale/{sale.pk}/change/",
            {
                "goods": sale.goods_id,
                "seckill_price": "1.00",
                "stock_count": 15,  # the merchant adds 5
                "initial-stock_count": 10,
                "start_at_0": local.strftime("%Y-%m-%d"),
                "start_at_1": local.strftime("%H:%M:%S"),
                "end_at_0": end.strftime("%Y-%m-%d"),
                "end_at_1": end.strftime("%H:%M:%S"),
            },
        )
    assert response.status_code == 302, response.content[:500]
    sale.refresh_from_db()
    assert sale.stock_count == 14  # 9 left + 5 added, not the form's 15
    assert redis().get(keys.stock(sale.pk)) == b"14"


# --- writes go through the services ---------------------------------------------------------


def _sale_keys_left(sale_id: int) -> list[bytes]:
    """This run's Redis keys of the sale (its own and the cache's); other runs' are not ours."""
    prefix = settings.REDIS_KEY_PREFIX
    return sorted(redis().scan_iter(match=f"{prefix}sk:{{{sale_id}}}*")) + sorted(
        redis().scan_iter(match=f"{prefix}cache:*goods:sale*:{sale_id}")
    )


def _list_pages_cached() -> list[bytes]:
    return list(redis().scan_iter(match=f"{settings.REDIS_KEY_PREFIX}cache:*goods:list:html:*"))


def test_admin_delete_of_a_live_sale_leaves_no_redis_key_or_cached_page(
    client, two_merchants, django_capture_on_commit_callbacks
):
    from sales.selectors import sale_get
    from testutils.shoppers import path_for

    sale = make_sale(goods=two_merchants["goods_a"], stock=5)  # on sale now, warmed into Redis
    path_for(make_user().pk, sale.pk)  # a shopper's path: a per-user key of the sale
    seckill_paths.captcha_create(user_id=make_user().pk, sale_id=sale.pk)  # and a captcha
    assert sale_get(sale_id=sale.pk) is not None  # the sale cache
    assert b"A-Phone" in client.get("/goods/goodsList").content  # the list page cache
    assert len(_sale_keys_left(sale.pk)) >= 5 and _list_pages_cached()

    client.force_login(two_merchants["a"])
    assert client.get(f"/admin/sales/sale/{sale.pk}/delete/").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/sales/sale/{sale.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Sale.objects.filter(pk=sale.pk).exists()
    assert _sale_keys_left(sale.pk) == []
    assert _list_pages_cached() == []


def test_bulk_delete_action_goes_through_the_service(client, two_merchants, django_capture_on_commit_callbacks):
    goods = make_goods(owner=two_merchants["a"], name="Bulk")
    sales = [make_sale(goods=goods), make_sale(goods=goods)]
    client.get("/goods/goodsList")
    client.force_login(two_merchants["a"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/admin/sales/sale/",
            {"action": "delete_selected", "_selected_action": [s.pk for s in sales], "post": "yes"},
        )
    assert response.status_code == 302
    assert not Sale.objects.filter(pk__in=[s.pk for s in sales]).exists()
    assert all(_sale_keys_left(s.pk) == [] for s in sales) and _list_pages_cached() == []


def test_a_sale_with_orders_being_written_is_not_deleted(client, two_merchants):
    from testutils.shoppers import reserve_directly

    sale = make_sale(goods=two_merchants["goods_a"], stock=5)
    left, _request_id = reserve_directly(make_user().pk, sale.pk)  # handed out, order not written yet
    assert left == 4
    client.force_login(two_merchants["a"])
    page = client.get(f"/admin/sales/sale/{sale.pk}/delete/")
    assert b"Shoppers are buying it right now: some of their orders are still being placed." in page.content
    client.post(f"/admin/sales/sale/{sale.pk}/delete/", {"post": "yes"})
    assert Sale.objects.filter(pk=sale.pk).exists()
    assert redis().get(keys.stock(sale.pk)) == b"4"


def test_the_service_refuses_a_sale_with_orders(two_merchants):
    from sales import services

    with pytest.raises(services.SaleInUse):
        services.sale_delete(sale=two_merchants["sale_a"])  # the fixture made an order
    assert Sale.objects.filter(pk=two_merchants["sale_a"].pk).exists()


def test_admin_deletes_goods_through_the_service(client, two_merchants, django_capture_on_commit_callbacks):
    goods = make_goods(owner=two_merchants["a"], name="Gone soon")
    client.get("/goods/goodsList")
    assert _list_pages_cached()
    client.force_login(two_merchants["a"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/goods/goods/{goods.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Goods.objects.filter(pk=goods.pk).exists()
    assert _list_pages_cached() == []


def test_goods_page_offers_no_inline_sale_delete(client, two_merchants):
    client.force_login(two_merchants["a"])
    page = client.get(f"/admin/goods/goods/{two_merchants['goods_a'].pk}/change/").content
    assert b"sales-0-DELETE" not in page


# --- the stock audit in the admin -------------------------------------------------------------


def test_stock_audit_is_listed_summed_and_scoped(client, two_merchants, django_capture_on_commit_callbacks):
    from testutils.factories.orders import buy

    client.force_login(two_merchants["a"])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            "/admin/sales/sale/add/",
            {
                "goods": two_merchants["goods_a"].pk,
                "seckill_price": "9.9",
                "stock_count": 6,
                "start_at_0": "2020-01-01",
                "start_at_1": "10:00:00",
                "end_at_0": "2099-01-01",
                "end_at_1": "11:00:00",
            },
        )
    sale = Sale.objects.get(goods=two_merchants["goods_a"], stock_count=6)
    order = buy(sale=sale, user=make_user())
    sale.refresh_from_db()
    assert sale.stock_count == 5

    page = client.get(f"/admin/sales/stockaudit/?sale__id__exact={sale.pk}").content.decode()
    assert "Sum of the changes shown: 5" in page
    assert order.order_no in page and "merchant edit" in page and "purchase" in page
    sales_page = client.get("/admin/sales/sale/").content.decode()
    assert f'?sale__id__exact={sale.pk}" class="audit-link">Stock log (5)</a>' in sales_page
    # Merchant B sees none of A's stock changes, and cannot write any.
    client.force_login(two_merchants["b"])
    assert order.order_no not in client.get("/admin/sales/stockaudit/").content.decode()
    assert client.get("/admin/sales/stockaudit/add/").status_code == 403


@pytest.mark.parametrize(
    ("language", "words"),
    [
        (
            "en",
            [
                "sale created",
                "12 orders placed together",
                "cancelled by merchant",
                "units on sale corrected from 5 to 4; buyers from 1 to 2",
                "units on sale restored to 4; buyers from 0 to 2",
                "a note nobody could read",
            ],
        ),
        (
            "zh-hans",
            [
                "创建秒杀活动",
                "同批写入 12 个订单",
                "商家取消",
                "在售件数由 5 更正为 4；买家数由 1 更正为 2",
                "在售件数恢复为 4；买家数由 0 更正为 2",
                "a note nobody could read",
            ],
        ),
    ],
)
def test_the_stock_log_says_each_rows_detail_in_the_merchants_language(client, two_merchants, language, words):
    """The log stores figures (StockAudit.detail); the list and the row's own page put them in
    words, in the language of the request. A note the migration could not read is shown as is."""
    from sales.models import StockAudit, StockChange
    from sales.services import stock_audit_record

    sale = two_merchants["sale_a"]
    repair = {"stock_before": 5, "stock_after": 4, "buyers_before": 1, "buyers_after": 2}
    for reason, detail in [
        (StockChange.MERCHANT_EDIT, {"created": True}),
        (StockChange.PURCHASE, {"orders": 12}),
        (StockChange.CANCELLATION, {"cancelled_by": "merchant"}),
        (StockChange.RECONCILE_REPAIR, repair),
        (StockChange.RECONCILE_REPAIR, {**repair, "stock_before": None, "buyers_before": 0}),
        (StockChange.OPENING, {"note": "a note nobody could read"}),
    ]:
        stock_audit_record(sale_id=sale.pk, delta=0, reason=reason, detail=detail)
    client.force_login(two_merchants["a"])
    client.cookies["django_language"] = language
    page = client.get(f"/admin/sales/stockaudit/?sale__id__exact={sale.pk}").content.decode()
    for sentence in words:
        assert sentence in page
    row = StockAudit.objects.get(sale=sale, detail__orders=12)
    assert words[1] in client.get(f"/admin/sales/stockaudit/{row.pk}/change/").content.decode()


def test_admin_column_titles_follow_the_language_of_the_request(client, two_merchants):
    client.force_login(two_merchants["a"])
    client.cookies["django_language"] = "zh-hans"
    page = client.get("/admin/sales/sale/").content.decode()
    assert "剩余" in page and "销售额" in page and "库存流水（" in page
    client.cookies["django_language"] = "en"  # the same process, another language: titles are lazy
    page = client.get("/admin/sales/sale/").content.decode()
    assert "Left" in page and "Revenue" in page and "Stock log (" in page


def test_the_status_filter_finds_the_sales_that_are_on_with_no_unit_left(client, two_merchants):
    """Sold out: on now and nothing left to buy, by the live counter (a unit whose order is
    still being written is gone) or, for a sale not loaded for selling, by the database."""
    from testutils.shoppers import reserve_directly

    merchant = two_merchants["a"]

    def sale(name: str, **fields) -> Sale:
        return make_sale(goods=make_goods(owner=merchant, name=name), **fields)

    sale("Zero Kettle", stock=0)
    last_one = sale("Last Lamp", stock=1)
    reserve_directly(make_user().pk, last_one.pk)  # taken at the gate, its order not written yet
    sale("Cold Cup", stock=0, warm=False)
    sale("Plenty Pan", stock=5)
    sale("Later Tea", stock=0, starts_in=3600)
    sale("Old Mug", stock=0, starts_in=-7200, lasts=3600)
    client.force_login(merchant)
    for language, label in (("en", "Sold out"), ("zh-hans", "已售罄")):
        client.cookies["django_language"] = language
        page = client.get("/admin/sales/sale/").content.decode()
        assert 'href="?status=sold_out"' in page and label in page

    def listed(query: str) -> set[str]:
        page = client.get(f"/admin/sales/sale/{query}").content.decode()
        table = re.search(r'<table id="result_list">.*?</table>', page, re.S)[0]
        return set(re.findall(r"(Zero Kettle|Last Lamp|Cold Cup|Plenty Pan|Later Tea|Old Mug|A-Phone)", table))

    assert listed("?status=sold_out") == {"Zero Kettle", "Last Lamp", "Cold Cup"}
    assert listed("?status=1") == {"Zero Kettle", "Last Lamp", "Cold Cup", "Plenty Pan", "A-Phone"}
