"""A sale's goods in the visitor's language, else the other: the list, the item page, their JSON,
the API and the calendar file, all from one cached row that holds every language."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from goods.models import Goods
from goods.services import goods_save
from sales import cache_keys as keys
from sales import selectors
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale

pytestmark = pytest.mark.django_db

TEAPOT = {"name_en": "Teapot", "name_zh_hans": "茶壶", "title_en": "Clay, 300 ml", "title_zh_hans": "紫砂，300 毫升"}


@pytest.fixture
def sale():
    return make_sale(goods=make_goods(**TEAPOT, detail_en="Hand made.", detail_zh_hans="手工制作。"), starts_in=600)


IN_ENGLISH = ("", "Teapot", "Clay, 300 ml", "茶壶")
IN_CHINESE = ("/zh-hans", "茶壶", "紫砂，300 毫升", "Teapot")


@pytest.mark.parametrize(("prefix", "name", "title", "other"), [IN_ENGLISH, IN_CHINESE])
def test_the_list_and_the_item_page_show_the_urls_language(client, sale, prefix, name, title, other):
    for path in ("/goods/goodsList", f"/goods/detail/{sale.pk}"):
        page = client.get(f"{prefix}{path}").content.decode()
        assert name in page and title in page and other not in page, path
    item = client.get(f"{prefix}/goods/detail/{sale.pk}").content.decode()
    assert f"<title>{name}" in item and f"<h1>{name}</h1>" in item


def test_a_page_in_a_language_the_goods_lack_shows_the_other(client):
    english_only = make_sale(goods=make_goods(name_en="Kettle", title_en="Steel"))
    kettle = Goods.objects.create(owner=english_only.goods.owner, price=1, name_zh_hans="水壶", title_zh_hans="不锈钢")
    chinese_only = make_sale(goods=kettle)
    assert "<h1>Kettle</h1>" in client.get(f"/zh-hans/goods/detail/{english_only.pk}").content.decode()
    assert "<h1>水壶</h1>" in client.get(f"/goods/detail/{chinese_only.pk}").content.decode()


def test_the_details_json_the_api_and_the_calendar_are_in_the_visitors_language(client, sale):
    english = client.get(f"/goods/getDetails/{sale.pk}").json()["data"]["goods"]
    chinese = client.get(f"/zh-hans/goods/getDetails/{sale.pk}").json()["data"]["goods"]
    texts = ("goodsName", "goodsTitle", "goodsDetail")
    assert [english[key] for key in texts] == ["Teapot", "Clay, 300 ml", "Hand made."]
    assert [chinese[key] for key in texts] == ["茶壶", "紫砂，300 毫升", "手工制作。"]

    for language, name in (("en", "Teapot"), ("zh-hans", "茶壶")):
        listed = client.get("/api/v1/sales", headers={"accept-language": language}).json()["data"]
        assert [row["goodsName"] for row in listed["results"] if row["id"] == sale.pk] == [name]
        one = client.get(f"/api/v1/sales/{sale.pk}", headers={"accept-language": language}).json()["data"]
        assert one["goods"]["goodsName"] == name

    assert "SUMMARY:Flash sale: Teapot" in client.get(f"/goods/calendar/{sale.pk}.ics").content.decode()
    assert "茶壶" in client.get(f"/zh-hans/goods/calendar/{sale.pk}.ics").content.decode()


def test_one_cached_row_serves_every_language_without_postgresql(sale):
    cache.delete(keys.sale_cache(sale.pk))
    assert selectors.sale_get(sale_id=sale.pk).goods_name == "Teapot"
    _fresh_until, row = cache.get(keys.sale_cache(sale.pk))
    assert row["goodsNames"] == {"en": "Teapot", "zh-hans": "茶壶"} and row["goodsName"] == "Teapot"
    with CaptureQueriesContext(connection) as queries, translation.override("zh-hans"):
        view = selectors.sale_get(sale_id=sale.pk)
        assert (view.goods_name, view.goods_title, view.goods_detail) == ("茶壶", "紫砂，300 毫升", "手工制作。")
        assert view.wire()["goodsName"] == "茶壶"
    assert len(queries) == 0


def test_editing_the_chinese_name_reaches_the_chinese_pages_and_leaves_the_english(
    client, sale, django_capture_on_commit_callbacks
):
    assert "茶壶" in client.get(f"/zh-hans/goods/detail/{sale.pk}").content.decode()  # cached now
    client.get("/zh-hans/goods/goodsList")
    goods = Goods.objects.get(pk=sale.goods_id)
    goods.name_zh_hans = "宜兴茶壶"
    with django_capture_on_commit_callbacks(execute=True):
        goods_save(goods=goods, fields=["name_zh_hans"])
    for path in (f"/goods/detail/{sale.pk}", "/goods/goodsList"):
        assert "宜兴茶壶" in client.get(f"/zh-hans{path}").content.decode(), path
        assert "Teapot" in client.get(path).content.decode(), path
