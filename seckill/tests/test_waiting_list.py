"""A draw's waiting list answered from Redis (seckill.waiting_list, docs/waiting-list.md), on
real PostgreSQL and Redis: each shopper's place equals a recomputation from what /seckill/draw
publishes, it moves as offers ahead are made, expire or are passed over, the wait ends "sold
out" once every unit is paid for, and a shopper's polls after the first never reach Django."""

import hashlib
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from orders.models import Order
from orders.payments.closing import orders_expire_unpaid
from orders.services import REASON_SHOPPER, order_cancel
from sales.draw_waiting import waiting_list
from sales.models import SaleDraw, SaleDrawOffer
from sales.sale_state import keys
from seckill.services import draw as draw_service
from seckill.services import writer
from seckill_site.redis import client as redis_client
from testutils.draws import enter_all, window_over
from testutils.factories.orders import pay
from testutils.factories.sales import make_draw_sale
from testutils.factories.users import make_users
from testutils.wsgi import REQUEST_ID, answered_below_django, call, environ
from waitingroom.wait_ticket import wait_cookie

pytestmark = pytest.mark.django_db


def drawn_and_written(*, stock: int, entrants: int):
    sale = make_draw_sale(stock=stock)
    users = make_users(entrants)
    enter_all(users, sale)
    window_over(sale)
    assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"
    writer.sale_flush(sale_id=sale.pk)
    return sale, {user.pk: user for user in users}


def recomputed_places(data: dict) -> dict[int, int]:
    """From /seckill/draw's JSON alone: each entrant still waiting and their place, 1 the next
    offered (the entrants who did not win, in the ranking, after the last one offered)."""
    ranking = sorted(data["entrantIds"], key=lambda i: (hashlib.sha256(f"{data['seed']}:{i}".encode()).hexdigest(), i))
    waiting = [(rank, i) for rank, i in enumerate(ranking, start=1) if i not in data["winnerIds"]]
    last = max((offer["rank"] for offer in data["offers"]), default=0)
    return {i: n for n, (_rank, i) in enumerate([w for w in waiting if w[0] > last], start=1)}


def positions(client, sale, users) -> dict[int, int]:
    found = {}
    for user_id, user in users.items():
        client.force_login(user)
        data = client.get(f"/seckill/waitingList/{sale.pk}").json()["data"]
        if data["state"] == "waiting":
            found[user_id] = data["position"]
            assert data["aheadOfYou"] == data["position"] - 1
    return found


def published(client, sale) -> dict:
    return client.get("/seckill/draw", {"goodsId": sale.pk}).json()["data"]


def cancel(order_id: int, capture, reason: str = REASON_SHOPPER) -> None:
    with capture(execute=True):
        assert order_cancel(order_id=order_id, reason=reason)


def live_order(sale, user_id: int) -> Order:
    return Order.objects.get(seckill__sale=sale, seckill__user_id=user_id, seckill__live=True)


