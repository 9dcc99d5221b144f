"""Every page answers under each language's prefix: the pages are read from the URLconf (the
routes under seckill_site.shared.language_patterns), so a page added there is held here too.
A page under /zh-hans/ answers as its unprefixed twin does, in Chinese, and its links stay in
Chinese; the data the pages' scripts ask for, the fast path's, the providers' and the admin's
addresses keep one unprefixed address. A browser opening a shopper's own page at its
unprefixed address, while its visitor reads Chinese, is sent to the Chinese page; everybody's
pages are never sent anywhere by Accept-Language (the edge drops it)."""

import re
import urllib.parse

import pytest
from django.conf import settings
from django.test import Client
from django.urls import URLResolver, get_resolver, resolve, reverse
from django.urls.exceptions import Resolver404
from django.utils.translation import gettext, override

from orders.models import Payment
from seckill_site.shared import PathLanguagePrefix
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import alipay_buyer_pays, alipay_cashier_open

pytestmark = pytest.mark.django_db
ZH = "zh-hans"
BROWSER = {"HTTP_ACCEPT": "text/html,application/xhtml+xml,*/*;q=0.8"}
FOOTER = "Flash sales · every unit sold exactly once"
# The addresses with no language prefix, and why: a new one must be added here on purpose.
UNPREFIXED = {
    "": "goes to the list in the visitor's language",
    "healthz": "probes",
    "readyz": "probes",
    "metrics": "the scrape",
    "favicon.ico": "a file",
    "language": "the switch itself",
    "user/": "data for the pages' scripts (users/data_urls.py)",
    "reminders/": "JSON for the item page's script",
    "seckill/": "the buy, its captcha and polls: the fast path and the edge match them by path",
    "waiting-room/": "the waiting page's poll: the fast path matches it by path",
    "payments/": "the providers' notifications",
    "api/": "the REST API",
    "admin/": "the merchants' admin, with its own language menu",
    "^admin/goods/": "old admin bookmarks",
    "media/": "files",
}


def _language_routes() -> list[tuple[str, list[str]]]:
    """(name, its parameters) of every route under the language prefixes."""
    found = []

    def walk(patterns, namespace):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, f"{namespace}{entry.namespace}:" if entry.namespace else namespace)
            elif entry.name:
                found.append((namespace + entry.name, list(entry.pattern.converters)))

    for entry in get_resolver().url_patterns:
        if isinstance(entry, URLResolver) and isinstance(entry.pattern, PathLanguagePrefix):
            walk(entry.url_patterns, "")
    return found


def test_every_address_without_a_language_prefix_is_one_on_purpose():
    routes = [str(entry.pattern) for entry in get_resolver().url_patterns]
    languages = [route for route in routes if route in ("", "zh-hans/")]  # PathLanguagePrefix's, per language
    unknown = [
        route
        for route in routes
        if not any(route == known or (known.endswith("/") and route.startswith(known)) for known in UNPREFIXED)
    ]
    assert languages and unknown == [], "a page goes under language_patterns, else into UNPREFIXED"
    pages = dict(_language_routes())
    for name in ("orders:list", "orders:detail", "orders:paying", "orders:card", "users:notifications",
                 "users:index", "users:addresses", "goods:list", "item:page", "waitingroom:page"):  # fmt: skip
        assert name in pages, name


@pytest.fixture
def shopper_world(client):
    """A shopper with an address, an unpaid order and a card attempt on it: every page's
    parameters."""
    me = make_user()
    address = make_address(me)
    client.force_login(me)
    sale = make_sale(stock=3)
    order = buy(sale=sale, user=me)
    card = client.post(f"/zh-hans/orders/{order.order_no}/pay", {"method": "stripe"})
    assert card.status_code == 302 and card["Location"].startswith(f"/zh-hans/orders/{order.order_no}/pay/")
    trade_no = Payment.objects.filter(order=order).latest("pk").trade_no
    values = {"sale_id": sale.pk, "order_no": order.order_no, "trade_no": trade_no, "address_id": address.pk}
    return client, order, values


