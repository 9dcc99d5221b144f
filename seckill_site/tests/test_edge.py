"""The shop behind a real edge: deploy/edge.vcl in varnishd (tools/edge.py) in front of Django's
live server. A logged-in and an anonymous visitor get the same kept page, no kept answer
carries anyone's data or cookie, a language never reaches another URL's visitors, and the
shop's purges (seckill_site.edge) land within a second of the change."""

import time
from decimal import Decimal

import pytest
import requests
from django.test import Client

from goods.services import goods_save
from sales.models import Sale
from sales.services import sale_update
from seckill_site import edge as edge_module
from seckill_site.edge import edge_purge_flush, edge_purge_forget
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from tools.edge import edge_down, edge_up, varnish_available
from tools.missing import missing

pytestmark = [
    pytest.mark.processes,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not varnish_available(),
        reason=missing("varnishd is not installed: the edge tests did not run", "varnish", "varnish-modules"),
    ),
]


@pytest.fixture
def edge(live_server, tmp_path, settings, monkeypatch):
    """The edge's base URL, purged by the shop. Without the purges' repeat, which would drop a
    page a test has just had the edge keep (test_edge_purge.py tests the repeat)."""
    monkeypatch.setattr(edge_module, "REPEAT_SECONDS", 3600.0)
    edge_purge_forget()  # an earlier test's repeats would reach this edge
    url = edge_up(tmp_path / "edge", live_server.url.removeprefix("http://"))
    settings.EDGE_PURGE_URLS = [url]
    yield url
    edge_purge_forget()
    edge_down(tmp_path / "edge")


def _session_cookie(user) -> dict[str, str]:
    client = Client()
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


def test_everybody_gets_the_same_kept_page_and_nobodys_data(edge):
    sale = make_sale(goods=make_goods(name="Edge Teapot"), starts_in=3600)
    shopper = make_user(nickname="EdgeNick")
    mine = _session_cookie(shopper)
    page = f"{edge}/goods/detail/{sale.pk}"
    first = requests.get(page, cookies=mine, headers={"Accept-Language": "zh-CN"}, timeout=10)
    anonymous = requests.get(page, timeout=10)
    assert (first.headers["X-Cache"], anonymous.headers["X-Cache"]) == ("MISS", "HIT")
    assert first.content == anonymous.content and "Edge Teapot" in first.text
    assert "EdgeNick" not in first.text and shopper.mobile not in first.text
    assert '<html lang="en">' in first.text  # the URL's language, not the browser's
    for answer in (first, anonymous):
        assert "Set-Cookie" not in answer.headers and "xkey" not in answer.headers

    chinese = requests.get(f"{edge}/zh-hans/goods/detail/{sale.pk}", timeout=10)
    assert chinese.headers["X-Cache"] == "MISS" and '<html lang="zh-hans">' in chinese.text

    # A logged-in shopper's poll is their own: passed, never kept, never handed to another.
    poll = f"{edge}/goods/getDetails/{sale.pk}"
    own = requests.get(poll, cookies=mine, timeout=10)
    assert own.headers["X-Cache"] == "PASS" and own.json()["data"]["user"]["nickname"] == "EdgeNick"
    everybodys = [requests.get(poll, timeout=10) for _ in range(2)]
    assert [a.json()["data"]["user"] for a in everybodys] == [None, None]
    assert "PASS" not in {a.headers["X-Cache"] for a in everybodys}


def test_a_shoppers_own_pages_pass_the_edge(edge):
    shopper = make_user()
    for path in ("/orders/", "/user/me", "/seckill/shopperState?goodsId=1"):
        answer = requests.get(f"{edge}{path}", cookies=_session_cookie(shopper), timeout=10, allow_redirects=False)
        assert answer.headers["X-Cache"] == "PASS", path


def test_an_edit_reaches_the_edge_within_a_second(edge):
    sale = make_sale(goods=make_goods(name="Purge Kettle"), starts_in=3600)
    page = f"{edge}/goods/detail/{sale.pk}"
    requests.get(page, timeout=10)
    requests.get(f"{edge}/goods/goodsList", timeout=10)
    assert requests.get(page, timeout=10).headers["X-Cache"] == "HIT"
    changed = time.monotonic()
    sale_update(sale=Sale.objects.get(pk=sale.pk), changes={"seckill_price": Decimal("1.23")})
    assert edge_purge_flush(5.0)
    assert time.monotonic() - changed < 1.0
    fresh = requests.get(page, timeout=10)
    assert fresh.headers["X-Cache"] == "MISS" and "¥1.23" in fresh.text
    listed = requests.get(f"{edge}/goods/goodsList", timeout=10)
    assert listed.headers["X-Cache"] == "MISS" and "¥1.23" in listed.text


def test_a_chinese_name_edited_reaches_the_kept_chinese_page_and_the_english_keeps_its_own(edge):
    goods = make_goods(name_en="Edge Teapot", name_zh_hans="边缘茶壶")
    sale = make_sale(goods=goods, starts_in=3600)
    english, chinese = f"{edge}/goods/detail/{sale.pk}", f"{edge}/zh-hans/goods/detail/{sale.pk}"
    for page in (english, chinese):
        requests.get(page, timeout=10)
    kept = requests.get(chinese, timeout=10)
    assert kept.headers["X-Cache"] == "HIT" and "边缘茶壶" in kept.text and "Edge Teapot" not in kept.text
    goods.name_zh_hans = "紫砂茶壶"
    goods_save(goods=goods, fields=["name_zh_hans"])
    assert edge_purge_flush(5.0)
    fresh = requests.get(chinese, timeout=10)
    assert fresh.headers["X-Cache"] == "MISS" and "紫砂茶壶" in fresh.text
    assert "Edge Teapot" in requests.get(english, timeout=10).text


def test_a_visitor_who_chose_chinese_is_sent_there_by_the_edge_too(edge):
    sale = make_sale()
    chose = {"django_language": "zh-hans"}
    for path in (f"/goods/detail/{sale.pk}", "/goods/goodsList", "/jsi18n/"):
        requests.get(f"{edge}{path}", timeout=10)  # kept in English for everybody else
        answer = requests.get(f"{edge}{path}", cookies=chose, timeout=10, allow_redirects=False)
        assert (answer.status_code, answer.headers["Location"]) == (302, f"/zh-hans{path}"), path
        assert answer.headers["Cache-Control"] == "private"
        followed = requests.get(f"{edge}{path}", cookies=chose, timeout=10)
        assert followed.headers["Content-Language"] == "zh-hans", path


def test_the_sale_state_is_one_kept_copy_for_every_shopper_until_its_sale_changes(edge):
    sale = make_sale(stock=4)
    url = f"{edge}/seckill/saleState/{sale.pk}"
    alice = requests.get(url, cookies=_session_cookie(make_user()), headers={"Accept-Language": "zh-CN"}, timeout=10)
    bob = requests.get(url, cookies=_session_cookie(make_user()), timeout=10)
    assert (alice.headers["X-Cache"], bob.headers["X-Cache"]) == ("MISS", "HIT")
    assert alice.content == bob.content and alice.json()["data"]["stockCount"] == 4
    assert "Set-Cookie" not in bob.headers and "Age" in bob.headers
    sale_update(sale=Sale.objects.get(pk=sale.pk), changes={"seckill_price": Decimal("1.23")})
    assert edge_purge_flush(5.0)
    assert requests.get(url, timeout=10).headers["X-Cache"] == "MISS"
