"""After-sales in a real browser, in English and Chinese: a shopper sends a shipped order back
("Return and refund"), the merchant approves it with the return address in the admin, the
shopper gives the tracking number of the parcel sent back, and the merchant marks it received,
which refunds the order. The status pill follows each step; every page on the way has no WCAG
2.1 AA violation (axe-core), and the shopper's pages are saved at phone and desktop widths."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from orders.fulfilment.services import order_ship
from orders.models import Order, OrderStatus, ReturnRequest
from testutils.browser import WCAG_AA, as_merchant, shoot
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user, session_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORDS = {
    "en": {
        "asked": "Return requested",
        "approved": "Send it back",
        "sent": "On its way back",
        "refunded": "Refunded",
    },
    "zh-hans": {
        "asked": "退货申请中",
        "approved": "待寄回",
        "sent": "退货寄回中",
        "refunded": "已退款",
    },
}


def _axe(tab, where: str, failures: dict) -> None:
    results = Axe().run(tab.page, options=WCAG_AA)
    if results.violations_count:
        failures[where] = results.generate_report()


def _as_shopper(watched, user, language: str):
    tab = watched(f"shopper-{language}")
    tab.context.add_cookies(
        [
            {"name": "django_language", "value": language, "url": tab.base_url},
            {"name": "sessionid", "value": session_for(user), "url": tab.base_url},
        ]
    )
    return tab


def _pill(page) -> str:
    return page.inner_text(".order-item .pill")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_shipped_order_goes_back_and_the_refund_follows_its_arrival(watched, language):
    words = WORDS[language]
    merchant = make_merchant(nickname="Mia")
    shopper = make_user(nickname="Ann")
    sale = make_sale(goods=make_goods(owner=merchant, name="Teapot"), stock=3)
    order = pay(buy(sale=sale, user=shopper))
    order_ship(order_id=order.pk, carrier="sf", tracking_no="SF1234", actor_id=merchant.pk)
    failures: dict[str, str] = {}

    tab = _as_shopper(watched, shopper, language)
    page = tab.go(f"/orders/{order.order_no}")
    page.click("#return summary")
    page.select_option("#return select[name=reason]", "damaged")
    page.fill("#return input[name=detail]", "Cracked spout")
    _axe(tab, "return form", failures)
    tab.shoot("return-form")
    page.click("#return button[type=submit]")
    page.wait_for_selector("#withdraw-return")
    assert _pill(page) == words["asked"]
    assert ReturnRequest.objects.get(order=order).reason.endswith(": Cracked spout")
    _axe(tab, "return asked", failures)
    tab.shoot("return-asked")

    desk = as_merchant(watched, merchant, language)
    page = desk.go("/admin/orders/order/")
    page.click(".returns-link")
    page.wait_for_selector(f"text={order.order_no}")
    desk.go(f"/admin/orders/order/{order.pk}/change/")
    page.click(".return-request-link")
    page.wait_for_selector("#approve_form")
    _axe(desk, "admin return request", failures)
    shoot(desk, "return-request")
    page.fill("#id_return_address", "Mia Chen, 13800000000, 1 Dock Road, Ningbo")
    page.click("#approve_form input[type=submit]")
    page.wait_for_selector(".messagelist")

    page = tab.go(f"/orders/{order.order_no}")
    assert "1 Dock Road" in page.inner_text(".return-address")
    assert _pill(page) == words["approved"]
    _axe(tab, "return approved", failures)
    tab.shoot("return-approved")
    page.select_option("#return-parcel select[name=carrier]", "zto")
    page.fill("#return-parcel input[name=tracking_no]", "zt 5566 7788")
    page.keyboard.press("Enter")
    page.wait_for_selector(".step-return-sent")
    assert _pill(page) == words["sent"]
    _axe(tab, "parcel sent back", failures)
    tab.shoot("return-sent")

    page = desk.go("/admin/orders/order/")
    page.click(".parcels-back-link")
    page.wait_for_selector(f"text={order.order_no}")
    desk.go(f"/admin/orders/order/{order.pk}/return-request/")
    assert "ZT55667788" in page.inner_text("#content-main")
    _axe(desk, "admin parcel back", failures)
    shoot(desk, "return-received")
    page.click("#received_form input[type=submit]")
    page.wait_for_selector(".messagelist")
    assert Order.objects.get(pk=order.pk).status == OrderStatus.REFUNDED

    page = tab.go(f"/orders/{order.order_no}")
    page.wait_for_selector(".step-return-received")
    assert _pill(page) == words["refunded"]
    _axe(tab, "return refunded", failures)
    tab.shoot("return-refunded")
    assert not failures, "\n\n".join(f"{where}\n{report}" for where, report in failures.items())