def _reversed(name: str, params: list[str], values: dict, language: str) -> str:
    with override(language):
        return reverse(name, kwargs={param: values[param] for param in params})


def _language_page(path: str) -> bool:
    """Whether `path` (a link) is one of the pages each language has."""
    try:
        match = resolve(urllib.parse.urlsplit(path).path)
    except Resolver404:
        return False
    return match.view_name in dict(_language_routes())


def _links(html: str) -> list[str]:
    return [link for link in re.findall(r'(?:href|action|data-[a-z-]+)="(/[^"]*)"', html) if not link.startswith("//")]


def test_every_page_answers_under_the_chinese_prefix_as_it_does_unprefixed(shopper_world):
    client, _order, values = shopper_world
    with override(ZH):
        footer_zh = gettext(FOOTER)
    checked = 0
    for name, params in _language_routes():
        english, chinese = (_reversed(name, params, values, language) for language in ("en", ZH))
        assert chinese == f"/zh-hans{english}", name
        en = client.get(english, HTTP_ACCEPT_LANGUAGE="en")
        # The address decides, whatever the browser says.
        zh = client.get(chinese, HTTP_ACCEPT_LANGUAGE="en")
        assert zh.status_code == en.status_code, (name, en.status_code, zh.status_code)
        assert zh.status_code in (200, 302, 405), (name, zh.status_code)
        if zh.status_code == 405:
            continue  # a POST's address: its form is held below
        if zh.status_code == 302:
            target = zh["Location"]
            if _language_page(target):
                assert target.startswith("/zh-hans/"), (name, target)
            continue
        assert zh.headers["Content-Language"] == ZH, name
        assert en.headers["Content-Language"] == "en", name
        if not zh.headers["Content-Type"].startswith("text/html"):
            continue
        html = zh.content.decode()
        assert '<html lang="zh-hans">' in html and footer_zh in html and FOOTER not in html, name
        assert FOOTER in en.content.decode(), name
        for link in _links(html):
            if _language_page(link):
                assert link.startswith("/zh-hans/"), (name, link)
            assert not link.startswith(("/zh-hans/user/me", "/zh-hans/seckill/", "/zh-hans/api/")), (name, link)
        checked += 1
    assert checked >= 12


def test_a_chinese_pages_forms_lead_to_chinese_pages(shopper_world):
    client, order, _values = shopper_world
    page = client.get(f"/zh-hans/orders/{order.order_no}").content.decode()
    assert f'action="/zh-hans/orders/{order.order_no}/pay"' in page
    assert f'href="/zh-hans/user/addresses?next=/zh-hans/orders/{order.order_no}"' in page
    # Cancelling: asked, then done, back on the Chinese order page.
    asked = client.get(f"/zh-hans/orders/{order.order_no}/cancel")
    assert f'action="/zh-hans/orders/{order.order_no}/cancel"' in asked.content.decode()
    done = client.post(f"/zh-hans/orders/{order.order_no}/cancel", {"confirm": "yes"})
    assert done.status_code == 302 and done["Location"] == f"/zh-hans/orders/{order.order_no}"
    # The notification settings save and come back in Chinese.
    saved = client.post("/zh-hans/user/notifications", {"language": ZH})
    assert saved.status_code == 302 and saved["Location"] == "/zh-hans/user/notifications"


def test_the_cashier_sends_the_shopper_back_to_the_page_in_their_language():
    me = make_user()
    make_address(me)
    client = Client()
    client.force_login(me)
    order = buy(sale=make_sale(stock=2), user=me)
    cashier = client.post(f"/zh-hans/orders/{order.order_no}/pay", {"method": "alipay"})
    alipay_cashier_open(cashier["Location"])
    payment = Payment.objects.get(order=order)
    back = urllib.parse.urlsplit(alipay_buyer_pays(payment.trade_no)["return_url"])
    assert back.path == f"/zh-hans/orders/{order.order_no}/paying"
    page = client.get(f"{back.path}?{back.query}")
    assert page.status_code == 200 and page.headers["Content-Language"] == ZH