def test_places_equal_the_published_ranking_and_move_as_offers_ahead_are_made_and_expire(
    client, flushes, django_capture_on_commit_callbacks
):
    sale, users = drawn_and_written(stock=2, entrants=9)
    draw = SaleDraw.objects.get(sale=sale)
    before = positions(client, sale, users)
    assert before == recomputed_places(published(client, sale)) and sorted(before.values()) == list(range(1, 8))

    # A winner gives up: the unit goes to #1, everyone behind moves up one.
    cancel(live_order(sale, draw.winner_ids[0]).pk, django_capture_on_commit_callbacks)
    offer = SaleDrawOffer.objects.get(draw=draw)
    after_offer = positions(client, sale, users)
    assert after_offer == recomputed_places(published(client, sale))
    assert after_offer == {user_id: place - 1 for user_id, place in before.items() if place > 1}
    client.force_login(users[offer.user_id])
    assert client.get(f"/seckill/waitingList/{sale.pk}").json()["data"]["state"] == "offered"

    # The offer expires unpaid: the unit goes to the next, who moves from #1 to "offered".
    Order.objects.filter(pk=offer.order_id).update(pay_deadline=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert orders_expire_unpaid() == 1
    after_expiry = positions(client, sale, users)
    assert after_expiry == recomputed_places(published(client, sale))
    assert after_expiry == {user_id: place - 1 for user_id, place in after_offer.items() if place > 1}
    client.force_login(users[offer.user_id])
    assert client.get(f"/seckill/waitingList/{sale.pk}").json()["data"]["state"] == "passed"


def test_an_entrant_ahead_holding_a_unit_is_passed_over_and_the_place_moves_by_two(
    client, flushes, django_capture_on_commit_callbacks
):
    sale, users = drawn_and_written(stock=1, entrants=5)
    draw = SaleDraw.objects.get(sale=sale)
    before = positions(client, sale, users)
    first, second, third = sorted(before, key=before.get)[:3]
    redis_client().sadd(keys.buyers(sale.pk), first)  # took a unit the merchant added: passed over
    cancel(live_order(sale, draw.winner_ids[0]).pk, django_capture_on_commit_callbacks)
    after = positions(client, sale, users)
    assert after == recomputed_places(published(client, sale))
    assert second not in after and after[third] == 1


def test_the_wait_ends_sold_out_once_every_unit_is_paid_for(client, flushes, django_capture_on_commit_callbacks):
    sale, users = drawn_and_written(stock=2, entrants=5)
    draw = SaleDraw.objects.get(sale=sale)
    waiting_user = next(user for user_id, user in users.items() if user_id not in draw.winner_ids)
    client.force_login(waiting_user)
    url = f"/seckill/waitingList/{sale.pk}"
    data = client.get(url).json()["data"]
    assert data["state"] == "waiting" and data["unitsUnpaid"] == 2
    with django_capture_on_commit_callbacks(execute=True):
        pay(live_order(sale, draw.winner_ids[0]))
    data = client.get(url).json()["data"]
    assert data["state"] == "waiting" and data["unitsUnpaid"] == 1  # one may still come back
    with django_capture_on_commit_callbacks(execute=True):
        pay(live_order(sale, draw.winner_ids[1]))
    data = client.get(url).json()["data"]
    assert data["state"] == "sold_out" and data["position"] is None and data["unitsUnpaid"] == 0
    client.logout()
    assert client.get(url).json()["data"]["state"] == "sold_out"  # the public counter says it too


def test_a_winner_is_not_listed_and_a_visitor_gets_the_public_counter(client, flushes):
    sale, users = drawn_and_written(stock=2, entrants=6)
    draw = SaleDraw.objects.get(sale=sale)
    client.force_login(users[draw.winner_ids[0]])
    mine = client.get(f"/seckill/waitingList/{sale.pk}")
    assert mine.json()["data"]["state"] == "not_listed" and wait_cookie(sale.pk) not in mine.cookies
    client.logout()
    data = client.get(f"/seckill/waitingList/{sale.pk}").json()["data"]
    assert data == {
        "sale": sale.pk, "state": "open", "position": None, "aheadOfYou": None, "length": 4, "offered": 0,
        "waiting": 4, "unitsUnpaid": 2, "refreshSeconds": 5,
    }  # fmt: skip


def test_a_list_redis_lost_is_published_again_by_the_first_poll(client, flushes):
    sale, users = drawn_and_written(stock=1, entrants=4)
    for key in (keys.waitlist(sale.pk), keys.waitlist_places(sale.pk)):
        redis_client().delete(key)
    data = client.get(f"/seckill/waitingList/{sale.pk}").json()["data"]
    assert data["length"] == 3 and data["state"] == "open"


@pytest.mark.parametrize(("url", "status"), [("/seckill/waitingList/x", 400), ("/seckill/waitingList/0", 400),
                                             ("/seckill/waitingList/99999999", 404)])  # fmt: skip
def test_bad_sale_ids_are_clear_4xx(client, url, status):
    response = client.get(url)
    assert response.status_code == status and response.json()["code"] != 0


def test_a_sale_without_a_draw_has_no_waiting_list(client):
    from testutils.factories.sales import make_sale

    response = client.get(f"/seckill/waitingList/{make_sale(stock=1).pk}")
    assert response.status_code == 404


def test_the_fast_path_answers_a_shoppers_polls_as_django_does_without_reaching_it(
    apps, client, flushes, django_capture_on_commit_callbacks
):
    """Only force_login here, never a test-client request: those connect Django's
    close_old_connections again, which the `apps` fixture keeps off for its requests."""
    django, fast = apps
    sale, users = drawn_and_written(stock=1, entrants=5)
    draw = SaleDraw.objects.get(sale=sale)
    last = waiting_list(draw)[-1][1]
    client.force_login(users[last])
    session = f"sessionid={client.cookies['sessionid'].value}"
    url = f"/seckill/waitingList/{sale.pk}"
    status, headers, _body = call(django, environ("GET", url, HTTP_COOKIE=session))
    ticket = next(value.split(";")[0] for name, value in headers if name == "Set-Cookie" and "seckill_wait_" in value)
    env = environ("GET", url, HTTP_COOKIE=f"{session}; {ticket}")
    call(fast, env)  # the first is Django's, its headers learnt
    with answered_below_django(fast, expected=True):
        status, headers, body = call(fast, env)
    assert (status, headers, body) == call(django, env)
    assert ("X-Request-ID", REQUEST_ID) in headers
    assert json.loads(body)["data"]["position"] == 4

    cancel(live_order(sale, draw.winner_ids[0]).pk, django_capture_on_commit_callbacks)
    with answered_below_django(fast, expected=True):
        assert json.loads(call(fast, env)[2])["data"]["position"] == 3
    # Another session's cookie with the ticket goes to Django.
    with answered_below_django(fast, expected=False):
        call(fast, dict(env, HTTP_COOKIE=f"sessionid=other; {ticket}"))
