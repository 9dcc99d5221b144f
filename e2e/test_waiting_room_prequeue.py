"""The waiting room's pre-queue in Chromium (docs/waiting-room.md): a shopper who arrives before
the sale starts waits with no place yet and reads when the places are given; at the opening the
published shuffle places everyone who came early, and the open page says the shopper's place
and wait, the place the shuffle's published data gives them; once let in they buy. On a phone
and a desktop, in English and Chinese; axe-core finds no WCAG 2.1 AA violation. Real time, a
few seconds ahead."""

import hashlib
import time

import pytest
from axe_playwright_python.sync_playwright import Axe

from seckill_site.redis import client
from testutils.browser import VIEWPORTS, WCAG_AA, logged_in, poll, solve_and_buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from waitingroom import keys
from waitingroom.queue import place
from waitingroom.room import Room, room_write

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORDS = {
    "en": {"prefix": "", "note": "Go to the waiting room", "prequeue": "You have no place in line yet: at",
           "place": "You are #{} in line, about {} min."},
    "zh-hans": {"prefix": "/zh-hans", "note": "前往排队室", "prequeue": "你还没有排队位置",
                "place": "你排在第 {} 位，大约 {} 分钟。"},
}  # fmt: skip
# Seconds from creating the sale to its start: enough to open two pages before it.
LEAD = 8


def no_axe_violations(page, where: str) -> None:
    results = Axe().run(page, options=WCAG_AA)
    assert not results.violations_count, f"{where}\n{results.generate_report()}"


def shuffled_place(base_url: str, page, sale_id: int, user_id: int) -> int:
    """The shopper's place as anyone recomputes it from the published shuffle."""
    data = page.request.get(f"{base_url}/waiting-room/{sale_id}/shuffle").json()["data"]
    assert hashlib.sha256(data["seed"].encode()).hexdigest() == data["seedSha256"]
    order = sorted(data["prequeueIds"], key=lambda i: (hashlib.sha256(f"{data['seed']}:{i}".encode()).hexdigest(), i))
    return order.index(user_id) + 1


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("width", ["phone", "desktop"])
def test_an_early_shopper_is_placed_by_the_shuffle_at_the_opening_then_buys(watched, language, width):
    words = WORDS[language]
    shopper = make_user(nickname="Lin")
    tab = watched(f"prequeue-{language}-{width}")
    tab.page.set_viewport_size(VIEWPORTS[width])
    tab.context.add_cookies([{"name": "django_language", "value": language, "url": tab.base_url}])
    logged_in(tab, shopper)

    sale = make_sale(stock=5, starts_in=LEAD)
    start = int(sale.start_at.timestamp())
    # One a minute, and one pass held already up to the cap of one: nobody is let in at the
    # opening, whatever place the shuffle gives the shopper, so the page shows it with its wait.
    room_write(sale.pk, Room(on=True, opens_at=start - 60, starts_at=start, admit_per_minute=1, active_max=1,
                             pass_seconds=600))  # fmt: skip
    client().zadd(keys.active(sale.pk), {"1": time.time() + 600})
    for user_id in range(10**9, 10**9 + 3):  # three others came early too
        assert place(sale.pk, user_id).state == "prequeue"

    page = tab.go(f"{words['prefix']}/goods/detail/{sale.pk}")
    page.wait_for_selector("#waiting-room-note:not([hidden])")
    page.click(f"text={words['note']}")
    page.wait_for_url(f"**/waiting-room/{sale.pk}")
    assert time.time() < start, "the test reached the pre-queue after the opening"
    assert words["prequeue"] in page.inner_text("#waiting-now")
    no_axe_violations(page, "pre-queue")
    tab.shoot("prequeue")
    page.set_viewport_size(VIEWPORTS[width])

    # The opening: the page's next status poll finds the shopper placed by the shuffle.
    poll(page, r"/#[0-9]|第 [0-9]/.test(document.getElementById('waiting-now').innerText)", seconds=LEAD + 10)
    position = shuffled_place(tab.base_url, page, sale.pk, shopper.pk)
    assert words["place"].format(position, position) in page.inner_text("#waiting-now")
    no_axe_violations(page, "placed")
    tab.shoot("placed")
    page.set_viewport_size(VIEWPORTS[width])

    # The operator lets everyone in: the next status poll takes the shopper to the item page.
    room_write(sale.pk, Room(on=True, opens_at=start - 60, starts_at=start, pass_seconds=600))
    page.wait_for_url(f"**/goods/detail/{sale.pk}", timeout=15_000)
    assert any(cookie["name"] == f"seckill_pass_{sale.pk}" for cookie in tab.context.cookies())
    page.wait_for_selector("#buy:not([disabled])")
    with page.expect_response("**/doSeckill") as bought:
        solve_and_buy(page, sale, shopper)
    assert bought.value.json()["code"] == 0
