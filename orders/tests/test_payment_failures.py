"""A payment that did not go through says so: a declined card, a failed 3-D Secure check and
an Alipay cashier left with Cancel each fail their attempt, as the provider says it through its
own SDK at the stand-ins (localstripe, the Alipay gateway). The paying page, the order page and
the JSON they poll then read "not completed — nothing was charged" with a way to pay again,
and the order keeps its unit and takes a payment again until its deadline."""

import json
import re
import urllib.parse
from urllib.request import Request, urlopen

import pytest
import requests
from django.conf import settings
from django.test import Client
from django.utils import timezone

from orders.models import Order, Payment, PaymentFailure, PaymentNotice, PaymentStatus
from orders.payments.providers import provider
from orders.payments.providers.stripe import client as stripe_client
from orders.payments.reconcile import money_check
from orders.payments.services import PaymentDeclined, payment_card_confirm, payment_start
from sales.selectors import stock_left
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import (
    CARD_ASKS_3DS,
    CARD_DECLINED,
    CARD_GOOD,
    alipay_buyer_pays,
    alipay_cashier_open,
    stripe_card_token,
)
from tools.payment_services import alipay_control

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}
GOOD, DECLINED, ASKS_3DS = CARD_GOOD, CARD_DECLINED, CARD_ASKS_3DS
# What the shopper reads, in each language.
WORDS = {
    "en": {"failed": "Payment not completed — nothing was charged", "again": "Pay again", "left": "left to pay"},
    "zh-hans": {"failed": "支付未完成，未扣款", "again": "重新支付", "left": "剩余支付时间"},
}
LANGUAGES = pytest.mark.parametrize("language", ["en", "zh-hans"], ids=["en", "zh"])


def _card_token(number: str) -> str:
    return stripe_card_token(number)


def _order(client) -> Order:
    me = make_user()
    make_address(me)
    client.force_login(me)
    return buy(sale=make_sale(stock=2), user=me)


def _page(client, path: str, language: str) -> str:
    return client.get(path, HTTP_ACCEPT_LANGUAGE=language).content.decode()


def _card_attempt(client, order: Order) -> str:
    """Choose the card on the order page: the card form's address."""
    answer = client.post(f"/orders/{order.order_no}/pay", {"method": "stripe"})
    assert answer.status_code == 302, answer.content
    return answer["Location"]


def _says_not_paid(client, order: Order, language: str, kind: str) -> None:
    words = WORDS[language]
    paying = _page(client, f"/orders/{order.order_no}/paying", language)
    assert words["failed"] in paying and words["again"] in paying and words["left"] in paying
    assert 'data-state="failed"' in paying
    assert "Waiting for the payment service" not in paying and "正在等待" not in paying
    assert words["failed"] in _page(client, f"/orders/{order.order_no}", language)
    polled = client.get(f"/orders/{order.order_no}", **JSON).json()["data"]["payment"]
    assert polled["failure"] == kind and polled["paying"] is False and polled["status"] == "unpaid"
    assert Order.objects.get(pk=order.pk).status == "unpaid"


@LANGUAGES
def test_a_declined_card_says_not_paid_and_the_same_form_takes_another(client, language):
    order = _order(client)
    form = _card_attempt(client, order)
    declined = client.post(form, {"token": _card_token(DECLINED)}, content_type="application/json", **JSON)
    assert declined.status_code == 409
    body = declined.json()
    assert "declined" in body["msg"] and "Nothing was charged" in body["msg"]
    first = Payment.objects.get(order=order)
    assert first.failure == PaymentFailure.DECLINED and first.status == PaymentStatus.OPEN
    assert body["data"]["payUrl"] == form
    _says_not_paid(client, order, language, "declined")

    # Another card on the same form: not localstripe's "Bad request" for confirming the failed
    # intent again, but a new attempt behind it, paid.
    again = client.post(form, {"token": _card_token(GOOD)}, content_type="application/json", **JSON)
    assert again.status_code == 200, again.content
    data = again.json()["data"]
    assert data["status"] == PaymentStatus.SUCCEEDED and data["payUrl"] != form
    assert Order.objects.get(pk=order.pk).status == "paid"
    assert "Bad request" not in again.content.decode()
    paid = Payment.objects.get(order=order, status=PaymentStatus.SUCCEEDED)
    assert paid.pk != first.pk and not paid.failure
    assert client.get(f"/orders/{order.order_no}", **JSON).json()["data"]["payment"]["failure"] is None
    assert money_check() == []


