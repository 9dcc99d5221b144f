"""The page in the visitor's language, in a real browser (Chromium, desktop and phone, axe-core):
a Chinese browser opening an English shared link is offered the Chinese page, and one opening
a shopper's own page without a prefix is sent to the Chinese page; an English browser on a
Chinese link is offered the English one. Once the visitor chose (the offer, its "no" or the
switch), nothing is offered again."""

import re

import pytest
from axe_playwright_python.sync_playwright import Axe

from testutils.browser import VIEWPORTS, WCAG_AA, logged_in
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
CHINESE = {"locale": "zh-CN"}  # navigator.languages and Accept-Language alike
OFFER = "[data-language-offer]:not([hidden])"
VIEWPORT = pytest.mark.parametrize("width", ["desktop", "phone"])


def _at(tab, width: str):
    tab.page.set_viewport_size(VIEWPORTS[width])
    return tab


def _shot(tab, label: str, width: str) -> None:
    """Both widths' screenshots, once; then back to the test's width."""
    if width == "desktop":
        tab.shoot(label)
    tab.page.set_viewport_size(VIEWPORTS[width])


def _no_violations(page) -> None:
    results = Axe().run(page, options=WCAG_AA)
    assert not results.violations_count, results.generate_report()


@VIEWPORT
def test_a_chinese_browser_is_offered_the_chinese_page_and_takes_it(watched, width):
    sale = make_sale(goods=make_goods(name="Green Tea"))
    tab = watched(f"offer-{width}", **CHINESE)
    page = _at(tab, width).go(f"/goods/detail/{sale.pk}")
    offer = page.locator(OFFER)
    offer.wait_for()
    assert offer.get_attribute("lang") == "zh-hans"
    assert offer.inner_text().startswith("本页有简体中文版。")
    assert page.locator("html").get_attribute("lang") == "en"  # the page stays as its address says
    _no_violations(page)
    _shot(tab, "offered", width)
    page.click("text=查看简体中文版")
    page.wait_for_url(re.compile(rf".*/zh-hans/goods/detail/{sale.pk}$"))
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert page.locator(OFFER).count() == 0  # the page is in the language the browser wants
    # The choice holds: the English link now leads to the Chinese page.
    page = tab.go("/goods/goodsList")
    page.wait_for_url(re.compile(r".*/zh-hans/goods/goodsList$"))


@VIEWPORT
def test_a_visitor_who_says_no_is_not_asked_again(watched, width):
    sale = make_sale(goods=make_goods(name="Oolong"))
    tab = watched(f"offer-no-{width}", **CHINESE)
    page = _at(tab, width).go(f"/goods/detail/{sale.pk}")
    page.locator(OFFER).wait_for()
    page.keyboard.press("Tab")  # the skip link, then the offer's link, then its "no"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "查看简体中文版"
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert page.locator(OFFER).count() == 0
    assert page.evaluate("document.activeElement.id") == "main"
    page.reload()
    page.wait_for_load_state("networkidle")
    assert page.locator(OFFER).count() == 0 and page.locator("html").get_attribute("lang") == "en"


@VIEWPORT
def test_an_english_browser_on_a_chinese_link_is_offered_the_english_page(watched, width):
    tab = watched(f"offer-en-{width}", locale="en-GB")
    page = _at(tab, width).go("/zh-hans/goods/goodsList")
    offer = page.locator(OFFER)
    offer.wait_for()
    assert offer.get_attribute("lang") == "en" and "This page is also in English." in offer.inner_text()
    _no_violations(page)
    _shot(tab, "offered", width)
    page.click("text=View it in English")
    page.wait_for_url(re.compile(r".*/goods/goodsList$"))
    assert "/zh-hans/" not in page.url and page.locator("html").get_attribute("lang") == "en"


@VIEWPORT
def test_a_chinese_browser_opening_a_shoppers_page_lands_on_the_chinese_one(watched, width):
    tab = watched(f"sent-{width}", **CHINESE)
    logged_in(tab, make_user())
    page = _at(tab, width).go("/orders/")
    page.wait_for_url(re.compile(r".*/zh-hans/orders/$"))
    assert page.locator("html").get_attribute("lang") == "zh-hans" and page.locator(OFFER).count() == 0
    page.wait_for_load_state("networkidle")
    # The header's links stay in Chinese.
    assert page.get_attribute("#nav-mine a >> nth=1", "href") == "/zh-hans/user/addresses"
    assert page.get_attribute("#nav a[href$='notifications']", "href") == "/zh-hans/user/notifications"
    _no_violations(page)
    _shot(tab, "sent", width)
    # The switch leads to the same page in English, and the choice holds over the browser's.
    page.select_option("#language-select", "en")
    page.click(".language button[type=submit]")
    page.wait_for_url(re.compile(r".*/orders/$"))
    assert "/zh-hans/" not in page.url and page.locator("html").get_attribute("lang") == "en"
    page = tab.go("/user/notifications")
    assert page.url.endswith("/user/notifications") and "/zh-hans/" not in page.url
    page.wait_for_load_state("networkidle")
    assert page.locator(OFFER).count() == 0  # chosen with the switch: nothing offered
