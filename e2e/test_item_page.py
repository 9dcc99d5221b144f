"""The item page on a phone (390x844) and at a desk (1280), in English and Chinese, with the
keyboard: the buy bar pinned to a phone's screen, nothing moving while the page refreshes, the
focus on the outcome after a buy, the spoken captcha in place of the picture, sold out in plain
words, the start as a day and a time, and "My orders" only for a shopper; axe-core finds
nothing on the item page in its states, nor on the merchant's sale form. Live server, real
PostgreSQL and Redis (and a Celery worker where an order is written)."""

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.utils import timezone

from sales.services import draw_seed_ensure, sale_open
from testutils.browser import VIEWPORTS, WCAG_AA, admin_log_in, captcha_answer, logged_in, poll, shoot
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

LANGUAGES = ("en", "zh-hans")


def open_tab(watched, name: str, *, user=None, language: str = "en", viewport: str = "phone"):
    tab = watched(name)
    tab.page.set_viewport_size(VIEWPORTS[viewport])
    tab.context.add_cookies([{"name": "django_language", "value": language, "url": tab.base_url}])
    if user is not None:
        logged_in(tab, user)
    return tab


def box(page, selector: str) -> dict:
    return page.evaluate(
        f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom}; })()"
    )


def bar_ticking(page) -> None:
    """The bar's clock has been filled by the page's script."""
    poll(page, "/\\d\\d/.test(document.getElementById('bar-clock').innerText)")


def draw_sale(**fields):
    sale = make_sale(warm=False, admission="draw", draw_window_s=30, **fields)
    draw_seed_ensure(sale=sale)
    sale_open(sale_id=sale.pk)
    return sale


def test_on_a_phone_the_buy_bar_keeps_the_price_the_countdown_and_the_button_on_screen(watched):
    on_sale = make_sale(goods=make_goods(name="Bar Phone"), seckill_price="9.90", stock=5)
    upcoming_draw = draw_sale(goods=make_goods(name="Draw Kettle"), seckill_price="19.90", starts_in=3 * 3600)
    shopper = make_user()
    words = {
        "en": ("Buy now", "Ends in", "Log in to buy", "Entries open in"),
        "zh-hans": ("立即秒杀", "距结束", "登录后购买", "距报名开始"),
    }
    for language in LANGUAGES:
        buy_now, ends_in, log_in_to_buy, entries_open_in = words[language]
        tab = open_tab(watched, f"bar-{language}", user=shopper, language=language)
        page = tab.go(f"/goods/detail/{on_sale.pk}")
        page.wait_for_selector("#buy:not([disabled])")
        bar_ticking(page)
        bar = page.inner_text(".buy-bar")
        assert "¥9.90" in bar and ends_in in bar and buy_now in bar, bar
        digits = page.locator("#bar-clock .clock-block").all_inner_texts()
        assert len(digits) == 3 and all(re.fullmatch(r"\d\d", d) for d in digits), digits
        button = box(page, "#buy")
        assert 0 <= button["top"] and button["bottom"] <= 844, button
        # The end of the page scrolls clear of the bar: nothing is left under it.
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_timeout(100)
        assert box(page, ".footer")["bottom"] <= box(page, ".buy-bar")["top"] + 1
        assert box(page, "#buy")["bottom"] <= 844
        tab.shoot("on-sale")

        # A draw sale's explanation used to push the button to ~1100 px; a visitor's button is "Log in to buy".
        tab.forget_visitor()
        tab.context.add_cookies([{"name": "django_language", "value": language, "url": tab.base_url}])
        page = tab.go(f"/goods/detail/{upcoming_draw.pk}")
        bar_ticking(page)
        tab.shoot("draw-visitor")
        page.set_viewport_size(VIEWPORTS["phone"])
        button = box(page, "#login-to-buy")
        assert 0 <= button["top"] and button["bottom"] <= 844, button
        assert entries_open_in in page.inner_text(".buy-bar") and log_in_to_buy in page.inner_text(".buy-bar")

        # At a desk the layout stays as it was: the button in the page, no bar, no second price.
        logged_in(tab, shopper)
        page.set_viewport_size(VIEWPORTS["desktop"])
        page = tab.go(f"/goods/detail/{on_sale.pk}")
        page.wait_for_selector("#buy:not([disabled])")
        assert page.evaluate("getComputedStyle(document.querySelector('.buy-bar')).position") == "static"
        assert not page.is_visible(".bar-info")
        assert page.evaluate("getComputedStyle(document.body).paddingBottom") == "0px"
        assert box(page, "#buy")["top"] > box(page, "#stock-box")["bottom"]  # where it always was


