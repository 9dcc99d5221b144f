"""How often a shopper may start paying and try a card (orders.payments.limits), on the page
and the API, against real Redis, PostgreSQL and the Stripe stand-in: the try after the last
allowed one answers 429 with Retry-After and a clear message, and reaches no provider."""

from datetime import timedelta

import pytest
import requests
from django.conf import settings
from django.utils import timezone
from rest_framework.test import APIClient

from orders.models import Order, OrderStatus, Payment
from orders.payments.limits import ATTEMPTS_PER_ORDER, ATTEMPTS_WINDOW, CARD_TRIES_PER_ATTEMPT, CARD_TRIES_PER_SHOPPER
from orders.payments.providers.stripe import client as stripe_client
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}
DECLINED, GOOD = "4000000000000341", "4242424242424242"


def _tries(rate: str) -> int:
    return int(rate.split("/")[0])


def _card_token(number: str) -> str:
    answer = requests.post(
        f"{settings.STRIPE_API_BASE}/v1/tokens",
        data={"card[number]": number, "card[exp_month]": "12", "card[exp_year]": "2030", "card[cvc]": "123",
              "key": settings.STRIPE_PUBLISHABLE_KEY},
        timeout=10,
    )  # fmt: skip
    return answer.json()["id"]


def _intents_at_stripe() -> int:
    return sum(1 for _ in stripe_client().v1.payment_intents.list(params={"limit": 100}).auto_paging_iter())


def _shopper_with_order():
    me = make_user()
    make_address(me)
    return me, buy(sale=make_sale(), user=me)


def _refused(response, words: str) -> None:
    assert response.status_code == 429, response.content
    assert 0 < int(response["Retry-After"]) <= 3600
    assert words in response.content.decode()


def test_the_api_refuses_one_attempt_too_many_and_stripe_hears_nothing(ratelimit_clock):
    me, order = _shopper_with_order()
    api = APIClient()
    api.force_login(me)
    for _ in range(ATTEMPTS_PER_ORDER):
        assert api.post(f"/api/v1/orders/{order.order_no}/pay", {"method": "stripe"}, format="json").status_code == 200
    intents = _intents_at_stripe()
    refused = api.post(f"/api/v1/orders/{order.order_no}/pay", {"method": "stripe"}, format="json")
    _refused(refused, "too many times")
    assert refused.json()["code"] == 500429
    assert int(refused["Retry-After"]) <= ATTEMPTS_WINDOW.total_seconds() + 1
    assert Payment.objects.filter(order=order).count() == ATTEMPTS_PER_ORDER and _intents_at_stripe() == intents


def test_the_page_refuses_too_with_the_same_words(client):
    me, order = _shopper_with_order()
    client.force_login(me)
    for _ in range(ATTEMPTS_PER_ORDER):
        assert client.post(f"/orders/{order.order_no}/pay", {"method": "alipay"}).status_code == 302
    _refused(client.post(f"/orders/{order.order_no}/pay", {"method": "alipay"}), "too many times")
    _refused(client.post(f"/orders/{order.order_no}/pay", {"method": "alipay"}, **JSON), "too many times")
    assert Payment.objects.filter(order=order).count() == ATTEMPTS_PER_ORDER


def test_attempts_count_again_once_the_window_has_passed(client):
    me, order = _shopper_with_order()
    client.force_login(me)
    for _ in range(ATTEMPTS_PER_ORDER):
        client.post(f"/orders/{order.order_no}/pay", {"method": "alipay"})
    Payment.objects.filter(order=order).update(created_at=timezone.now() - ATTEMPTS_WINDOW - timedelta(seconds=1))
    assert client.post(f"/orders/{order.order_no}/pay", {"method": "alipay"}).status_code == 302


def test_card_testing_on_one_attempt_stops_before_the_bank(client, ratelimit_clock):
    """Declined cards one after another on one attempt: the try after the last allowed one,
    even with a good card, never reaches Stripe, and the order stays unpaid."""
    me, order = _shopper_with_order()
    client.force_login(me)
    client.post(f"/orders/{order.order_no}/pay", {"method": "stripe"})
    payment = Payment.objects.get(order=order)
    url = f"/orders/{order.order_no}/pay/{payment.trade_no}/card"
    for _ in range(_tries(CARD_TRIES_PER_ATTEMPT)):
        declined = client.post(url, {"token": _card_token(DECLINED)}, content_type="application/json", **JSON)
        assert declined.status_code == 409 and "not accepted" in declined.json()["msg"]
    good = _card_token(GOOD)
    refused = client.post(url, {"token": good}, content_type="application/json", **JSON)
    _refused(refused, "Too many card tries")
    assert refused.json()["code"] == 500429
    # Had the token gone on, its card would be the intent's payment method now.
    good_card = stripe_client().v1.tokens.retrieve(good).card.id
    assert stripe_client().v1.payment_intents.retrieve(payment.provider_ref).payment_method != good_card
    assert Order.objects.get(pk=order.pk).status == OrderStatus.UNPAID


def test_a_shopper_trying_cards_across_orders_is_stopped_too(ratelimit_clock):
    """New attempts, new orders: the shopper's own count still stops the tries (the API here,
    sharing the page's count)."""
    me = make_user()
    make_address(me)
    api = APIClient()
    api.force_login(me)
    per_attempt, per_shopper = _tries(CARD_TRIES_PER_ATTEMPT), _tries(CARD_TRIES_PER_SHOPPER)
    answers = []
    while len(answers) <= per_shopper:
        order = buy(sale=make_sale(), user=me)
        started = api.post(f"/api/v1/orders/{order.order_no}/pay", {"method": "stripe"}, format="json")
        trade_no = started.json()["data"]["tradeNo"]
        for _ in range(min(per_attempt, per_shopper + 1 - len(answers))):
            answers.append(
                api.post(
                    f"/api/v1/orders/{order.order_no}/payments/{trade_no}/card",
                    {"token": _card_token(DECLINED)},
                    format="json",
                )
            )
    assert [answer.status_code for answer in answers] == [409] * per_shopper + [429]
    _refused(answers[-1], "Too many card tries")