def test_logging_in_from_a_chinese_page_comes_back_to_it():
    shopper, password = make_user(password="secret-123"), "secret-123"
    client = Client()
    sent = client.get("/zh-hans/orders/")
    assert sent.status_code == 302
    assert sent["Location"] == "/zh-hans/user/index?next=/zh-hans/orders/"
    login = client.get(sent["Location"])
    assert login.headers["Content-Language"] == ZH and 'action="/zh-hans/user/login"' in login.content.decode()
    back = client.post(
        "/zh-hans/user/login", {"mobile": shopper.mobile, "password": password, "next": "/zh-hans/orders/"}
    )
    assert back.status_code == 302 and back["Location"] == "/zh-hans/orders/"
    out = client.post("/zh-hans/user/logout")
    assert out.status_code == 302 and out["Location"] == "/zh-hans/user/index"


def test_a_chinese_browser_opening_a_shoppers_page_unprefixed_is_sent_to_the_chinese_one(shopper_world):
    client, order, _values = shopper_world
    for path in (
        f"/orders/{order.order_no}",
        "/orders/?tab=unpaid",
        "/user/notifications",
        "/user/index?next=/orders/",
    ):
        answer = client.get(path, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9,en;q=0.8", **BROWSER)
        assert answer.status_code == 302 and answer["Location"] == f"/zh-hans{path}", path
        assert "private" in answer["Cache-Control"]
        assert {"accept-language", "cookie"} <= {v.strip().lower() for v in answer["Vary"].split(",")}
    # The language chosen with the switch wins over the browser's.
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    stays = client.get(f"/orders/{order.order_no}", HTTP_ACCEPT_LANGUAGE="zh-CN", **BROWSER)
    assert stays.status_code == 200 and stays.headers["Content-Language"] == "en"
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = ZH
    chosen = client.get(f"/orders/{order.order_no}", HTTP_ACCEPT_LANGUAGE="en", **BROWSER)
    assert chosen["Location"] == f"/zh-hans/orders/{order.order_no}"


def test_scripts_forms_and_addresses_without_a_prefix_are_answered_where_they_are(shopper_world):
    client, order, _values = shopper_world
    chinese = {"HTTP_ACCEPT_LANGUAGE": "zh-CN"}
    polled = client.get(f"/orders/{order.order_no}", HTTP_ACCEPT="application/json", **chinese)
    assert polled.status_code == 200 and polled.json()["data"]["orderNo"] == order.order_no
    assert client.get("/user/me", **BROWSER, **chinese).status_code == 200
    assert client.get("/zh-hans/user/me").status_code == 404  # data keeps one address
    assert client.get("/admin/", **BROWSER, **chinese).status_code == 302  # to the admin's login
    assert "zh-hans" not in client.get("/admin/", **BROWSER, **chinese)["Location"]
    # Everybody's page: in the URL's language, never sent anywhere by Accept-Language.
    shared = Client().get("/goods/goodsList", **BROWSER, **chinese)
    assert shared.status_code == 200 and shared.headers["Content-Language"] == "en"


def test_the_switch_leads_to_the_same_page_in_the_other_language(shopper_world):
    client, _order, values = shopper_world
    for name, params in _language_routes():
        english, chinese = (_reversed(name, params, values, language) for language in ("en", ZH))
        to_zh = client.get("/language", {"language": ZH, "next": f"{english}?x=1"})
        assert to_zh["Location"] == f"{chinese}?x=1", name
        to_en = client.get("/language", {"language": "en", "next": chinese})
        assert to_en["Location"] == english, name