def test_the_left_to_pay_line_and_pay_now_hold_still_while_the_page_refreshes(watched):
    """The page asks the server every 5 s; the panel it got back always differed by the
    server's clock, so it was put in again, its "left to pay" line empty for a second, and
    "Pay now" jumped 24 px up and back."""
    sale, shopper = make_sale(goods=make_goods(name="Still Lamp"), stock=5), make_user()
    buy(sale=sale, user=shopper)
    for language in LANGUAGES:
        for viewport in ("desktop", "phone"):
            tab = open_tab(watched, f"still-{language}-{viewport}", user=shopper, language=language, viewport=viewport)
            page = tab.go(f"/goods/detail/{sale.pk}")
            page.wait_for_selector("#pay-now")
            poll(page, "document.querySelector('.pay-left').textContent !== ''")
            page.evaluate(
                """(() => {
                  const sale = document.getElementById('sale'), top = () => {
                    const b = document.getElementById('pay-now'); return b ? b.getBoundingClientRect().top : null; };
                  window.__first = top(); window.__moves = []; window.__blank = 0;
                  window.__stockBox = document.getElementById('stock-box');
                  window.__line = document.querySelector('.pay-left');
                  new MutationObserver(() => {
                    const line = document.querySelector('.pay-left');
                    if (!line || line.textContent === '') window.__blank += 1;
                    if (top() !== window.__first) window.__moves.push(top());
                  }).observe(sale, {subtree: true, childList: true, characterData: true});
                })()"""
            )
            page.wait_for_timeout(10_500)  # two refreshes
            assert page.evaluate("window.__blank") == 0
            assert page.evaluate("window.__moves") == []
            # Updated in place: the same elements, only their text changed.
            assert page.evaluate("document.querySelector('.pay-left') === window.__line")
            assert page.evaluate("document.getElementById('stock-box') === window.__stockBox")
            tab.shoot("ordered")


def keyboard_buy(page, sale, user) -> None:
    """Buy with the keyboard alone: Enter on "Buy now" opens the captcha with the focus in
    its answer; type it, Enter."""
    page.focus("#buy")
    page.keyboard.press("Enter")
    poll(page, "document.getElementById('captcha-img').naturalWidth > 0")
    assert page.evaluate("document.activeElement.id") == "captcha-answer"
    page.keyboard.type(captcha_answer(sale, user))
    page.keyboard.press("Enter")


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_after_a_buy_the_focus_is_on_the_outcome_and_pay_now_is_the_next_tab(watched, celery_worker, viewport):
    sale, shopper = make_sale(goods=make_goods(name="Focus Phone"), stock=5), make_user()
    tab = open_tab(watched, f"focus-{viewport}", user=shopper, viewport=viewport)
    page = tab.go(f"/goods/detail/{sale.pk}")
    page.wait_for_selector("#buy:not([disabled])")
    keyboard_buy(page, sale, shopper)
    page.wait_for_selector("#pay-now", timeout=20_000)
    poll(page, "/order is placed/.test(document.getElementById('result').textContent)")
    assert page.evaluate("document.activeElement.id") == "result"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "pay-now"
    tab.shoot("placed")


def test_a_refused_buy_puts_the_focus_on_the_refusal(watched):
    sale, shopper = make_sale(goods=make_goods(name="Twice Phone"), stock=5), make_user()
    tab = open_tab(watched, "refused", user=shopper, language="zh-hans", viewport="desktop")
    page = tab.go(f"/goods/detail/{sale.pk}")
    page.wait_for_selector("#buy:not([disabled])")
    page.route("**/seckill/shopperState*", lambda route: route.abort())  # this tab does not hear of the order
    buy(sale=sale, user=shopper)  # bought in another tab
    keyboard_buy(page, sale, shopper)
    page.unroute("**/seckill/shopperState*")
    poll(page, "/你已经抢到这件商品/.test(document.getElementById('result').textContent)", seconds=20)
    assert page.evaluate("document.activeElement.id") == "result"
    page.wait_for_selector("#pay-now")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "pay-now"
    tab.console_errors[:] = [e for e in tab.console_errors if "ERR_FAILED" not in e]


