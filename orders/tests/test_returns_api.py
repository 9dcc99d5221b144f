"""After-sales in the REST API: ask to send an order back, withdraw the return, give the parcel's
carrier and tracking number, each answering the order as GET orders/<no> does. Every refusal
is the page's own (code and words); bad bodies are a 4xx that change nothing; another shopper's
order is a 404 and nobody logged in a 401."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from orders.fulfilment.returns import return_parcel_received, return_request_approve, return_request_open
from orders.fulfilment.services import order_deliver
from orders.models import Order, OrderEvent, ReturnRequest, Shipment
from seckill_site.api import JSON_MAX_BYTES
from testutils.clients import api
from testutils.factories.orders import buy, pay, return_approved, shipped
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from users.tokens import api_token_issue

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}


def _state(order: Order) -> tuple:
    """All a call could have changed about the order."""
    requests = ReturnRequest.objects.filter(order=order).order_by("pk")
    return (
        Order.objects.get(pk=order.pk).status,
        list(requests.values("status", "reason", "carrier", "tracking_no", "sent_at")),
        OrderEvent.objects.filter(order=order).count(),
    )


@pytest.fixture
def me():
    return make_user()


@pytest.fixture
def mine(me):
    """My API client, with a token as a mobile app holds it."""
    return api(api_token_issue(user_id=me.pk))


def _url(order: Order, tail: str = "return-request") -> str:
    return f"/api/v1/orders/{order.order_no}/{tail}"


def test_a_return_is_asked_sent_back_and_refunded_answering_the_order_each_time(mine, me):
    order = shipped(user=me)
    asked = mine.post(_url(order), {"reason": "damaged", "detail": "cracked"}, format="json")
    assert asked.status_code == 200 and asked.json()["code"] == 0
    data = asked.json()["data"]
    assert data == mine.get(f"/api/v1/orders/{order.order_no}").json()["data"]
    returned = data["returnRequest"]
    assert (returned["status"], returned["reason"]) == ("open", "It arrived damaged or does not work: cracked")

    request = ReturnRequest.objects.get(order=order)
    return_request_approve(order_id=order.pk, request_id=request.pk, return_address="Mia, 1 Dock Rd", actor_id=None)
    sent = mine.post(_url(order, "return-request/parcel"), {"carrier": "zto", "trackingNo": "zt 77"}, format="json")
    assert sent.status_code == 200
    returned = sent.json()["data"]["returnRequest"]
    assert (returned["status"], returned["carrierName"], returned["trackingNo"]) == ("sent", "ZTO Express", "ZT77")
    assert returned["returnAddress"] == "Mia, 1 Dock Rd" and returned["sentAt"]
    assert sent.json()["data"] == mine.get(f"/api/v1/orders/{order.order_no}").json()["data"]

    return_parcel_received(order_id=order.pk, request_id=request.pk, actor_id=None)
    done = mine.get(f"/api/v1/orders/{order.order_no}").json()["data"]
    assert done["status"] == "refunded" and done["returnRequest"]["refundedAt"]


def test_a_delivered_order_goes_back_too_and_other_reasons_need_words(mine, me):
    order = shipped(user=me)
    order_deliver(order_id=order.pk, actor_id=me.pk)
    asked = mine.post(_url(order), {"reason": "other", "detail": "  Too big  "}, format="json")
    assert asked.status_code == 200
    assert asked.json()["data"]["returnRequest"]["reason"] == "Another reason: Too big"


def test_a_return_is_withdrawn_while_the_page_allows_it(mine, me):
    order = shipped(user=me)
    mine.post(_url(order), {"reason": "wrong item"}, format="json")
    withdrawn = mine.delete(_url(order))
    assert withdrawn.status_code == 200 and withdrawn.json()["data"]["returnRequest"]["status"] == "withdrawn"
    assert withdrawn.json()["data"] == mine.get(f"/api/v1/orders/{order.order_no}").json()["data"]

    return_approved(order)  # approved, not sent yet: still the shopper's to take back
    assert mine.delete(_url(order)).json()["data"]["returnRequest"]["status"] == "withdrawn"


def test_a_move_the_order_cannot_make_is_refused_as_the_page_refuses_it(client, mine, me, settings):
    settings.RETURN_WINDOW_DAYS = 7
    client.force_login(me)
    unpaid = buy(sale=make_sale(), user=me)
    paid = pay(buy(sale=make_sale(), user=me))
    late = shipped(user=me)
    order_deliver(order_id=late.pk, actor_id=me.pk)
    Shipment.objects.filter(order=late).update(delivered_at=timezone.now() - timedelta(days=8))
    asked, sent = shipped(user=me), shipped(user=me)
    return_request_open(order_id=asked.pk, reason="damaged", actor_id=me.pk)
    return_approved(sent)
    mine.post(_url(sent, "return-request/parcel"), {"carrier": "sf", "trackingNo": "SF9"}, format="json")
    ask = ("POST", "return-request", {"reason": "damaged"}, "return-request", {"reason": "damaged"})
    withdraw = ("DELETE", "return-request", None, "return-request/withdraw", {})
    parcel = ("POST", "return-request/parcel", {"carrier": "jd", "trackingNo": "JD1"}, "return-request/parcel",
              {"carrier": "jd", "tracking_no": "JD1"})  # fmt: skip
    # (the order, then the API's call and the page's twin of it)
    cases = [(unpaid, ask), (paid, ask), (late, ask), (asked, ask), (paid, withdraw), (sent, withdraw),
             (asked, parcel), (sent, parcel)]  # fmt: skip
    for order, (method, tail, body, page_tail, form) in cases:
        before = _state(order)
        response = mine.generic(method, _url(order, tail), json.dumps(body) if body else "", "application/json")
        answer = response.json()
        assert response.status_code == 409 and answer["code"] == 500601 and answer["data"] is None, (tail, answer)
        page = client.post(f"/orders/{order.order_no}/{page_tail}", form, **JSON)
        assert (page.status_code, page.json()) == (409, answer), (order.status, tail)
        assert _state(order) == before, (order.status, tail)
    assert "ended 7 days after delivery" in mine.post(_url(late), ask[2], format="json").json()["msg"]
    assert "approved" in mine.post(_url(asked, "return-request/parcel"), parcel[2], format="json").json()["msg"]


BAD_ASKS = [
    {},
    {"detail": "cracked"},
    {"reason": "whim"},
    {"reason": "other"},
    {"reason": "other", "detail": "   "},
    {"reason": None},
    {"reason": 5},
    {"reason": ["damaged"]},
    {"reason": {"damaged": True}},
    {"reason": "damaged", "detail": "x" * 151},
    {"reason": "damaged", "detail": ["cracked"]},
    {"reason": "damaged", "detail": None},
    {"reason": "damaged\x00"},
    {"reason": "damaged", "detail": "a\x00b"},
    [{"reason": "damaged"}],
    "damaged",
]
BAD_PARCELS = [
    {},
    {"carrier": "sf"},
    {"trackingNo": "SF1"},
    {"carrier": "nope", "trackingNo": "SF1"},
    {"carrier": 1, "trackingNo": "SF1"},
    {"carrier": None, "trackingNo": "SF1"},
    {"carrier": "sf", "trackingNo": ""},
    {"carrier": "sf", "trackingNo": "   "},
    {"carrier": "sf", "trackingNo": "not a number!"},
    {"carrier": "sf", "trackingNo": "顺丰123"},
    {"carrier": "sf", "trackingNo": "A" * 41},
    {"carrier": "sf", "trackingNo": "A" * 61},
    {"carrier": "sf", "trackingNo": ["SF1"]},
    {"carrier": "sf", "trackingNo": True},
    {"carrier": "sf", "trackingNo": 12345},
    {"carrier": "sf", "trackingNo": "SF\x001"},
    {"carrier": "sf", "tracking_no": "SF1"},
    ["sf", "SF1"],
]


@pytest.mark.parametrize("body", BAD_ASKS, ids=[f"ask{n}" for n in range(len(BAD_ASKS))])
def test_a_bad_request_body_is_a_400_that_asks_nothing(mine, me, body):
    order = shipped(user=me)
    before = _state(order)
    response = mine.post(_url(order), body, format="json")
    assert response.status_code == 400 and response.json()["code"] == 500101, response.content[:300]
    assert _state(order) == before


@pytest.mark.parametrize("body", BAD_PARCELS, ids=[f"parcel{n}" for n in range(len(BAD_PARCELS))])
def test_a_bad_parcel_body_is_a_400_that_sends_nothing(mine, me, body):
    order = shipped(user=me)
    return_approved(order)
    before = _state(order)
    response = mine.post(_url(order, "return-request/parcel"), body, format="json")
    assert response.status_code == 400 and response.json()["code"] == 500101, response.content[:300]
    assert _state(order) == before


@pytest.mark.parametrize("tail", ["return-request", "return-request/parcel"])
@pytest.mark.parametrize(
    "raw, content_type, status",
    [
        (b"reason=damaged", "application/json", 400),  # no JSON
        (b'{"reason": "damaged"', "application/json", 400),  # cut short
        (b"\xff\xfe{}", "application/json", 400),  # no UTF-8
        (b"[" * 40 + b"]" * 40, "application/json", 400),  # nested too deep
        (b'{"reason": "damaged", "detail": "' + b"x" * JSON_MAX_BYTES + b'"}', "application/json", 413),
        (b"reason=damaged&carrier=sf&tracking_no=SF1", "application/x-www-form-urlencoded", 415),
        (b"damaged", "text/plain", 415),
    ],
    ids=["form-as-json", "truncated", "not-utf8", "too-deep", "oversized", "form", "text"],
)
def test_a_body_that_is_no_json_object_is_refused_and_changes_nothing(mine, me, tail, raw, content_type, status):
    order = shipped(user=me)
    if tail.endswith("parcel"):
        return_approved(order)
    before = _state(order)
    response = mine.generic("POST", _url(order, tail), raw, content_type=content_type)
    assert response.status_code == status and response.json()["code"] != 0, response.content[:300]
    assert _state(order) == before


def test_another_shoppers_order_is_a_404_and_nobody_logged_in_a_401(mine, me):
    theirs = shipped(user=make_user())
    asked = shipped(user=make_user())
    return_approved(asked)
    parcel = {"carrier": "sf", "trackingNo": "SF1"}
    calls = [
        ("post", theirs, "return-request", {"reason": "damaged"}),
        ("delete", asked, "return-request", None),
        ("post", asked, "return-request/parcel", parcel),
    ]
    for method, order, tail, body in calls:
        before = _state(order)
        for client, status, code in ((mine, 404, 500600), (api(), 401, 500210)):
            response = getattr(client, method)(_url(order, tail), body, format="json")
            assert (response.status_code, response.json()["code"]) == (status, code), (method, tail)
        assert _state(order) == before
    for malformed in ("12%00", "x" * 40, "1" * 33):
        response = mine.post(f"/api/v1/orders/{malformed}/return-request", {"reason": "damaged"}, format="json")
        assert response.status_code == 404
    assert not ReturnRequest.objects.filter(order__user=me).exists()


def test_the_return_request_answers_no_get(mine, me):
    order = shipped(user=me)
    assert mine.get(_url(order)).status_code == 405
    assert mine.get(_url(order, "return-request/parcel")).status_code == 405
    assert json.loads(mine.put(_url(order), {"reason": "damaged"}, format="json").content)["code"] == 500405
    assert not ReturnRequest.objects.exists()
