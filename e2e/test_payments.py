"""Paying through the providers' stand-ins in a real browser: a card in localstripe's Stripe.js
form, Alipay's cashier (its mobile-web one on a phone), and a payment that lands after its order
closed, refunded. The shopper's steps are the browser's; the shop's own (the expiry sweep) and the
provider's faults (notifications held, an outage) are made here, as the live server runs in this
process. Every page is screenshotted at both widths, in English and Chinese."""

import json
import logging
import re
import time
from datetime import timedelta
from urllib.request import urlopen

import pytest
from django.conf import settings
from django.utils import timezone

from orders.models import Order, Payment, PaymentNotice, PaymentStatus, Refund, RefundStatus
from orders.payments.closing import orders_expire_unpaid
from testutils.browser import VIEWPORTS, choose_chinese, log_in, provider_word_awaited
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from tools.payment_services import alipay_control, stripe_webhook_register

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

LANGUAGES = pytest.mark.parametrize("language", ["en", "zh-hans"], ids=["en", "zh"])
# What each language's pages say, where the test reads words.
WORDS = {
    "en": {
        "alipay": "Alipay",
        "card": "Bank card",
        "pay": "Pay ¥1.00",
        "paid": "Payment received",
        "waiting": "Waiting for the payment service's word…",
        "declined": "The card was not accepted",
        "failed": "Payment not completed — nothing was charged",
        "again": "Pay again",
        "refunded": "¥1.00 refunded",
        "late": "The payment arrived after this order had closed.",
    },
    "zh-hans": {
        "alipay": "支付宝",
        "card": "银行卡",
        "pay": "支付 ¥1.00",
        "paid": "支付成功",
        "waiting": "正在等待支付机构的结果…",
        "declined": "银行卡未被接受",
        "failed": "支付未完成，未扣款",
        "again": "重新支付",
        "refunded": "¥1.00 已退款",
        "late": "这笔付款在订单关闭后才到账。",
    },
}
GOOD_CARD, DECLINED_CARD, ASKS_3DS_CARD = "4242424242424242", "4000000000000341", "4000002760003184"
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)
PAYING_URL = re.compile(r".*/orders/\d+/paying(\?.*)?$")


def _gateway() -> str:
    """The Alipay stand-in's origin (its cashier is another site than the shop)."""
    return settings.ALIPAY_GATEWAY.rsplit("/gateway.do", 1)[0]


def _alipay_trade(order: Order) -> dict:
    """The stand-in's record of the order's trade (its /_control/trades)."""
    trade_no = Payment.objects.get(order=order, provider="alipay").trade_no
    with urlopen(f"{_gateway()}/_control/trades", timeout=5) as response:
        trades = json.loads(response.read())["trades"]
    return next(trade for trade in trades if trade["out_trade_no"] == trade_no)


def _unpaid_order(goods_name: str) -> Order:
    shopper = make_user(nickname="Bea")
    make_address(shopper)
    return buy(sale=make_sale(goods=make_goods(name=goods_name), stock=2), user=shopper)


def _order_page(tab, order: Order, language: str):
    """Log in (in Chinese when asked), open the order and check the ways to pay it offers."""
    page = tab.page
    if language != "en":
        choose_chinese(tab)
    log_in(page, tab.base_url, order.user.mobile)
    tab.go(f"/orders/{order.order_no}")
    words = WORDS[language]
    choices = page.locator(".pay-with label.pay-choice")
    assert [text.strip() for text in choices.all_inner_texts()] == [words["alipay"], words["card"]]
    assert page.is_checked("input[name=method][value=alipay]")  # the first way is chosen
    assert page.inner_text("button[form=pay-form]") == words["pay"]
    return page


def _card_fill(page, number: str) -> None:
    """localstripe's card element: plain inputs named by their placeholders."""
    for field, value in (("number", number), ("exp_month", "12"), ("exp_year", "30"), ("cvc", "123"),
                         ("postal_code", "10001")):  # fmt: skip
        page.fill(f"#card-element input[placeholder={field}]", value)


def _on_phone(tab) -> None:
    """The phone's screen again (a screenshot leaves the page at desktop width)."""
    tab.page.set_viewport_size(VIEWPORTS["phone"])


def _wait_for(condition, seconds: float = 20, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.1)


