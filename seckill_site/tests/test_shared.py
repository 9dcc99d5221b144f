"""Everybody's answers (seckill_site.shared): the pages and the poll an edge may keep are the
same bytes for every visitor of a URL, in the URL's language, with the edge's headers and no
cookie; every other answer still follows the visitor's language."""

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory

from seckill_site.shared import SharedAnswerMiddleware, share
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from users.middleware import REFRESHED_AT

pytestmark = pytest.mark.django_db

ENGLISH, CHINESE = "", "/zh-hans"


def _shared_urls(sale_id: int) -> list[str]:
    return [
        f"{prefix}{path}"
        for prefix in (ENGLISH, CHINESE)
        for path in ("/goods/goodsList", f"/goods/detail/{sale_id}", f"/goods/getDetails/{sale_id}", "/jsi18n/")
    ]


def _visitors() -> dict[str, Client]:
    """Visitors whose answers must not differ: logged out, logged in with a session due to
    slide, one whose browser asks for Chinese, and one who chose English with the switch."""
    anonymous = Client()
    shopper = Client()
    shopper.force_login(make_user())
    session = shopper.session
    session[REFRESHED_AT] = 0  # the next answer that reads it would slide it (a Set-Cookie)
    session.save()
    chinese = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    english = Client(HTTP_ACCEPT_LANGUAGE="en-US")
    english.cookies["django_language"] = "en"
    return {"anonymous": anonymous, "shopper": shopper, "chinese": chinese, "english": english}


def _bytes(answer) -> bytes | dict:
    """What must not differ between visitors: the poll's countdown ticks, the rest is bytes."""
    if answer["Content-Type"] != "application/json":
        return answer.content
    body = answer.json()
    body["data"].pop("remainSeconds", None)
    return body


def _vary(answer) -> set[str]:
    return {part.strip().lower() for part in answer.headers.get("Vary", "").split(",") if part.strip()}


def test_shared_answers_are_the_same_bytes_for_everybody_in_the_urls_language():
    sale = make_sale(goods=make_goods(name="Shared Kettle"), starts_in=3600)
    visitors = _visitors()
    for url in _shared_urls(sale.pk):
        anonymous = visitors["anonymous"].get(url)
        assert anonymous.status_code == 200, url
        for name, client in visitors.items():
            if "getDetails" in url and name == "shopper":
                continue  # a logged-in poll carries its user: below
            answer = client.get(url)
            assert _bytes(answer) == _bytes(anonymous), (url, name)
            assert answer.headers["Content-Language"] == ("zh-hans" if url.startswith(CHINESE) else "en"), url
            assert not answer.cookies, (url, name, answer.cookies)
            cache = answer.headers["Cache-Control"]
            assert "public" in cache and "s-maxage=" in cache and "stale-while-revalidate=" in cache, (url, cache)
            assert "accept-language" not in _vary(answer), url
            assert "cookie" not in _vary(answer) or "getDetails" in url, url
            assert answer.headers.get("xkey"), url
    english = visitors["chinese"].get(f"/goods/detail/{sale.pk}").content.decode()
    chinese = visitors["english"].get(f"/zh-hans/goods/detail/{sale.pk}").content.decode()
    assert '<html lang="en">' in english and "Log in to buy" in english
    assert '<html lang="zh-hans">' in chinese and "登录后购买" in chinese


def test_a_visitor_who_chose_chinese_is_sent_to_the_chinese_page():
    sale = make_sale()
    chose = Client()
    chose.cookies["django_language"] = "zh-hans"
    for path in ("/goods/goodsList", f"/goods/detail/{sale.pk}", "/jsi18n/"):
        answer = chose.get(path + "?from=mail")
        assert answer.status_code == 302 and answer.headers["Location"] == f"/zh-hans{path}?from=mail", path
        assert "private" in answer.headers["Cache-Control"] and "cookie" in _vary(answer)
        assert chose.get(f"/zh-hans{path}").status_code == 200
    # The poll is JSON for scripts: the language its URL names.
    assert chose.get(f"/goods/getDetails/{sale.pk}").headers["Content-Language"] == "en"


def test_a_logged_in_poll_is_its_own_and_never_everybodys():
    sale = make_sale(starts_in=3600)
    shopper = Client()
    shopper.force_login(me := make_user())
    mine = shopper.get(f"/zh-hans/goods/getDetails/{sale.pk}")
    assert mine.json()["data"]["user"]["id"] == me.pk
    assert "public" not in mine.headers.get("Cache-Control", "") and "xkey" not in mine.headers
    assert "cookie" in _vary(mine)