def test_a_card_declined_twice_on_one_form_fails_each_attempt_once():
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    payment, _checkout = payment_start(
        order=order, provider_name="stripe", address=make_address(me), return_url="", notify_url=""
    )
    with pytest.raises(PaymentDeclined) as first:
        payment_card_confirm(payment=payment, token=_card_token(DECLINED))
    with pytest.raises(PaymentDeclined) as second:
        payment_card_confirm(payment=payment, token=_card_token(DECLINED))
    assert first.value.payment.pk == payment.pk and second.value.payment.pk != payment.pk
    failures = list(order.payments.order_by("created_at").values_list("failure", "status"))
    assert failures == [(PaymentFailure.DECLINED, PaymentStatus.OPEN)] * 2
    assert Order.objects.get(pk=order.pk).status == "unpaid"


@LANGUAGES
def test_a_failed_3d_secure_check_says_not_paid_then_paying_again_pays(client, language):
    order = _order(client)
    form = _card_attempt(client, order)
    asked = client.post(form, {"token": _card_token(ASKS_3DS)}, content_type="application/json", **JSON)
    secret = asked.json()["data"]["clientSecret"]
    assert secret and Order.objects.get(pk=order.pk).status == "unpaid"
    # The shopper fails the bank's check in Stripe.js's box (what localstripe's shim sends).
    intent = secret.split("_secret_")[0]
    failed = requests.post(
        f"{settings.STRIPE_API_BASE}/v1/payment_intents/{intent}/_authenticate?success=false",
        json={"key": settings.STRIPE_PUBLISHABLE_KEY, "client_secret": secret},
        timeout=10,
    )
    assert failed.status_code == 200 and failed.json()["status"] == "requires_payment_method"

    # The card form then goes to the paying page, which asks Stripe on arrival.
    _says_not_paid(client, order, language, "authentication")
    assert Payment.objects.get(order=order).status == PaymentStatus.OPEN  # it holds the unit still

    # "Pay again": the order page, the card again, paid.
    form = _card_attempt(client, order)
    paid = client.post(form, {"token": _card_token(GOOD)}, content_type="application/json", **JSON)
    assert paid.json()["data"]["status"] == PaymentStatus.SUCCEEDED
    assert WORDS[language]["failed"] not in _page(client, f"/orders/{order.order_no}/paying", language)
    assert Order.objects.get(pk=order.pk).status == "paid" and money_check() == []


def test_stripes_payment_failed_webhook_fails_the_attempt():
    import stripe

    me = make_user()
    order = buy(sale=make_sale(), user=me)
    payment, _checkout = payment_start(
        order=order, provider_name="stripe", address=make_address(me), return_url="", notify_url=""
    )
    with pytest.raises(PaymentDeclined):
        payment_card_confirm(payment=payment, token=_card_token(DECLINED))
    # Undone, as if the confirm's answer had been lost: Stripe's event is the provider's word.
    Payment.objects.filter(pk=payment.pk).update(failure="", failed_at=None)
    listed = stripe_client().v1.events.list(params={"type": "payment_intent.payment_failed", "limit": 100})
    event = next(e for e in listed.auto_paging_iter() if e.data.object.id == payment.provider_ref)
    payload = json.dumps(event.to_dict())
    stamp = int(timezone.now().timestamp())
    signature = stripe.WebhookSignature._compute_signature(f"{stamp}.{payload}", settings.STRIPE_WEBHOOK_SECRET)
    answer = Client().post(
        "/payments/stripe/webhook",
        payload,
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=f"t={stamp},v1={signature}",
    )
    assert answer.status_code == 200, answer.content
    assert PaymentNotice.objects.get(payment=payment).outcome == "failed"
    assert Payment.objects.get(pk=payment.pk).failure == PaymentFailure.DECLINED
    assert Order.objects.get(pk=order.pk).status == "unpaid"