def test_the_spoken_captcha_replaces_the_picture_and_switching_back_restores_it(watched):
    sale = make_sale(goods=make_goods(name="Loud Phone"))
    labels = {"en": ("Listen instead", "Show the picture instead"), "zh-hans": ("改为听语音", "改为看图片")}
    for language in LANGUAGES:
        listen, picture = labels[language]
        shopper = make_user()
        viewport = "phone" if language == "en" else "desktop"
        tab = open_tab(watched, f"audio-{language}", user=shopper, language=language, viewport=viewport)
        page = tab.go(f"/goods/detail/{sale.pk}")
        page.click("#buy")
        poll(page, "document.getElementById('captcha-img').naturalWidth > 0")
        assert page.is_visible("#captcha-img") and page.is_visible("#captcha-help")
        assert not page.is_visible("#captcha-audio-help") and page.inner_text("#captcha-audio") == listen
        first_picture = page.get_attribute("#captcha-img", "src")

        page.click("#captcha-audio")
        page.wait_for_selector("#captcha-player:not([hidden])")
        assert not page.is_visible("#captcha-img") and not page.is_visible("#captcha-help")
        assert page.is_visible("#captcha-audio-help") and page.inner_text("#captcha-audio") == picture
        assert page.get_attribute("#captcha-answer", "aria-describedby") == "captcha-audio-help"
        tab.shoot("audio")

        page.click("#captcha-audio")
        poll(page, f"document.getElementById('captcha-img').src !== {first_picture!r}")
        poll(page, "document.getElementById('captcha-img').naturalWidth > 0")
        assert page.is_visible("#captcha-img") and page.is_visible("#captcha-help")
        assert not page.is_visible("#captcha-player") and not page.is_visible("#captcha-audio-help")
        assert page.inner_text("#captcha-audio") == listen
        page.fill("#captcha-answer", captcha_answer(sale, shopper))  # the new picture's answer buys
        page.click("#captcha-form button[type=submit]")
        poll(page, "/queue|order is placed|排队|订单/.test(document.getElementById('result').textContent)", seconds=20)


def test_sold_out_says_plainly_that_units_may_come_back(watched):
    sale = make_sale(goods=make_goods(name="Gone Kettle"), stock=0)
    shopper = make_user()
    words = {"en": ("units may come back", "not paid in time"), "zh-hans": ("还可能有货回来", "未按时付款")}
    for language in LANGUAGES:
        for user in (shopper, None):
            viewport = "phone" if user is not None else "desktop"
            name = f"sold-out-{language}-{user and 'shopper'}"
            tab = open_tab(watched, name, user=user, language=language, viewport=viewport)
            page = tab.go(f"/goods/detail/{sale.pk}")
            page.wait_for_selector("#sold-out-note")
            note = page.inner_text("#sold-out-note")
            assert all(word in note for word in words[language]), note
            if user is not None:
                page.wait_for_selector("#buy[disabled]")
                assert box(page, "#buy")["bottom"] <= 844
            tab.shoot("sold-out")


def test_the_start_is_shown_as_a_day_and_a_time_in_the_shops_zone(watched):
    sale = make_sale(goods=make_goods(name="Later Tea"), starts_in=2 * 86400)
    start = timezone.localtime(sale.start_at)
    expected = {
        "en": f"Starts {start.day} {start.strftime('%b')} {start.year}, {start:%H:%M} UTC+08:00",
        "zh-hans": f"{start.year}年{start.month}月{start.day}日 {start:%H:%M} 开始 UTC+08:00",
    }
    for language in LANGUAGES:
        for viewport in ("desktop", "phone"):
            tab = open_tab(watched, f"starts-{language}-{viewport}", language=language, viewport=viewport)
            page = tab.go(f"/goods/detail/{sale.pk}")
            page.wait_for_timeout(1100)  # the countdown has ticked; the day and time stay
            assert page.inner_text("#starts-at") == expected[language]
            assert re.search(r"\d\d:\d\d$", page.inner_text("#countdown")), page.inner_text("#countdown")
            tab.shoot("before-sale")


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_my_orders_and_my_addresses_are_only_for_a_logged_in_shopper(watched, viewport):
    sale, shopper = make_sale(), make_user()
    tab = open_tab(watched, "nav", viewport=viewport)
    for path in ("/goods/goodsList", f"/goods/detail/{sale.pk}", "/user/index"):
        page = tab.go(path)
        page.wait_for_selector("#greeting a")  # nav.js has heard who this is: nobody
        assert not page.is_visible("text=My orders") and not page.is_visible("text=My addresses"), path
    logged_in(tab, shopper)
    for path in ("/goods/goodsList", f"/goods/detail/{sale.pk}", "/orders/"):
        page = tab.go(path)
        page.wait_for_selector("#greeting form")
        assert page.is_visible("text=My orders") and page.is_visible("text=My addresses"), path


