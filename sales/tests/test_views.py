import time

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sales import cache_keys as keys
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_ahead_sale, make_sale
from testutils.factories.users import make_user

pytestmark = pytest.mark.django_db


def test_list_shows_sales_and_is_cached(client):
    sale = make_sale(goods=make_goods(name="Cached Phone"))
    first = client.get("/goods/goodsList")
    assert first.status_code == 200 and b"Cached Phone" in first.content
    assert cache.get(keys.goods_list_html("en")) == first.content.decode()
    with CaptureQueriesContext(connection) as queries:
        second = client.get("/goods/goodsList")
    assert second.content == first.content and len(queries) == 0
    assert f"/goods/detail/{sale.pk}".encode() in first.content


def test_cached_list_has_nothing_user_specific(client):
    user = make_user(nickname="SecretNick")
    make_sale()
    client.force_login(user)
    html = client.get("/goods/goodsList").content.decode()
    assert "SecretNick" not in html and user.mobile not in html
    assert "csrfmiddlewaretoken" not in html


def test_changing_a_sale_reaches_redis_and_drops_the_list_cache(client, django_capture_on_commit_callbacks):
    from sales.services import sale_update

    sale = make_sale(stock=7)
    client.get("/goods/goodsList")
    assert cache.get(keys.goods_list_html("en")) is not None
    with django_capture_on_commit_callbacks(execute=True):
        sale_update(sale=sale, changes={}, stock_delta=-4)
    assert cache.get(keys.goods_list_html("en")) is None
    assert b"3 left" in client.get("/goods/goodsList").content


def test_list_stampede_renders_once(client, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from sales import views

    make_sale()
    renders = []
    real = views.sales_for_list

    def slow_render():
        renders.append(1)
        time.sleep(0.3)
        return real()

    monkeypatch.setattr(views, "sales_for_list", slow_render)
    from django.test import RequestFactory

    def fetch(_):
        return views._list_html(RequestFactory().get("/goods/goodsList"))

    with ThreadPoolExecutor(8) as pool:
        pages = list(pool.map(fetch, range(8)))
    assert len(set(pages)) == 1 and len(renders) == 1


@pytest.mark.parametrize(
    "starts_in, lasts, status",
    [(120, 3600, 0), (-60, 3600, 1), (-7200, 3600, 2)],
)
def test_detail_json_status_and_remaining_seconds(client, starts_in, lasts, status):
    sale = make_sale(starts_in=starts_in, lasts=lasts, stock=4)
    body = client.get(f"/goods/getDetails/{sale.pk}").json()
    assert body["code"] == 0 and body["msg"] == "success"
    data = body["data"]
    assert data["seckillStatus"] == status
    assert set(data) == {"seckillStatus", "remainSeconds", "goods", "user"}
    expected = {0: lambda r: 110 <= r <= 121, 1: lambda r: r == 0, 2: lambda r: r == -1}[status]
    assert expected(data["remainSeconds"]), data["remainSeconds"]
    assert {
        "id",
        "goodsName",
        "goodsTitle",
        "goodsImg",
        "goodsDetail",
        "goodsPrice",
        "goodsStock",
        "seckillPrice",
        "stockCount",
        "startDate",
        "endDate",
    } <= set(data["goods"])
    assert data["goods"]["stockCount"] == 4
    assert data["user"] is None


def test_detail_json_carries_the_user_without_password(client):
    user = make_user()
    client.force_login(user)
    data = client.get(f"/goods/getDetails/{make_sale().pk}").json()["data"]
    assert data["user"]["mobile"] == user.mobile and "password" not in data["user"]


@pytest.mark.parametrize("bad", ["999999", "abc", "-1", "0", "1.5", "9" * 40, "%00"])
def test_detail_bad_ids_are_404(client, bad):
    response = client.get(f"/goods/getDetails/{bad}")
    assert response.status_code == 404 and response.json()["code"] != 0
    assert client.get(f"/goods/detail/{bad}").status_code == 404


def test_unknown_ids_are_cached_briefly(client):
    client.get("/goods/getDetails/424242")
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/goods/getDetails/424242").status_code == 404
    assert len(queries) == 0


def test_wrong_method_on_pages_is_405(client):
    assert client.post("/goods/goodsList").status_code in (403, 405)
    assert client.delete(f"/goods/getDetails/{make_sale().pk}").status_code == 405


def test_a_list_request_that_gave_up_waiting_leaves_the_holders_lock(monkeypatch):
    from django.test import RequestFactory

    from sales import views
    from seckill_site.redis import client as redis
    from seckill_site.redis import lock

    make_sale(goods=make_goods(name="Slow Phone"))
    monkeypatch.setattr(views, "LIST_LOCK_WAIT_SECONDS", 0.1)
    key = keys.goods_list_lock("en")
    with lock(key, ttl=30) as token:  # a slow renderer elsewhere
        assert "Slow Phone" in views._list_html(RequestFactory().get("/goods/goodsList"))
        assert redis().get(key) == token.encode()


def test_list_marks_a_draw_and_says_until_when_its_entries_are_open(client):
    make_ahead_sale(stock=3, opens_in=-30, starts_in=3600)
    html = client.get("/goods/goodsList").content.decode()
    assert 'class="pill draw">Draw<' in html
    assert "Entries open now, until " in html
    # The same for everyone, at any time it is served: the absolute time with its year, and the
    # epochs the page's script follows once entries close.
    assert str(time.localtime().tm_year) in html.split("Entries open now, until ")[1][:40]
    assert "data-entries-closes=" in html


def test_list_says_when_a_draws_entries_will_open(client):
    make_ahead_sale(stock=3, opens_in=600, starts_in=3600)
    html = client.get("/goods/goodsList").content.decode()
    opens = html.split('data-entries-state="ahead"')[1].split("</span>")[0]
    assert ">Entries open " in opens and "hidden" not in opens


def test_list_shows_no_draw_badge_on_a_first_come_sale(client):
    make_sale()
    assert "pill draw" not in client.get("/goods/goodsList").content.decode()


def test_list_marks_a_draw_in_chinese(client):
    make_ahead_sale(stock=3, opens_in=-30, starts_in=3600)
    html = client.get("/zh-hans/goods/goodsList").content.decode()
    assert ">抽签<" in html and "正在报名，截至 " in html and "年" in html.split("正在报名，截至 ")[1][:20]
