"""A draw that takes entries ahead of the opening, in Chromium (docs/draw.md, "Entries ahead"):
a shopper who cannot see the captcha enters by keyboard alone with the spoken captcha, well
before the start, on a phone and a desktop, in English and Chinese; after a wrong answer they
are told to ask for new digits; at the draw the seed and their entry number appear without a
reload. axe-core finds no WCAG 2.1 AA violation in any of these states."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from sales.models import SaleDraw
from sales.services import sale_pages_drop
from seckill.services import draw as draw_service
from testutils.browser import VIEWPORTS, WCAG_AA, captcha_answer, logged_in, poll
from testutils.draws import opening_over
from testutils.factories.sales import make_ahead_sale
from testutils.factories.users import make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORDS = {
    "en": {"enter": "Enter the draw", "closes": "Entries close in", "entry": "You were entry #1 of 1"},
    "zh-hans": {"enter": "参加抽签", "closes": "后报名截止", "entry": "你是第 1 号报名者（共 1 人）"},
}


def press_tab_until(page, element_id: str, limit: int = 60) -> None:
    """Tab through the page, as a keyboard user does, until `element_id` has the focus."""
    for _ in range(limit):
        if page.evaluate("document.activeElement && document.activeElement.id") == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"#{element_id} never took the focus")


def no_axe_violations(page, where: str) -> None:
    results = Axe().run(page, options=WCAG_AA)
    assert not results.violations_count, f"{where}\n{results.generate_report()}"


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("width", ["phone", "desktop"])
def test_a_listener_enters_ahead_by_keyboard_and_sees_their_entry_number_at_the_draw(watched, language, width):
    words = WORDS[language]
    sale = make_ahead_sale(stock=1, opens_in=-60, starts_in=3600)
    sale.goods.name = "Ahead Phone"
    sale.goods.save()
    shopper = make_user(nickname="Lee")
    tab = watched(f"ahead-{language}-{width}")
    tab.page.set_viewport_size(VIEWPORTS[width])
    tab.context.add_cookies([{"name": "django_language", "value": language, "url": tab.base_url}])
    logged_in(tab, shopper)
    page = tab.go(f"/goods/detail/{sale.pk}")
    page.wait_for_selector("#buy:not([disabled])")
    assert page.inner_text("#buy") == words["enter"]
    poll(page, f"document.getElementById('countdown').textContent.includes({words['closes']!r})")
    no_axe_violations(page, "entries open")
    tab.shoot("open")
    page.set_viewport_size(VIEWPORTS[width])

    # Keyboard only: Tab to the button, Enter; the answer box has the focus, Shift+Tab is "Listen instead".
    press_tab_until(page, "buy")
    page.keyboard.press("Enter")
    poll(page, "document.activeElement.id === 'captcha-answer'")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.id") == "captcha-audio"
    page.keyboard.press("Enter")
    page.wait_for_selector("#captcha-player:not([hidden])")
    poll(page, "document.activeElement.id === 'captcha-answer'")
    no_axe_violations(page, "the spoken captcha")

    # A wrong answer uses the digits up: the shopper is told to ask for new ones, and the focus is there.
    wrong = "1111" if captcha_answer(sale, shopper) != "1111" else "2222"
    page.keyboard.type(wrong)
    page.keyboard.press("Enter")
    poll(page, "document.activeElement.id === 'captcha-refresh'")
    assert page.is_hidden("#captcha-player") and page.is_hidden("#captcha-img")
    page.keyboard.press("Enter")
    page.wait_for_selector("#captcha-player:not([hidden])")
    poll(page, "document.activeElement.id === 'captcha-answer'")
    page.keyboard.type(captcha_answer(sale, shopper))
    page.keyboard.press("Enter")
    page.wait_for_selector("#draw-entered", timeout=10_000)
    assert str(shopper.pk) in page.inner_text("#draw-entry")
    no_axe_violations(page, "entered")
    tab.shoot("entered")
    page.set_viewport_size(VIEWPORTS[width])

    # The opening comes (moved to now) and the draw is made; the page shows it without a reload.
    opening_over(sale)
    sale_pages_drop(sale_id=sale.pk)
    assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"
    page.wait_for_selector("#seed", timeout=15_000)
    page.wait_for_selector("#draw-entry", timeout=15_000)
    poll(page, f"document.getElementById('panel').textContent.includes({words['entry']!r})", seconds=15)
    assert page.inner_text("#seed") == SaleDraw.objects.get(sale=sale).seed
    assert str(shopper.pk) in page.inner_text("#draw-winners")
    no_axe_violations(page, "drawn")
    tab.shoot("drawn")
    # The wrong answer's 400 is an expected answer, not an error of the page.
    tab.console_errors[:] = [e for e in tab.console_errors if "400" not in e]
