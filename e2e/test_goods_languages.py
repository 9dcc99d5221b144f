"""Goods shown in each language, in Chromium: the merchant writes the goods' name, title and
description in English and Chinese on the admin's form, and a shopper reads them in their own
language on the list, the item page and their order, on a phone and a desktop, with no WCAG 2.1
AA violation axe-core can find."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from goods.models import Goods
from testutils.browser import VIEWPORTS, WCAG_AA, as_merchant, shoot
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user, session_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TEXTS = {
    "name_en": "Clay Teapot",
    "name_zh_hans": "紫砂茶壶",
    "title_en": "Yixing clay, 300 ml",
    "title_zh_hans": "宜兴紫砂，300 毫升",
    "detail_en": "Hand made in Yixing.",
    "detail_zh_hans": "宜兴手工制作。",
}
# What each language's pages show (name, title, description), and the other language's name.
SHOWN = {
    "en": ("Clay Teapot", "Yixing clay, 300 ml", "Hand made in Yixing.", "紫砂茶壶"),
    "zh-hans": ("紫砂茶壶", "宜兴紫砂，300 毫升", "宜兴手工制作。", "Clay Teapot"),
}
PREFIX = {"en": "", "zh-hans": "/zh-hans"}
ORDER = {"en": "Order: Clay Teapot", "zh-hans": "订单：紫砂茶壶"}


def axe_violations(page) -> str | None:
    results = Axe().run(page, options=WCAG_AA)
    return results.generate_report() if results.violations_count else None


def _merchant_writes_both_languages(watched, merchant, language: str) -> Goods:
    desk = as_merchant(watched, merchant, language)
    page = desk.go("/admin/goods/goods/add/")
    for field, text in TEXTS.items():
        page.fill(f"#id_{field}", text)
    page.fill("#id_price", "368.00")
    page.fill("#id_stock", "30")
    assert axe_violations(page) is None
    shoot(desk, "goods-form")
    page.click("input[name=_save]")
    page.wait_for_url("**/admin/goods/goods/")
    return Goods.objects.get(owner=merchant)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_goods_shown_in_each_language(watched, language):
    goods = _merchant_writes_both_languages(watched, make_merchant(), language)
    sale = make_sale(goods=goods, stock=5)
    shopper = make_user()
    order = buy(sale=sale, user=shopper)
    name, title, detail, other = SHOWN[language]
    tab = watched(f"goods-{language}")
    tab.context.add_cookies(
        [
            {"name": "django_language", "value": language, "url": tab.base_url},
            {"name": "sessionid", "value": session_for(shopper), "url": tab.base_url},
        ]
    )
    failures = {}
    for viewport in ("phone", "desktop"):
        tab.page.set_viewport_size(VIEWPORTS[viewport])
        for label, path, words in (
            ("list", f"{PREFIX[language]}/goods/goodsList", (name,)),  # the title is hidden on a phone
            ("item", f"{PREFIX[language]}/goods/detail/{sale.pk}", (name, title, detail)),
            ("order", f"/orders/{order.order_no}", (ORDER[language],)),
        ):
            page = tab.go(path)
            page.wait_for_load_state("networkidle")
            text = page.locator("main").inner_text()
            for word in words:
                assert word in text, (viewport, label, word)
            assert other not in text, (viewport, label)
            failures[f"{viewport} {label}"] = axe_violations(page)
            if viewport == "desktop":
                tab.shoot(label)
    assert tab.page.title().startswith(ORDER[language])
    assert not any(failures.values()), failures