def test_the_page_names_the_keys_a_purge_uses():
    sale = make_sale()
    assert Client().get(f"/goods/detail/{sale.pk}").headers["xkey"] == f"sale-{sale.pk}"
    assert Client().get(f"/zh-hans/goods/getDetails/{sale.pk}").headers["xkey"] == f"sale-{sale.pk}"
    assert Client().get("/goods/goodsList").headers["xkey"] == "sales"


def test_an_item_page_is_kept_no_longer_than_until_its_sale_opens():
    soon = make_sale(starts_in=20)
    cache = Client().get(f"/goods/detail/{soon.pk}").headers["Cache-Control"]
    seconds = int(cache.split("s-maxage=")[1].split(",")[0])
    assert 1 <= seconds <= 20, cache


def test_no_shared_answer_for_a_missing_sale():
    for url in ("/goods/detail/999999", "/zh-hans/goods/detail/999999", "/goods/getDetails/999999"):
        answer = Client().get(url)
        assert answer.status_code == 404 and "public" not in answer.headers.get("Cache-Control", ""), url


def test_other_answers_follow_the_visitors_language():
    chinese = Client(HTTP_ACCEPT_LANGUAGE="zh-CN")
    login = chinese.get("/user/index")
    assert login.headers["Content-Language"] == "zh-hans" and "accept-language" in _vary(login)
    assert chinese.get("/").headers["Location"] == "/zh-hans/goods/goodsList"
    assert Client(HTTP_ACCEPT_LANGUAGE="en").get("/").headers["Location"] == "/goods/goodsList"
    # A Chinese visitor's links lead to the Chinese pages.
    assert 'href="/zh-hans/goods/goodsList"' in login.content.decode()


def test_the_language_switch_goes_to_the_page_in_that_language():
    sale = make_sale()
    answer = Client().get("/language", {"language": "zh-hans", "next": f"/goods/detail/{sale.pk}"})
    assert answer.status_code == 302 and answer.headers["Location"] == f"/zh-hans/goods/detail/{sale.pk}"
    assert answer.cookies["django_language"].value == "zh-hans"
    back = Client().get("/language", {"language": "en", "next": f"/zh-hans/goods/detail/{sale.pk}?x=1"})
    assert back.headers["Location"] == f"/goods/detail/{sale.pk}?x=1"
    orders = Client().get("/language", {"language": "zh-hans", "next": "/orders/?tab=unpaid"})
    assert orders.headers["Location"] == "/zh-hans/orders/?tab=unpaid"  # a shopper's own page too
    back = Client().get("/language", {"language": "en", "next": "/zh-hans/user/notifications"})
    assert back.headers["Location"] == "/user/notifications"
    admin = Client().get("/language", {"language": "zh-hans", "next": "/admin/"})
    assert admin.headers["Location"] == "/admin/"  # no prefix there: the cookie decides
    unknown = Client().get("/language", {"language": "xx", "next": "/zh-hans/goods/goodsList"})
    assert unknown.headers["Location"] == "/zh-hans/goods/goodsList" and "django_language" not in unknown.cookies


def test_a_cookie_set_on_a_shared_answer_never_leaves():
    def view(_request):
        response = HttpResponse("everybody's")
        response.set_cookie("sessionid", "someone's")
        share(response, keys=["sales"], seconds=60, stale=5, browser=0)
        return response

    answer = SharedAnswerMiddleware(view)(RequestFactory().get("/goods/goodsList"))
    assert not answer.cookies and answer.headers["xkey"] == "sales"
    assert answer.headers["Cache-Control"] == "public, max-age=0, s-maxage=60, stale-while-revalidate=5"


def test_a_shoppers_own_answers_are_never_public():
    sale = make_sale()
    shopper = Client()
    shopper.force_login(make_user())
    for path in ("/orders/", "/user/me", "/user/addresses", f"/seckill/shopperState?goodsId={sale.pk}",
                 f"/seckill/result?goodsId={sale.pk}", "/api/v1/users/me"):  # fmt: skip
        answer = shopper.get(path)
        assert answer.status_code == 200, path
        assert "public" not in answer.headers.get("Cache-Control", "") and "xkey" not in answer.headers, path
