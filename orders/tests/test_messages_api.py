"""Writing to the merchant through the REST API: the order page's rules on the order's thread,
answering the order (with its `messages`) as GET orders/<no> does. Refusals are the page's own
(code and words), the page and the API share one rate limit, bad bodies are a 4xx that keeps
nothing, another shopper's order is a 404 and nobody logged in a 401."""

import pytest

from orders.contact.services import UNANSWERED_MAX, order_message_answer, order_message_ask
from orders.models import Order, OrderMessage
from seckill_site.api import JSON_MAX_BYTES
from testutils.clients import api
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user
from users.tokens import api_token_issue

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}


def _paid(user) -> Order:
    return pay(buy(sale=make_sale(goods=make_goods(owner=make_merchant())), user=user))


def _url(order: Order) -> str:
    return f"/api/v1/orders/{order.order_no}/messages"


@pytest.fixture
def me():
    return make_user()


@pytest.fixture
def mine(me):
    """My API client, with a token as a mobile app holds it."""
    return api(api_token_issue(user_id=me.pk))


def test_the_shopper_writes_and_reads_the_answer_on_the_order(mine, me):
    order = _paid(me)
    response = mine.post(_url(order), {"text": "Is it <b>red</b>?  \r\n\r\n\r\nOr blue 有吗"}, format="json")
    assert response.status_code == 200 and response.json()["code"] == 0
    data = response.json()["data"]
    assert data == mine.get(f"/api/v1/orders/{order.order_no}").json()["data"]
    [message] = data["messages"]
    assert (message["fromMerchant"], message["text"]) == (False, "Is it <b>red</b>?\n\nOr blue 有吗")
    kept = OrderMessage.objects.get(order=order)
    assert (kept.author_id, kept.from_merchant, kept.answered_at) == (me.pk, False, None)

    order_message_answer(order_id=order.pk, text="Red, yes", actor_id=order.goods.owner_id)
    thread = mine.get(f"/api/v1/orders/{order.order_no}").json()["data"]["messages"]
    assert [(m["fromMerchant"], m["text"]) for m in thread] == [(False, kept.text), (True, "Red, yes")]
    listed = mine.get("/api/v1/orders").json()["data"]["results"]
    assert [row["messages"] for row in listed] == [thread]


def test_a_message_the_order_cannot_take_is_refused_as_the_page_refuses_it(client, mine, me):
    client.force_login(me)
    unpaid = buy(sale=make_sale(), user=me)
    waiting = _paid(me)
    for n in range(UNANSWERED_MAX):
        order_message_ask(order_id=waiting.pk, text=f"Hello {n}", actor_id=me.pk)
    for order in (unpaid, waiting):
        kept = OrderMessage.objects.count()
        response = mine.post(_url(order), {"text": "Hi"}, format="json")
        answer = response.json()
        assert response.status_code == 409 and answer["code"] == 500601 and answer["data"] is None, answer
        page = client.post(f"/orders/{order.order_no}/messages", {"text": "Hi"}, **JSON)
        assert (page.status_code, page.json()) == (409, answer)
        assert OrderMessage.objects.count() == kept
    assert "once the order is paid" in mine.post(_url(unpaid), {"text": "Hi"}, format="json").json()["msg"]


def test_the_page_and_the_api_share_one_rate_limit_that_bad_bodies_do_not_use(client, mine, me, ratelimit_clock):
    client.force_login(me)
    orders = [_paid(me) for _ in range(2)]
    for _ in range(8):  # refused before they are counted, as on the page
        assert mine.post(_url(orders[0]), {"text": ""}, format="json").status_code == 400
    for n in range(3):
        assert client.post(f"/orders/{orders[n % 2].order_no}/messages", {"text": f"Page {n}"}).status_code == 302
    for n in range(2):
        assert mine.post(_url(orders[n % 2]), {"text": f"App {n}"}, format="json").status_code == 200
    refused = mine.post(_url(orders[1]), {"text": "Once more"}, format="json")
    assert refused.status_code == 429 and refused.json()["code"] == 500429
    assert "wait a few minutes" in refused.json()["msg"] and 0 < int(refused["Retry-After"]) <= 600
    page = client.post(f"/orders/{orders[1].order_no}/messages", {"text": "Once more"}, **JSON)
    assert page.status_code == 429 and page.json()["msg"] == refused.json()["msg"]
    assert OrderMessage.objects.count() == 5


BAD_BODIES = [
    {},
    {"message": "Hi"},
    {"text": ""},
    {"text": " \n\t\r\n "},
    {"text": None},
    {"text": 5},
    {"text": True},
    {"text": ["Hi"]},
    {"text": {"text": "Hi"}},
    {"text": "x" * 501},
    {"text": "null \x00 byte"},
    {"text": "bell \x07"},
    {"text": "spoof \u202e txt.exe"},
    {"text": "isolate \u2066 x"},
    [{"text": "Hi"}],
    "Hi",
    42,
]


@pytest.mark.parametrize("body", BAD_BODIES, ids=[f"body{n}" for n in range(len(BAD_BODIES))])
def test_a_bad_body_is_a_400_that_keeps_nothing(mine, me, body):
    order = _paid(me)
    response = mine.post(_url(order), body, format="json")
    assert response.status_code == 400 and response.json()["code"] == 500101, response.content[:300]
    assert not OrderMessage.objects.exists()


@pytest.mark.parametrize(
    "raw, content_type, status",
    [
        (b"text=Hi", "application/json", 400),  # no JSON
        (b'{"text": "Hi"', "application/json", 400),  # cut short
        (b'{"text": "\xff"}', "application/json", 400),  # no UTF-8
        (b"[" * 40 + b"]" * 40, "application/json", 400),  # nested too deep
        (b'{"text": "' + b"x" * JSON_MAX_BYTES + b'"}', "application/json", 413),
        (b"text=Hi", "application/x-www-form-urlencoded", 415),
        (b"Hi", "text/plain", 415),
    ],
    ids=["form-as-json", "truncated", "not-utf8", "too-deep", "oversized", "form", "text"],
)
def test_a_body_that_is_no_json_object_is_refused_and_keeps_nothing(mine, me, raw, content_type, status):
    order = _paid(me)
    response = mine.generic("POST", _url(order), raw, content_type=content_type)
    assert response.status_code == status and response.json()["code"] != 0, response.content[:300]
    assert not OrderMessage.objects.exists()


def test_another_shoppers_order_is_a_404_and_nobody_logged_in_a_401(mine):
    theirs = _paid(make_user())
    for client, status, code in ((mine, 404, 500600), (api(), 401, 500210)):
        response = client.post(_url(theirs), {"text": "Hi"}, format="json")
        assert (response.status_code, response.json()["code"]) == (status, code)
    for malformed in ("12%00", "x" * 40, "1" * 33):
        assert mine.post(f"/api/v1/orders/{malformed}/messages", {"text": "Hi"}, format="json").status_code == 404
    assert mine.get(_url(theirs)).status_code == 405
    assert not OrderMessage.objects.exists()
