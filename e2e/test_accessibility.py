"""Issue 24, item 11: WCAG 2.1 AA for shoppers, measured in the browser with axe-core
(axe-playwright-python bundles axe-core 4.12.1): every shopper page, in each state the
item page shows, in English and Chinese, has no violation of the WCAG 2.0/2.1 A and AA
rules, colour contrast of text and controls included. Also: the countdown is not read out
every second, and the language menu does nothing until its button is pressed."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from testutils.browser import WCAG_AA, poll
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, session_for
from testutils.shoppers import reserve_directly

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_every_shopper_page_meets_wcag_aa_contrast_included(watched):
    on_sale = make_sale(goods=make_goods(name="Contrast Phone"), stock=5)
    upcoming = make_sale(goods=make_goods(name="Later Tea"), starts_in=86400)
    sold_out = make_sale(goods=make_goods(name="Gone Kettle"), stock=0)
    ended = make_sale(goods=make_goods(name="Old Lamp"), starts_in=-7200, lasts=3600)
    buyer, payer, waiter, newcomer = (make_user(nickname="Ann") for _ in range(4))
    unpaid = buy(sale=on_sale, user=buyer)
    paid = pay(buy(sale=on_sale, user=payer))
    reserve_directly(waiter.pk, on_sale.pk)

    def open_captcha(page):
        page.click("#buy")
        poll(page, "document.getElementById('captcha-img').naturalWidth > 0")

    pages = [
        (None, "/goods/goodsList", None),
        (None, f"/goods/detail/{on_sale.pk}", None),
        (None, "/user/index", None),
        (None, "/user/register", None),
        (None, "/user/login/code", None),
        (None, "/goods/detail/999999", None),
        (newcomer, f"/goods/detail/{upcoming.pk}", None),
        (newcomer, f"/goods/detail/{on_sale.pk}", open_captcha),
        (newcomer, f"/goods/detail/{sold_out.pk}", None),
        (newcomer, f"/goods/detail/{ended.pk}", None),
        (waiter, f"/goods/detail/{on_sale.pk}", None),
        (buyer, f"/goods/detail/{on_sale.pk}", None),
        (payer, f"/goods/detail/{on_sale.pk}", None),
        (buyer, "/orders/", None),
        (buyer, f"/orders/{unpaid.order_no}", None),
        (buyer, f"/orders/{unpaid.order_no}/cancel", None),
        (payer, f"/orders/{paid.order_no}", None),
    ]
    axe = Axe()
    failures = {}
    tab = watched("axe")
    for language in ("en", "zh-hans"):
        for user, path, action in pages:
            cookies = [{"name": "django_language", "value": language, "url": tab.base_url}]
            if user is not None:
                cookies.append({"name": "sessionid", "value": session_for(user), "url": tab.base_url})
            tab.forget_visitor()
            tab.context.add_cookies(cookies)
            page = tab.go(path)
            page.wait_for_load_state("networkidle")
            if action:
                action(page)
            results = axe.run(page, options=WCAG_AA)
            if results.violations_count:
                failures[f"{language} {path} ({user and user.pk})"] = results.generate_report()
    tab.missing[:] = []
    tab.console_errors[:] = [e for e in tab.console_errors if "404" not in e]  # the 404 page's own status
    assert not failures, "\n\n".join(f"{where}\n{report}" for where, report in failures.items())


def test_the_countdown_is_not_read_out_every_second_and_the_language_menu_waits_for_its_button(watched):
    sale = make_sale(goods=make_goods(name="Quiet Clock"), starts_in=3600)
    tab = watched("a11y-behaviour")
    page = tab.go(f"/goods/detail/{sale.pk}")
    countdown = page.locator("#countdown")
    # A timer is never announced: no live region around the ticking text...
    assert countdown.get_attribute("role") == "timer" and countdown.get_attribute("aria-live") == "off"
    assert (
        page.evaluate("document.getElementById('countdown').closest('[aria-live=polite],[aria-live=assertive]')")
        is None
    )
    # ...and the polite region that is announced says nothing while it ticks.
    first = page.inner_text("#countdown")
    page.wait_for_timeout(2200)
    assert page.inner_text("#countdown") != first and page.inner_text("#announce") == ""

    url = page.url
    page.focus("#language-select")
    page.keyboard.press("ArrowDown")  # choosing with the keyboard goes nowhere by itself
    page.wait_for_timeout(500)
    assert page.url == url
    page.select_option("#language-select", "zh-hans")
    page.wait_for_timeout(500)
    assert page.url == url
    page.click(".language button[type=submit]")
    page.wait_for_selector("text=距开始")
    assert f"/goods/detail/{sale.pk}" in page.url
