""" "Remind me" on the item page and the notification settings page in Chromium, on a phone and
a desktop, in English and Chinese: the button turns the shopper's reminder on and off, a
logged-out visitor is sent to log in, a sold-out sale offers it, and axe-core finds no WCAG
2.1 AA violation on either page."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from sales import sale_state
from sales.models import SaleReminder
from testutils.browser import VIEWPORTS, poll
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, session_for
from users.models import NoticeKind, NoticeSettings

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
WORDS = {
    "en": {
        "off": "Remind me",
        "on": "Reminder on: turn it off",
        "said": "Reminder on",
        "saved": "saved",
        "back": "Units may come back",
        "said back": "Reminder on: we will text you when a unit comes back.",
    },
    "zh-hans": {
        "off": "提醒我",
        "on": "已开启提醒：点此关闭",
        "said": "提醒已开启",
        "saved": "已保存",
        "back": "商品可能会退回",
        "said back": "提醒已开启：有商品退回时我们会发短信给你。",
    },
}


def visit_as(tab, user, language: str) -> None:
    tab.forget_visitor()
    cookies = [{"name": "django_language", "value": language, "url": tab.base_url}]
    if user is not None:
        cookies.append({"name": "sessionid", "value": session_for(user), "url": tab.base_url})
    tab.context.add_cookies(cookies)


def axe_violations(page) -> str | None:
    results = Axe().run(page, options=WCAG_AA)
    return results.generate_report() if results.violations_count else None


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_remind_me_turns_on_and_off_on_a_phone_and_a_desktop(watched, language):
    sale = make_sale(goods=make_goods(name="Reminder Kettle"), starts_in=3600)
    sold_out = make_sale(goods=make_goods(name="Gone Lamp"), stock=0)
    shopper = make_user(nickname="Ann")
    words = WORDS[language]
    tab = watched(f"remind-{language}")
    failures = {}
    for viewport in ("phone", "desktop"):
        tab.page.set_viewport_size(VIEWPORTS[viewport])
        visit_as(tab, shopper, language)
        page = tab.go(f"/goods/detail/{sale.pk}")
        button = page.locator("#remind-button")
        button.wait_for(state="visible")
        assert page.locator("#remind-login").is_hidden()
        assert button.inner_text() == words["off"] and button.get_attribute("aria-pressed") == "false"
        button.click()
        poll(page, "document.getElementById('remind-button').getAttribute('aria-pressed') === 'true'")
        assert button.inner_text() == words["on"] and words["said"] in page.locator("#remind-status").inner_text()
        assert SaleReminder.objects.filter(user=shopper, sale=sale).exists()
        page.reload()
        poll(page, "document.getElementById('remind-button').getAttribute('aria-pressed') === 'true'")
        failures[f"{viewport} on"] = axe_violations(page)
        if viewport == "desktop":
            tab.shoot("item-reminder-on")
        button.click()
        poll(page, "document.getElementById('remind-button').getAttribute('aria-pressed') === 'false'")
        assert not SaleReminder.objects.filter(user=shopper, sale=sale).exists()
        calendar = page.locator("#remind-calendar")
        assert calendar.get_attribute("href").endswith(f"/goods/calendar/{sale.pk}.ics")

        page = tab.go(f"/goods/detail/{sold_out.pk}")
        page.locator("#remind-button").wait_for(state="visible")
        assert page.locator("#remind").is_visible()
        failures[f"{viewport} sold out"] = axe_violations(page)
        if viewport == "desktop":
            tab.shoot("sold-out-reminder")

        visit_as(tab, None, language)
        page = tab.go(f"/goods/detail/{sale.pk}")
        page.wait_for_load_state("networkidle")
        login = page.locator("#remind-login")
        assert login.is_visible() and page.locator("#remind-button").is_hidden()
        assert "/user/index?next=" in login.get_attribute("href")
        failures[f"{viewport} logged out"] = axe_violations(page)
    failures = {where: report for where, report in failures.items() if report}
    assert not failures, "\n\n".join(f"{where}\n{report}" for where, report in failures.items())


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_at_the_opening_the_box_goes_and_comes_back_for_a_unit_when_sold_out(watched, language):
    """The page is not loaded again at the opening: with units on sale the box goes (no "buy
    one instead" to press), sold out it asks about a unit coming back, without the calendar."""
    sale = make_sale(goods=make_goods(name="Opening Clock"), starts_in=6, stock=1)
    shopper = make_user(nickname="Ben")
    words = WORDS[language]
    tab = watched(f"remind-opening-{language}")
    visit_as(tab, shopper, language)
    page = tab.go(f"/goods/detail/{sale.pk}")
    button = page.locator("#remind-button")
    button.wait_for(state="visible")
    assert page.locator("#remind-calendar").is_visible()
    button.click()
    poll(page, "document.getElementById('remind-button').getAttribute('aria-pressed') === 'true'")
    poll(page, "document.getElementById('remind').hidden", seconds=15)  # open, with a unit to buy
    assert sale_state.stock_take(sale_id=sale.pk, count=1).taken  # someone bought it
    poll(page, "!document.getElementById('remind').hidden", seconds=15)
    assert page.inner_text("#remind-title") == words["back"]
    assert page.locator("#remind-calendar").is_hidden()
    button.wait_for(state="visible")
    assert button.get_attribute("aria-pressed") == "false"  # the start's reminder is spent
    button.click()
    poll(page, "document.getElementById('remind-button').getAttribute('aria-pressed') === 'true'")
    assert page.inner_text("#remind-status") == words["said back"]
    tab.shoot("remind-sold-out")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_notification_settings_page_saves_the_shoppers_choice(watched, language):
    shopper = make_user(nickname="Ann")
    tab = watched(f"notifications-{language}")
    visit_as(tab, shopper, language)
    page = tab.go("/goods/goodsList")
    link = page.locator("#nav a[href$='/user/notifications']")  # under the page's language prefix
    link.wait_for(state="visible")
    link.click()
    page.wait_for_url("**/user/notifications")
    boxes = page.locator("input[type=checkbox]")
    kinds = len(NoticeKind)
    assert boxes.count() == kinds and all(boxes.nth(n).is_checked() for n in range(kinds))  # one per kind
    assert axe_violations(page) is None
    tab.shoot("settings")
    page.locator("#id_draw_results").uncheck()
    page.locator("main button[type=submit]").click()
    page.wait_for_load_state("networkidle")
    assert WORDS[language]["saved"] in page.locator(".messages").first.inner_text()
    assert not page.locator("#id_draw_results").is_checked() and page.locator("#id_sale_reminders").is_checked()
    chosen = NoticeSettings.objects.get(user=shopper)
    assert (chosen.sale_reminders, chosen.draw_results, chosen.payment_reminders) == (True, False, True)
