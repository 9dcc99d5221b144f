"""After the payment, in a real browser, in English and Chinese: the merchant ships an order
from its admin page and the shopper follows it (status tabs, the order's story, the parcel)
and confirms receipt; a shopper asks for a refund by keyboard only and the merchant approves
it. Every page on the way has no WCAG 2.1 AA violation (axe-core), and the shopper's pages
are saved at phone and desktop widths into e2e-screenshots/."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from orders.models import Order, OrderStatus, RefundRequest
from testutils.browser import WCAG_AA, as_merchant, shoot
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user, session_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

WORDS = {
    "en": {
        "ship": "Ship this order",
        "answer": "Answer the refund request",
        "approve": "Approve and refund",
        "received": "I received it",
        "ask": "Ask for a refund",
        "to_ship": "To ship",
        "on_the_way": "On the way",
        "completed": "Completed",
        "asked": "You asked for a refund on",
        "refunds": "Refunds",
    },
    "zh-hans": {
        "ship": "发货",
        "answer": "处理退款申请",
        "approve": "同意并退款",
        "received": "确认收货",
        "ask": "申请退款",
        "to_ship": "待发货",
        "on_the_way": "待收货",
        "completed": "已完成",
        "asked": "你于",
        "refunds": "退款",
    },
}


def _axe(tab, where: str, failures: dict) -> None:
    results = Axe().run(tab.page, options=WCAG_AA)
    if results.violations_count:
        failures[where] = results.generate_report()


def _paid_order(item: str):
    """A merchant's item, bought and paid for by a shopper: (merchant, shopper, order)."""
    merchant = make_merchant(nickname="Mia")
    shopper = make_user(nickname="Ann")
    order = pay(buy(sale=make_sale(goods=make_goods(owner=merchant, name=item), stock=3), user=shopper))
    return merchant, shopper, order


def _as_shopper(watched, user, language: str):
    tab = watched(f"shopper-{language}")
    tab.context.add_cookies(
        [
            {"name": "django_language", "value": language, "url": tab.base_url},
            {"name": "sessionid", "value": session_for(user), "url": tab.base_url},
        ]
    )
    return tab


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_order_ships_and_the_shopper_follows_it_to_completed(watched, language):
    words = WORDS[language]
    merchant, shopper, order = _paid_order("Kettle")
    failures: dict[str, str] = {}

    desk = as_merchant(watched, merchant, language)
    page = desk.go("/admin/orders/order/")
    page.click(".to-ship-link")
    page.wait_for_selector(f"text={order.order_no}")
    desk.go(f"/admin/orders/order/{order.pk}/change/")
    _axe(desk, "admin order page", failures)
    page.click(".ship-link")
    page.wait_for_selector("#ship_form")
    _axe(desk, "admin ship page", failures)
    shoot(desk, "ship")
    page.select_option("#id_carrier", "sf")
    page.fill("#id_tracking_no", "SF 1234 5678")
    page.keyboard.press("Enter")
    page.wait_for_selector(".messagelist")
    assert Order.objects.get(pk=order.pk).status == OrderStatus.SHIPPED
    desk.go("/admin/orders/order/ship.csv/")
    _axe(desk, "admin ship file page", failures)
    shoot(desk, "ship-file")

    tab = _as_shopper(watched, shopper, language)
    page = tab.go("/orders/")
    page.click(f"nav.tabs >> text={words['on_the_way']}")
    page.wait_for_selector(f"text={order.order_no}")
    _axe(tab, "my orders, on the way", failures)
    tab.shoot("tabs-on-the-way")
    page.click(f"text={order.order_no}")
    page.wait_for_selector(".timeline")
    assert "SF12345678" in page.inner_text(".parcel")
    _axe(tab, "order shipped", failures)
    tab.shoot("order-shipped")
    page.click(f"a.btn:has-text('{words['received']}')")
    page.wait_for_selector("#confirm-received")  # a page of its own asks first, no script needed
    _axe(tab, "received, confirm", failures)
    tab.shoot("order-received-confirm")
    page.click("#confirm-received")
    page.wait_for_selector(".timeline li:nth-child(4)")
    assert Order.objects.get(pk=order.pk).status == OrderStatus.DELIVERED
    _axe(tab, "order completed", failures)
    tab.shoot("order-completed")
    assert not failures, "\n\n".join(f"{where}\n{report}" for where, report in failures.items())


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_refund_asked_by_keyboard_is_approved_by_the_merchant(watched, language):
    words = WORDS[language]
    merchant, shopper, order = _paid_order("Lamp")
    failures: dict[str, str] = {}

    tab = _as_shopper(watched, shopper, language)
    page = tab.go(f"/orders/{order.order_no}")
    _axe(tab, "order paid", failures)
    tab.shoot("order-paid")
    page.focus(".refund-ask summary")
    page.keyboard.press("Enter")  # opens the form
    page.keyboard.press("Tab")  # to the reasons
    page.keyboard.press("ArrowDown")  # "I no longer need it"
    page.keyboard.press("Tab")
    page.keyboard.type("Found a better one")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"text={words['asked']}")
    request = RefundRequest.objects.get(order=order)
    assert request.reason.endswith(": Found a better one")
    _axe(tab, "refund asked", failures)
    tab.shoot("refund-asked")
    page = tab.go("/orders/?tab=refunds")
    page.wait_for_selector(f"text={order.order_no}")

    desk = as_merchant(watched, merchant, language)
    page = desk.go(f"/admin/orders/order/{order.pk}/change/")
    page.click(".refund-request-link")
    page.wait_for_selector("#approve_form")
    _axe(desk, "admin refund request", failures)
    shoot(desk, "refund-request")
    page.click(f"#approve_form input[type=submit][value='{words['approve']}']")
    page.wait_for_selector(".messagelist")
    assert Order.objects.get(pk=order.pk).status == OrderStatus.REFUNDED

    page = tab.go(f"/orders/{order.order_no}")
    page.wait_for_selector(".timeline")
    _axe(tab, "order refunded", failures)
    tab.shoot("order-refunded")
    assert not failures, "\n\n".join(f"{where}\n{report}" for where, report in failures.items())
