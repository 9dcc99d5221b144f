"""A unit that comes back after a draw, in Chromium (docs/draw.md, "Units that come back"): an
entrant who was not drawn reads their place on the waiting list, which moves up on the open
page as the one ahead is offered a unit (docs/waiting-list.md); when that offer is cancelled the
unit is theirs, the page turns to "Pay now" by itself, and they pay at Alipay's cashier (the
stand-in).
On a phone and a desktop, in English and Chinese; axe-core finds no WCAG 2.1 AA violation."""

import re

import pytest
from axe_playwright_python.sync_playwright import Axe

from orders.models import Order, OrderStatus
from orders.services import REASON_SHOPPER, order_cancel
from sales.draw_waiting import waiting_list
from sales.models import SaleDraw, SaleDrawOffer
from seckill.services import draw as draw_service
from seckill.services import writer
from testutils.browser import VIEWPORTS, WCAG_AA, choose_chinese, log_in, poll, provider_word_awaited
from testutils.draws import enter_all, window_over
from testutils.factories.sales import make_draw_sale
from testutils.factories.users import make_address, make_users

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORDS = {
    "en": {
        "prefix": "",
        "second": "You are #2 on the waiting list",
        "first": "You are #1 on the waiting list",
        "paid": "Payment received",
    },
    "zh-hans": {"prefix": "/zh-hans", "second": "排第 2 位", "first": "排第 1 位", "paid": "支付成功"},
}


def no_axe_violations(page, where: str) -> None:
    results = Axe().run(page, options=WCAG_AA)
    assert not results.violations_count, f"{where}\n{results.generate_report()}"


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("width", ["phone", "desktop"])
def test_the_next_on_the_waiting_list_is_offered_the_unit_and_pays(watched, celery_worker, language, width):
    words = WORDS[language]
    sale = make_draw_sale(stock=1)
    users = make_users(3)
    for user in users:
        make_address(user)
    enter_all(users, sale)
    window_over(sale)
    assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"
    writer.sale_flush(sale_id=sale.pk)
    draw = SaleDraw.objects.get(sale=sale)
    (_rank, first_id), (_rank, second_id) = waiting_list(draw)
    second_waiting = next(user for user in users if user.pk == second_id)

    tab = watched(f"draw-offer-{language}-{width}")
    page = tab.page
    page.set_viewport_size(VIEWPORTS[width])
    if language != "en":
        choose_chinese(tab)
    log_in(page, tab.base_url, second_waiting.mobile)
    tab.go(f"{words['prefix']}/goods/detail/{sale.pk}")
    page.wait_for_selector("#draw-waiting:not([hidden])")
    assert words["second"] in page.inner_text("#draw-waiting")
    page.wait_for_selector("#remind", state="hidden")  # a unit that comes back is offered to them
    no_axe_violations(page, "waiting list")
    tab.shoot("draw-waiting-list")
    page.set_viewport_size(VIEWPORTS[width])

    # The winner cancels: the unit goes to the first on the list, never back on sale, and the
    # open page moves the shopper up by itself (its poll, every few seconds).
    winner = Order.objects.get(seckill__sale=sale, seckill__user_id=draw.winner_ids[0], seckill__live=True)
    assert order_cancel(order_id=winner.pk, reason=REASON_SHOPPER)
    assert SaleDrawOffer.objects.get(draw=draw).user_id == first_id
    poll(page, f"document.getElementById('draw-waiting').innerText.includes({words['first']!r})", seconds=15)

    # The first says no: the unit is the shopper's, and the page offers "Pay now" without a reload.
    first_offer = SaleDrawOffer.objects.get(draw=draw, user_id=first_id)
    assert order_cancel(order_id=first_offer.order_id, reason=REASON_SHOPPER)
    offer = SaleDrawOffer.objects.get(draw=draw, user_id=second_id)
    page.wait_for_selector("#pay-now", timeout=15_000)
    no_axe_violations(page, "offered")
    tab.shoot("draw-offered")
    page.set_viewport_size(VIEWPORTS[width])
    page.click("#pay-now")
    page.wait_for_url(re.compile(r".*/orders/\d+$"))
    page.click("button[form=pay-form]")
    page.wait_for_selector("#pay")  # Alipay's cashier (the stand-in)
    page.click("#pay")
    page.wait_for_url(re.compile(r".*/orders/\d+/paying(\?.*)?$"))
    provider_word_awaited(page, words["paid"])
    assert Order.objects.get(pk=offer.order_id).status == OrderStatus.PAID