def _cashier_cancel(trade_no: str) -> str:
    """The shopper presses 取消 Cancel on Alipay's cashier: the page it shows, with its plain
    link back to the shop."""
    base = settings.ALIPAY_GATEWAY.rsplit("/gateway.do", 1)[0]
    request = Request(f"{base}/cashier/{trade_no}/cancel", data=b"", method="POST")
    with urlopen(request, timeout=10) as response:
        return response.read().decode()


@LANGUAGES
def test_leaving_alipays_cashier_with_cancel_says_not_paid_and_it_can_still_pay(client, language):
    order = _order(client)
    cashier = client.post(f"/orders/{order.order_no}/pay", {"method": "alipay"})
    alipay_cashier_open(cashier["Location"])
    payment = Payment.objects.get(order=order)
    left = _cashier_cancel(payment.trade_no)
    back = re.search(r'href="([^"]+/paying[^"]*)"', left).group(1)
    assert urllib.parse.urlsplit(back).path == f"/orders/{order.order_no}/paying"
    assert not urllib.parse.urlsplit(back).query  # no signed word: Alipay has none for leaving

    _says_not_paid(client, order, language, "left")
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.OPEN
    assert stock_left([order.sale_id]) == {order.sale_id: 1}  # the order keeps its unit

    # The shopper goes back to the cashier and pays after all: the order takes it.
    alipay_buyer_pays(payment.trade_no)
    assert client.post(f"/orders/{order.order_no}/paying", **JSON).json()["data"]["status"] == "paid"
    assert money_check() == []


def test_alipays_signed_return_is_not_taken_for_leaving(client):
    order = _order(client)
    cashier = client.post(f"/orders/{order.order_no}/pay", {"method": "alipay"})
    alipay_cashier_open(cashier["Location"])
    payment = Payment.objects.get(order=order)
    alipay_control(settings.ALIPAY_GATEWAY, "notifications?hold=1")
    try:
        returned = alipay_buyer_pays(payment.trade_no)["return_url"]
    finally:
        alipay_control(settings.ALIPAY_GATEWAY, "notifications?hold=0")
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(returned).query))
    alipay = provider("alipay")
    assert alipay.return_verified(params, payment)
    assert not alipay.return_verified({**params, "total_amount": "0.01"}, payment)
    assert not alipay.return_verified({k: v for k, v in params.items() if k != "sign"}, payment)

    page = client.get(f"/orders/{order.order_no}/paying?{urllib.parse.urlencode(params)}").content.decode()
    assert "Waiting for the payment service's word…" in page  # its notification settles it
    assert not Payment.objects.get(pk=payment.pk).failure
    forged = {**params, "sign": params["sign"][::-1]}
    page = client.get(f"/orders/{order.order_no}/paying?{urllib.parse.urlencode(forged)}").content.decode()
    assert "Payment received" in page  # no word to trust: Alipay is asked, and says paid


def test_the_api_answers_a_declined_card_with_the_failed_attempt_and_takes_another(client):
    order = _order(client)
    started = client.post(f"/api/v1/orders/{order.order_no}/pay", {"method": "stripe"}, content_type="application/json")
    trade_no = started.json()["data"]["tradeNo"]
    card = f"/api/v1/orders/{order.order_no}/payments/{trade_no}/card"
    declined = client.post(card, {"token": _card_token(DECLINED)}, content_type="application/json")
    assert declined.status_code == 409 and declined.json()["data"] == {"tradeNo": trade_no}
    assert client.get(f"/api/v1/orders/{order.order_no}").json()["data"]["payment"]["failure"] == "declined"
    paid = client.post(card, {"token": _card_token(GOOD)}, content_type="application/json").json()["data"]
    assert paid["status"] == PaymentStatus.SUCCEEDED and paid["tradeNo"] != trade_no
    assert Order.objects.get(pk=order.pk).status == "paid"


def test_the_paying_page_leaves_an_attempt_at_a_provider_switched_off_to_the_sweeps(client, settings):
    order = _order(client)
    client.post(f"/orders/{order.order_no}/pay", {"method": "alipay"})
    settings.PAYMENT_PROVIDERS = {"stripe": settings.PAYMENT_PROVIDERS["stripe"]}  # Alipay removed since
    page = client.get(f"/orders/{order.order_no}/paying")
    assert page.status_code == 200 and not Payment.objects.get(order=order).failure
