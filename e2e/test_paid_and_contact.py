"""After the payment, in a real browser, in English and Chinese, on a phone (390 px) and a
desktop (1280 px): the receipt a paid order lands on (the way paid, the goods, the address,
what happens next, the ways on); a shipped order's tracking number as a link to the carrier's
page; and the order's thread, the shopper writing by keyboard, the merchant answering on the
order's admin page, the shopper texted and reading the answer. Every page has no WCAG 2.1 AA
violation (axe-core) at either width; the shopper's pages are saved into e2e-screenshots/."""

import re

import pytest
from axe_playwright_python.sync_playwright import Axe

from orders.contact.notices import merchant_replies_send
from orders.fulfilment.services import order_ship
from orders.models import OrderMessage
from testutils.browser import VIEWPORTS, WCAG_AA, as_merchant, shoot
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_merchant, make_user, session_for
from users import sms

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

LANGUAGES = pytest.mark.parametrize("language", ["en", "zh-hans"], ids=["en", "zh"])
WORDS = {
    "en": {
        "headline": "Payment received",
        "paid_with": "paid with Alipay",
        "next": "What happens next",
        "view": "View the order",
        "keep": "Back to shopping",
        "new_tab": "opens in a new tab",
        "send": "Send to the merchant",
        "to_answer": "1 order with a message to answer",
        "answer": "Send to the shopper",
        "merchant": "Merchant",
        "texted": "The merchant answered about your order",
    },
    "zh-hans": {
        "headline": "支付成功",
        "paid_with": "已通过支付宝支付",
        "next": "接下来",
        "view": "查看订单",
        "keep": "继续逛逛",
        "new_tab": "在新标签页打开",
        "send": "发送给商家",
        "to_answer": "1 个订单有待回复的留言",
        "answer": "发送给买家",
        "merchant": "商家",
        "texted": "商家回复了你",
    },
}


def _axe_both_widths(tab, where: str, failures: dict) -> None:
    for width, viewport in VIEWPORTS.items():
        tab.page.set_viewport_size(viewport)
        results = Axe().run(tab.page, options=WCAG_AA)
        if results.violations_count:
            failures[f"{where} ({width})"] = results.generate_report()
    tab.page.set_viewport_size(VIEWPORTS["desktop"])


def _as_shopper(watched, user, language: str):
    tab = watched(f"shopper-{language}")
    tab.context.add_cookies(
        [
            {"name": "django_language", "value": language, "url": tab.base_url},
            {"name": "sessionid", "value": session_for(user), "url": tab.base_url},
        ]
    )
    return tab


def _paid_order(item: str, language: str):
    merchant = make_merchant(nickname="Mia")
    shopper = make_user(nickname="Ann", language=language)
    address = make_address(shopper, recipient="Wang Fang")
    order = pay(buy(sale=make_sale(goods=make_goods(owner=merchant, name=item), stock=3), user=shopper), address)
    return merchant, shopper, order


@LANGUAGES
def test_a_paid_order_lands_on_a_receipt_that_says_what_comes_next(watched, language):
    words = WORDS[language]
    _merchant, shopper, order = _paid_order("Teapot", language)
    failures: dict[str, str] = {}
    tab = _as_shopper(watched, shopper, language)
    page = tab.go(f"/orders/{order.order_no}/paying")
    assert page.inner_text("h1") == words["headline"]
    assert words["paid_with"] in page.inner_text(".receipt-amount")
    assert "Teapot" in page.inner_text(".order-item") and "Wang Fang" in page.inner_text(".ship-address")
    assert page.inner_text(".next-title") == words["next"]
    assert len(page.locator(".next-steps li").all()) == 3
    _axe_both_widths(tab, "receipt", failures)
    tab.shoot("receipt")
    # The page is in the shopper's language, under its prefix, and so are its links.
    prefix = "" if language == "en" else f"/{language}"
    assert page.get_attribute(f"a:has-text('{words['keep']}')", "href") == f"{prefix}/goods/goodsList"
    page.focus("#view-order")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/orders/{order.order_no}")
    page.wait_for_selector(".timeline")
    assert not failures, "\n\n".join(f"{where}\n{report}" for where, report in failures.items())


@LANGUAGES
def test_the_shopper_follows_the_parcel_and_writes_to_the_merchant_who_answers(watched, language):
    words = WORDS[language]
    merchant, shopper, order = _paid_order("Kettle", language)
    order_ship(order_id=order.pk, carrier="sf", tracking_no="SF1234567890", actor_id=merchant.pk)
    failures: dict[str, str] = {}

    tab = _as_shopper(watched, shopper, language)
    page = tab.go(f"/orders/{order.order_no}")
    link = page.get_by_role("link", name=re.compile("SF1234567890"))
    assert link.get_attribute("href") == "https://www.sf-express.com/chn/sc/waybill/waybill-detail/SF1234567890"
    assert link.get_attribute("target") == "_blank" and "noopener" in link.get_attribute("rel")
    assert words["new_tab"] in link.evaluate("element => element.textContent")
    page.focus("#message-form textarea")
    page.keyboard.type("Is it the <script>red</script> one?")
    page.keyboard.press("Enter")  # a second line: Enter in a textarea does not send
    page.keyboard.type("Thanks")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector(".message.from-me")
    assert page.inner_text(".message.from-me .message-text") == "Is it the <script>red</script> one?\nThanks"
    _axe_both_widths(tab, "order shipped, message sent", failures)
    tab.shoot("message-sent")

    desk = as_merchant(watched, merchant, language)
    page = desk.go("/admin/orders/order/")
    page.click(f"text={words['to_answer']}")
    page.click(f"text={order.order_no}")
    page.wait_for_selector("#answer_form")
    assert "<script>red</script>" in page.inner_text(".order-messages")
    page.fill("#answer_form textarea", "Yes, the red one.\nIt left today.")
    page.click(f"#answer_form input[type=submit][value='{words['answer']}']")
    page.wait_for_selector(".messagelist")
    results = Axe().run(desk.page, options=WCAG_AA)
    if results.violations_count:
        failures["admin order page, answered"] = results.generate_report()
    shoot(desk, "answered")
    assert OrderMessage.objects.filter(order=order, from_merchant=True).count() == 1

    assert merchant_replies_send() == 1
    [text] = [message["text"] for message in sms.outbox if message["mobile"] == shopper.mobile]
    assert text.startswith(words["texted"])
    page = tab.go(f"/orders/{order.order_no}")
    assert page.inner_text(".message.from-merchant .message-text") == "Yes, the red one.\nIt left today."
    assert words["merchant"] in page.inner_text(".message.from-merchant .message-who")
    _axe_both_widths(tab, "order with the merchant's answer", failures)
    tab.shoot("message-answered")
    assert not failures, "\n\n".join(f"{where}\n{report}" for where, report in failures.items())