@LANGUAGES
def test_a_shopper_pays_by_card_after_one_is_declined(watched, live_server, caplog, request, language):
    """The card form is localstripe's Stripe.js shim; the card pays on the shop's own confirm
    call, and the webhook Stripe sends after it finds the payment taken already."""
    caplog.set_level(logging.INFO, logger="orders.payments.webhooks")
    hook = f"{live_server.url}/payments/stripe/webhook"
    stripe_webhook_register(settings.STRIPE_API_BASE, hook, name="e2e")
    # The live server outlives this test, and the stand-in is shared: later tests' events stay theirs.
    request.addfinalizer(lambda: stripe_webhook_register(settings.STRIPE_API_BASE, hook, name="e2e", events=[]))
    order = _unpaid_order("Card Kettle")
    words = WORDS[language]
    tab = watched("card")
    page = _order_page(tab, order, language)
    tab.shoot("order-pay-choice")

    page.check("input[name=method][value=stripe]")
    page.click("button[form=pay-form]")
    page.wait_for_url(re.compile(r".*/orders/\d+/pay/\w+/card$"))
    page.wait_for_selector("#card-element input[placeholder=number]")  # Stripe.js mounted the card
    assert page.inner_text("#card-pay") == words["pay"]
    tab.shoot("card")

    _card_fill(page, DECLINED_CARD)
    with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/card")) as declined:
        page.click("#card-pay")
    assert declined.value.status == 409  # the shop's refusal (PAYMENT_UNAVAILABLE), as JSON
    page.wait_for_selector("#card-errors:not([hidden])", timeout=15_000)
    assert words["declined"] in page.inner_text("#card-errors")
    assert page.is_enabled("#card-pay")
    tab.shoot("card-declined")
    assert Order.objects.get(pk=order.pk).status == "unpaid"
    # That 409 is the expected answer, which Chromium logs as a console error; only it is let go.
    conflict = "Failed to load resource: the server responded with a status of 409 (Conflict)"
    assert tab.console_errors == [conflict], tab.console_errors
    tab.console_errors.clear()

    # Another card on the same form: a new attempt behind the declined one.
    page.fill("#card-element input[placeholder=number]", GOOD_CARD)
    page.click("#card-pay")
    page.wait_for_url(PAYING_URL, timeout=15_000)
    provider_word_awaited(page, words["paid"])
    tab.shoot("paid")
    assert Order.objects.get(pk=order.pk).status == "paid"
    payment = Payment.objects.get(order=order, status=PaymentStatus.SUCCEEDED)
    assert payment.provider == "stripe"
    assert Payment.objects.filter(order=order, failure="declined").count() == 1

    # localstripe sends payment_intent.succeeded a second after the confirm: answered 200, and
    # a duplicate of what the confirm did.
    _wait_for(
        lambda: PaymentNotice.objects.filter(payment=payment, kind="payment_intent.succeeded").exists(),
        what="Stripe's payment_intent.succeeded webhook",
    )
    assert PaymentNotice.objects.get(payment=payment, kind="payment_intent.succeeded").outcome == "already"
    refused = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused a stripe")]
    assert not refused, refused

    tab.go(f"/orders/{order.order_no}")
    assert page.locator(".pill.paid").count() == 1
    tab.shoot("order-paid")


def _not_paid_then_again(tab, order: Order, language: str, shot: str) -> None:
    """The paying page says the payment did not go through, with the time left; "Pay again"
    leads to the order page, which says it too."""
    page, words = tab.page, WORDS[language]
    page.wait_for_url(PAYING_URL, timeout=15_000)
    page.wait_for_selector(f"text={words['failed']}", timeout=15_000)
    assert words["waiting"] not in page.inner_text("#paying-state")
    assert page.locator("#paying .pay-left").count() == 1
    assert Order.objects.get(pk=order.pk).status == "unpaid"
    tab.shoot(shot)
    page.click("#pay-again")
    page.wait_for_url(re.compile(r".*/orders/\d+(#pay-form)?$"))
    assert words["failed"] in page.inner_text("dl.facts")
    assert words["again"] in page.inner_text("button[form=pay-form]")


@LANGUAGES
def test_a_failed_3d_secure_check_says_not_paid_then_paying_again_pays(watched, language):
    """localstripe's Stripe.js shim asks to pass or fail the bank's check; failed, the card
    form goes to the paying page, which asks Stripe and says the payment did not go through."""
    order = _unpaid_order("Secure Lamp")
    words = WORDS[language]
    tab = watched("3ds")
    page = _order_page(tab, order, language)
    page.check("input[name=method][value=stripe]")
    page.click("button[form=pay-form]")
    page.wait_for_selector("#card-element input[placeholder=number]")
    _card_fill(page, ASKS_3DS_CARD)
    page.click("#card-pay")
    page.click("text=Fail authentication", timeout=15_000)  # the shim's 3-D Secure box
    _not_paid_then_again(tab, order, language, "paying-3ds-failed")

    page.check("input[name=method][value=stripe]")
    page.click("button[form=pay-form]")
    page.wait_for_selector("#card-element input[placeholder=number]")
    _card_fill(page, GOOD_CARD)
    page.click("#card-pay")
    page.wait_for_url(PAYING_URL, timeout=15_000)
    provider_word_awaited(page, words["paid"])
    assert Order.objects.get(pk=order.pk).status == "paid"