def test_the_item_page_in_each_state_and_the_sale_form_have_no_axe_violations(watched):
    on_sale = make_sale(goods=make_goods(name="Axe Phone"), stock=5)
    upcoming = draw_sale(goods=make_goods(name="Axe Tea"), starts_in=86400)
    sold_out = make_sale(goods=make_goods(name="Axe Kettle"), stock=0)
    buyer, newcomer = make_user(), make_user()
    buy(sale=on_sale, user=buyer)

    def captcha(page):
        page.click("#buy")
        poll(page, "document.getElementById('captcha-img').naturalWidth > 0")

    def spoken(page):
        captcha(page)
        page.click("#captcha-audio")
        page.wait_for_selector("#captcha-player:not([hidden])")

    pages = [
        (None, upcoming, None),
        (None, on_sale, None),
        (newcomer, upcoming, None),
        (newcomer, on_sale, captcha),
        (newcomer, on_sale, spoken),
        (newcomer, sold_out, None),
        (buyer, on_sale, None),
    ]
    axe, failures = Axe(), {}
    tab = watched("axe-item")
    for language in LANGUAGES:
        for viewport in ("phone", "desktop"):
            tab.page.set_viewport_size(VIEWPORTS[viewport])
            for user, sale, action in pages:
                tab.forget_visitor()
                tab.context.add_cookies([{"name": "django_language", "value": language, "url": tab.base_url}])
                if user is not None:
                    logged_in(tab, user)
                page = tab.go(f"/goods/detail/{sale.pk}")
                page.wait_for_load_state("networkidle")
                if action:
                    action(page)
                results = axe.run(page, options=WCAG_AA)
                if results.violations_count:
                    failures[f"{language} {viewport} {sale} {user and user.pk} {action}"] = results.generate_report()

    merchant = make_merchant()
    mine = make_sale(goods=make_goods(name="Axe Lamp", owner=merchant))
    for language in LANGUAGES:
        admin = watched(f"axe-admin-{language}")
        admin_log_in(admin, merchant.mobile, language)
        for path in ("/admin/sales/sale/add/", f"/admin/sales/sale/{mine.pk}/change/"):
            page = admin.go(path)
            results = axe.run(page, options=WCAG_AA)
            if results.violations_count:
                failures[f"{language} {path}"] = results.generate_report()
        shoot(admin, "sale-form")
        # axe-core's run puts a <style> in the admin's page, which its CSP refuses (none before the run).
        admin.csp_violations[:] = [v for v in admin.csp_violations if not v.startswith("style-src-elem inline")]
        admin.console_errors[:] = [e for e in admin.console_errors if "Applying inline style" not in e]
    assert not failures, "\n\n".join(f"{where}\n{report}" for where, report in failures.items())


def test_before_the_opening_the_page_asks_the_shared_state_every_5_s_and_the_shoppers_once(watched):
    """The item page's refresh is the shared /seckill/saleState (an edge answers it); the
    shopper's own /seckill/shopperState is asked as the page loads and not on a timer, and it
    is the one answer the nav, the panel and the reminder take as the page loads."""
    sale, shopper = make_sale(goods=make_goods(name="Quiet Phone"), starts_in=3600), make_user()
    tab = open_tab(watched, "requests", user=shopper, viewport="desktop")
    asked: list[str] = []
    tab.page.on("request", lambda request: asked.append(request.url))
    page = tab.go(f"/goods/detail/{sale.pk}")
    page.wait_for_selector("#buy[disabled]")
    bar_ticking(page)
    page.wait_for_timeout(15_500)
    shoppers = [url for url in asked if "/seckill/shopperState" in url]
    sales = [url for url in asked if url.endswith(f"/seckill/saleState/{sale.pk}")]
    assert len(shoppers) == 1, shoppers
    own = [url for url in asked if re.search(r"/user/me\b|/seckill/shopperState|/reminders/", url)]
    assert own == shoppers, own  # one answer for the nav, the panel and the reminder
    assert page.is_visible("#remind-button") and page.get_attribute("#remind-button", "aria-pressed") == "false"
    assert page.locator("#greeting").inner_text().strip()  # the nav greets from that answer
    assert 4 <= len(sales) <= 5, sales  # as the page loads, then every 5 s
    assert not [url for url in asked if "/seckill/state" in url]
    assert "disabled" in (page.get_attribute("#buy", "disabled") or "disabled")
