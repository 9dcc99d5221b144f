"""The waiting room in Chromium (docs/waiting-room.md): a shopper opens the item page of a sale
whose room is on, is shown the way to the waiting page, sees their place and wait there, on a
phone and a desktop, in English and Chinese; once let in, the page takes them to the item page
with their pass, and their captcha and buy go through. axe-core finds no WCAG 2.1 AA violation."""

import time

import pytest
from axe_playwright_python.sync_playwright import Axe

from sales.sale_state import keys as sale_keys
from seckill_site.redis import client
from testutils.browser import VIEWPORTS, WCAG_AA, logged_in, poll
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from waitingroom.queue import place
from waitingroom.room import Room, room_write

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORDS = {
    "en": {"prefix": "", "note": "Go to the waiting room", "place": "You are #4 in line"},
    "zh-hans": {"prefix": "/zh-hans", "note": "前往排队室", "place": "你排在第 4 位"},
}


def no_axe_violations(page, where: str) -> None:
    results = Axe().run(page, options=WCAG_AA)
    assert not results.violations_count, f"{where}\n{results.generate_report()}"


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("width", ["phone", "desktop"])
def test_a_shopper_waits_their_turn_then_buys(watched, language, width):
    words = WORDS[language]
    sale = make_sale(stock=5)
    sale.goods.name = "Queue Phone"
    sale.goods.save()
    start = int(time.time()) - 5
    room_write(sale.pk, Room(on=True, starts_at=start, admit_per_minute=1, pass_seconds=600))
    for user_id in range(10**9, 10**9 + 3):  # three ahead, the first of them let in already
        place(sale.pk, user_id)
    shopper = make_user(nickname="Kim")
    tab = watched(f"waiting-{language}-{width}")
    tab.page.set_viewport_size(VIEWPORTS[width])
    tab.context.add_cookies([{"name": "django_language", "value": language, "url": tab.base_url}])
    logged_in(tab, shopper)

    page = tab.go(f"{words['prefix']}/goods/detail/{sale.pk}")
    page.wait_for_selector("#waiting-room-note:not([hidden])")
    page.click(f"text={words['note']}")
    page.wait_for_url(f"**/waiting-room/{sale.pk}")
    assert words["place"] in page.inner_text("#waiting-now")
    no_axe_violations(page, "waiting")
    tab.shoot("waiting")
    page.set_viewport_size(VIEWPORTS[width])

    # The operator lets everyone in: the next status poll takes the shopper to the item page.
    room_write(sale.pk, Room(on=True, starts_at=start, pass_seconds=600))
    page.wait_for_url(f"**/goods/detail/{sale.pk}", timeout=15_000)
    assert any(cookie["name"] == f"seckill_pass_{sale.pk}" for cookie in tab.context.cookies())
    page.wait_for_selector("#buy:not([disabled])")
    page.click("#buy")
    poll(page, "document.getElementById('captcha-img').naturalWidth > 0")
    page.fill("#captcha-answer", client().get(sale_keys.captcha(sale.pk, shopper.pk)).decode())
    with page.expect_response("**/doSeckill") as bought:
        page.click("#captcha-form button[type=submit]")
    assert bought.value.json()["code"] == 0


def test_the_page_asks_back_at_the_shoppers_turn_when_it_comes_sooner(watched):
    """Second in a line admitting one a second, the shopper's turn comes a second after they
    join: the page asks then, not at the usual five seconds, and takes them to the item."""
    sale = make_sale(stock=5)
    room_write(sale.pk, Room(on=True, starts_at=int(time.time()) - 5, admit_per_minute=60, pass_seconds=600))
    place(sale.pk, 10**9)  # the first, let in at once
    shopper = make_user(nickname="Lee")
    tab = watched("waiting-turn")
    logged_in(tab, shopper)
    page = tab.go(f"/waiting-room/{sale.pk}")
    shown = time.monotonic()
    if f"/waiting-room/{sale.pk}" in page.url:  # (not let in while the page was on its way)
        assert page.get_attribute("#waiting-room", "data-refresh") == "1"
        page.wait_for_url(f"**/goods/detail/{sale.pk}", timeout=15_000)
        assert time.monotonic() - shown < 3.5
    assert any(cookie["name"] == f"seckill_pass_{sale.pk}" for cookie in tab.context.cookies())