@LANGUAGES
def test_leaving_alipays_cashier_says_not_paid_then_paying_again_pays(watched, language):
    """Cancel on Alipay's cashier leads back to the shop with no signed word: the paying page
    asks Alipay, which calls the trade unpaid, and says the payment did not go through."""
    order = _unpaid_order("Cancel Clock")
    words = WORDS[language]
    tab = watched("alipay-cancel")
    page = _order_page(tab, order, language)
    page.click("button[form=pay-form]")
    page.wait_for_selector("#cancel")
    page.click("#cancel")
    page.click(f"a[href*='/orders/{order.order_no}/paying']")
    _not_paid_then_again(tab, order, language, "paying-alipay-left")

    page.click("button[form=pay-form]")  # Alipay, the first way, again
    page.wait_for_selector("#pay")
    page.click("#pay")
    page.wait_for_url(PAYING_URL)
    provider_word_awaited(page, words["paid"])
    assert Order.objects.get(pk=order.pk).status == "paid"


@LANGUAGES
def test_a_shopper_on_a_phone_pays_at_alipays_mobile_cashier(watched, language):
    """A phone's browser gets Alipay's mobile-web cashier (wap pay). The notification is held at
    first, so the shopper waits on the paying page, which turns paid once it lands."""
    order = _unpaid_order("Pocket Radio")
    words = WORDS[language]
    tab = watched("alipay-phone", user_agent=IPHONE, is_mobile=True, has_touch=True)
    _on_phone(tab)
    page = _order_page(tab, order, language)
    tab.shoot("order-pay-choice")
    _on_phone(tab)

    alipay_control(settings.ALIPAY_GATEWAY, "notifications?hold=1")
    try:
        page.click("button[form=pay-form]")
        page.wait_for_selector("#pay")
        assert page.url.startswith(f"{_gateway()}/")  # the provider's own page
        assert _alipay_trade(order)["method"] == "alipay.trade.wap.pay"
        tab.shoot("alipay-cashier")
        _on_phone(tab)
        page.click("#pay")
        page.wait_for_url(PAYING_URL)
        assert words["waiting"] in page.inner_text("#paying-state")
        assert Order.objects.get(pk=order.pk).status == "unpaid"  # no word from Alipay yet
        tab.shoot("paying-waiting")
        _on_phone(tab)
    finally:
        alipay_control(settings.ALIPAY_GATEWAY, "notifications?hold=0")
    provider_word_awaited(page, words["paid"])  # the page polls, then reloads
    assert Order.objects.get(pk=order.pk).status == "paid"
    tab.shoot("paid")


def test_a_payment_that_lands_after_the_order_closed_is_refunded(watched, celery_worker):
    """The shopper pays at Alipay's cashier, but Alipay's notification is held and Alipay is down
    when the order's time runs out: past the sale's hold the unit goes back unconfirmed. The
    notification that comes later is refunded in full (the Celery worker sends the refund), and the
    shopper reads so on the order page and in their orders, in English and then in Chinese."""
    order = _unpaid_order("Late Lantern")
    tab = watched("late")
    page = _order_page(tab, order, "en")

    alipay_control(settings.ALIPAY_GATEWAY, "notifications?hold=1")
    try:
        page.click("button[form=pay-form]")
        page.wait_for_selector("#pay")
        assert _alipay_trade(order)["method"] == "alipay.trade.page.pay"
        tab.shoot("alipay-cashier")
        page.click("#pay")
        page.wait_for_url(PAYING_URL)
        assert WORDS["en"]["waiting"] in page.inner_text("#paying-state")
        tab.shoot("paying-waiting")
        alipay_control(settings.ALIPAY_GATEWAY, "outage?seconds=30")
        Order.objects.filter(pk=order.pk).update(pay_deadline=timezone.now() - timedelta(hours=2))
        assert orders_expire_unpaid() == 1  # past the 30-minute hold: released, unconfirmed
        assert Order.objects.get(pk=order.pk).status == "cancelled"
        # The page's poll sees no attempt open any more and shows the page again, before
        # Alipay's word has come.
        page.locator("#paying form").wait_for(state="detached", timeout=15_000)
        tab.shoot("paying-closed")
    finally:
        alipay_control(settings.ALIPAY_GATEWAY, "outage?seconds=0")
        alipay_control(settings.ALIPAY_GATEWAY, "notifications?hold=0")
    _wait_for(
        lambda: Refund.objects.filter(payment__order=order, kind="late", status=RefundStatus.SUCCEEDED).exists(),
        what="the late payment's refund, confirmed by Alipay",
    )

    page.reload()
    assert WORDS["en"]["refunded"] in page.inner_text("#paying-state")
    tab.shoot("paying-refunded")
    listed = {}
    for language, short in (("en", "en"), ("zh-hans", "zh")):
        words = WORDS[language]
        if language != "en":
            choose_chinese(tab)
        tab.go(f"/orders/{order.order_no}")
        assert page.locator(".pill.cancelled").count() == 1
        facts = page.inner_text("dl.facts")
        assert words["refunded"] in facts and words["late"] in facts, facts
        assert page.locator("#pay-form").count() == 0
        tab.shoot(f"refunded-order-{short}")
        tab.go("/orders/")
        tab.shoot(f"my-orders-{short}")
        listed[language] = page.locator("tr", has_text=order.order_no).inner_text()
    # My orders says the money went back, as the order page does (read last: every page is shot).
    for language, row in listed.items():
        assert WORDS[language]["refunded"] in row, (language, row)
