"""Units that come back after a draw go down its published ranking (orders.reoffer,
docs/draw.md "Units that come back"), on real PostgreSQL and Redis: the offers equal a
recomputation from what /seckill/draw publishes, a unit is offered once and sold once, no
script gets one while anyone waits, and each offer is texted once."""

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from orders.models import Order, OrderStatus, SeckillOrder
from orders.payments.closing import orders_expire_unpaid
from orders.services import REASON_SHOPPER, order_cancel
from sales import sale_state
from sales.draw_waiting import waiting_list
from sales.models import OfferOutcome, Sale, SaleDraw, SaleDrawOffer
from sales.sale_state import keys
from seckill import selectors
from seckill.services import draw as draw_service
from seckill.services import draw_notices, writer
from seckill.services.reconcile import sale_reconcile
from seckill_site.codes import Code
from seckill_site.redis import client as redis_client
from testutils.draws import attempt, enter_all, window_over
from testutils.factories.orders import pay
from testutils.factories.sales import make_draw_sale
from testutils.factories.users import make_users
from users import sms


def drawn_and_written(*, stock: int, entrants: int):
    """A draw sale drawn among `entrants`, its winners' orders written."""
    sale = make_draw_sale(stock=stock)
    users = make_users(entrants)
    enter_all(users, sale)
    window_over(sale)
    assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"
    writer.sale_flush(sale_id=sale.pk)
    return sale, users


def published_recomputation(data: dict) -> list[tuple[int, int]]:
    """From the published JSON alone: (rank, user id) of each offer the rules call for, in order,
    as docs/draw.md's lines compute them."""
    ranking = sorted(data["entrantIds"], key=lambda i: (hashlib.sha256(f"{data['seed']}:{i}".encode()).hexdigest(), i))
    assert ranking[: data["units"]] == data["winnerIds"]
    waiting = [(place, i) for place, i in enumerate(ranking, start=1) if i not in data["winnerIds"]]
    return waiting[: len(data["offers"])]


def live_order(sale: Sale, user_id: int) -> Order:
    return Order.objects.get(seckill__sale=sale, seckill__user_id=user_id, seckill__live=True)


def cancel(order_id: int, capture, reason: str = REASON_SHOPPER) -> bool:
    with capture(execute=True):
        return order_cancel(order_id=order_id, reason=reason)


@pytest.mark.django_db
def test_returned_units_are_offered_in_the_published_order(client, flushes, django_capture_on_commit_callbacks):
    sale, _users = drawn_and_written(stock=3, entrants=10)
    draw = SaleDraw.objects.get(sale=sale)
    for winner in draw.winner_ids:  # every winner gives up
        assert cancel(live_order(sale, winner).pk, django_capture_on_commit_callbacks)

    data = client.get("/seckill/draw", {"goodsId": sale.pk}).json()["data"]
    offers = data["offers"]
    assert [(o["rank"], o["userId"]) for o in offers] == published_recomputation(data)
    assert len(offers) == 3 and {o["outcome"] for o in offers} == {"open"}
    # Each offered entrant holds an order with their own time to pay, answered from Redis.
    for offer in offers:
        order = live_order(sale, offer["userId"])
        assert order.status == OrderStatus.UNPAID
        assert order.pay_deadline == SaleDrawOffer.objects.get(order_id=order.pk).expires_at
        assert selectors.seckill_result(user_id=offer["userId"], sale_id=sale.pk) == order.pk
        assert redis_client().sismember(keys.buyers(sale.pk), str(offer["userId"]))
    # The unit never went through the stock: nothing to buy in either store.
    assert int(redis_client().get(keys.stock(sale.pk))) == 0 and Sale.objects.get(pk=sale.pk).stock_count == 0
    assert redis_client().scard(keys.buyers(sale.pk)) == 3
    assert sale_reconcile(sale_id=sale.pk, repair=True).clean


@pytest.mark.django_db
def test_an_offer_expiring_unpaid_goes_to_the_next_and_a_paid_one_is_published_paid(
    client, flushes, django_capture_on_commit_callbacks
):
    sale, _users = drawn_and_written(stock=2, entrants=6)
    draw = SaleDraw.objects.get(sale=sale)
    first, second = draw.winner_ids
    assert cancel(live_order(sale, first).pk, django_capture_on_commit_callbacks)
    offered = SaleDrawOffer.objects.get(draw=draw)
    Order.objects.filter(pk=offered.order_id).update(pay_deadline=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert orders_expire_unpaid() == 1
    pay(live_order(sale, second))
    nxt = SaleDrawOffer.objects.filter(draw=draw).exclude(pk=offered.pk).get()
    pay(Order.objects.get(pk=nxt.order_id))

    data = client.get("/seckill/draw", {"goodsId": sale.pk}).json()["data"]
    assert [(o["rank"], o["userId"], o["outcome"]) for o in data["offers"]] == [
        (rank, user_id, outcome)
        for (rank, user_id), outcome in zip(published_recomputation(data), ["expired", "paid"], strict=True)
    ]
    assert not SeckillOrder.objects.filter(sale=sale, user_id=offered.user_id, live=True).exists()


@pytest.mark.django_db
def test_a_unit_returned_twice_is_offered_once_and_a_lost_redis_step_is_mended(
    flushes, django_capture_on_commit_callbacks, monkeypatch
):
    sale, _users = drawn_and_written(stock=2, entrants=6)
    draw = SaleDraw.objects.get(sale=sale)
    order = live_order(sale, draw.winner_ids[0])
    # The process dies after the commit, before Redis heard of the hand-over.
    monkeypatch.setattr(sale_state, "unit_hand_over", lambda **kwargs: None)
    assert cancel(order.pk, django_capture_on_commit_callbacks)
    monkeypatch.undo()
    assert not cancel(order.pk, django_capture_on_commit_callbacks)  # a second cancel changes nothing
    offer = SaleDrawOffer.objects.get(draw=draw)
    assert SaleDrawOffer.objects.count() == 1
    # Redis still counts the old buyer; no unit was ever free, and the offered entrant is answered
    # with their order from the database.
    assert int(redis_client().get(keys.stock(sale.pk))) == 0
    assert selectors.shopper_sale_state(user_id=offer.user_id, sale_id=sale.pk)["orderId"] == offer.order_id
    # The Redis step, late or repeated, moves the buyer once; the reconciler finds nothing to mend.
    step = {
        "sale_id": sale.pk,
        "user_id": order.user_id,
        "order_id": order.pk,
        "request_id": order.seckill.request_id,
        "ticket": sale_state.ticket(sale.pk),
        "to_user_id": offer.user_id,
        "to_order_id": offer.order_id,
    }
    assert sale_state.unit_hand_over(**step) is sale_state.UnitReturn.RETURNED
    assert sale_state.unit_hand_over(**step) is sale_state.UnitReturn.ALREADY
    assert sale_reconcile(sale_id=sale.pk, repair=True).clean
    assert int(redis_client().get(keys.stock(sale.pk))) == 0


@pytest.mark.django_db
def test_a_lost_redis_step_is_mended_by_the_reconciler(flushes, django_capture_on_commit_callbacks, monkeypatch):
    sale, _users = drawn_and_written(stock=2, entrants=6)
    order = live_order(sale, SaleDraw.objects.get(sale=sale).winner_ids[0])
    monkeypatch.setattr(sale_state, "unit_hand_over", lambda **kwargs: None)
    assert cancel(order.pk, django_capture_on_commit_callbacks)
    monkeypatch.undo()
    offer = SaleDrawOffer.objects.get()
    assert not sale_reconcile(sale_id=sale.pk, repair=True).clean  # the buyer set, never the stock
    assert int(redis_client().get(keys.stock(sale.pk))) == 0
    assert redis_client().sismember(keys.buyers(sale.pk), str(offer.user_id))
    assert not redis_client().sismember(keys.buyers(sale.pk), str(order.user_id))


@pytest.mark.django_db
def test_once_everyone_waiting_was_offered_units_go_back_to_the_stock(flushes, django_capture_on_commit_callbacks):
    sale, users = drawn_and_written(stock=2, entrants=3)
    draw = SaleDraw.objects.get(sale=sale)
    assert cancel(live_order(sale, draw.winner_ids[0]).pk, django_capture_on_commit_callbacks)
    (offer,) = SaleDrawOffer.objects.filter(draw=draw)
    assert cancel(offer.order_id, django_capture_on_commit_callbacks)  # the last one waiting says no
    assert SaleDrawOffer.objects.count() == 1
    assert SaleDrawOffer.objects.get().outcome == OfferOutcome.CANCELLED
    assert int(redis_client().get(keys.stock(sale.pk))) == 1 and Sale.objects.get(pk=sale.pk).stock_count == 1
    sale_state.process_marks_clear()
    assert attempt(make_users(1)[0], sale).code is Code.SUCCESS  # first come, first served again


@pytest.mark.django_db
def test_an_entrant_holding_a_unit_is_passed_over_and_published_so(client, flushes, django_capture_on_commit_callbacks):
    sale, _users = drawn_and_written(stock=1, entrants=4)
    draw = SaleDraw.objects.get(sale=sale)
    waiting = [user_id for _rank, user_id in waiting_list(draw)]
    # The next in line bought a unit the merchant added after the draw.
    redis_client().sadd(keys.buyers(sale.pk), waiting[0])
    assert cancel(live_order(sale, draw.winner_ids[0]).pk, django_capture_on_commit_callbacks)
    data = client.get("/seckill/draw", {"goodsId": sale.pk}).json()["data"]
    assert [(o["rank"], o["userId"]) for o in data["offers"]] == published_recomputation(data)
    assert [(o["userId"], o["outcome"]) for o in data["offers"]] == [(waiting[0], "skipped"), (waiting[1], "open")]


@pytest.mark.django_db
def test_the_page_shows_the_waiting_place_and_the_offered_entrant_the_pay_button(
    client, flushes, django_capture_on_commit_callbacks
):
    from testutils.pages import panels

    sale, users = drawn_and_written(stock=1, entrants=5)
    draw = SaleDraw.objects.get(sale=sale)
    waiting = [user_id for _rank, user_id in waiting_list(draw)]
    by_id = {user.pk: user for user in users}

    def shopper(user_id):
        client.force_login(by_id[user_id])
        return client.get("/seckill/shopperState", {"goodsId": sale.pk}).json()["data"]["shopper"]

    assert [shopper(user_id)["waitingPlace"] for user_id in waiting] == [1, 2, 3, 4]
    assert cancel(live_order(sale, draw.winner_ids[0]).pk, django_capture_on_commit_callbacks)
    offered = shopper(waiting[0])
    assert offered["state"] == "ordered" and offered["orderId"] == SaleDrawOffer.objects.get().order_id
    assert [shopper(user_id)["waitingPlace"] for user_id in waiting[1:]] == [1, 2, 3]
    found = panels(client.get(f"/goods/detail/{sale.pk}").content.decode())
    assert 'data-slot="waitingPlace"' in found["not_drawn:entries-closed"]
    assert "on the waiting list" in found["not_drawn:entries-closed"]
    assert "Pay now" in found["ordered"]
    found = panels(client.get(f"/zh-hans/goods/detail/{sale.pk}").content.decode())
    assert "候补" in found["not_drawn:entries-closed"]


@pytest.mark.django_db
def test_each_offer_is_texted_once_in_the_shoppers_language(published, settings, django_capture_on_commit_callbacks):
    settings.SECKILL_ORDER_TTL = 900
    sale = make_draw_sale(stock=2)
    users = make_users(6)
    enter_all(users, sale)
    window_over(sale)
    draw_service.sale_draw(sale_id=sale.pk)
    writer.sale_flush(sale_id=sale.pk)
    assert draw_notices.draw_winners_notify(sale_id=sale.pk) == 2
    draw = SaleDraw.objects.get(sale=sale)
    waiting = [user_id for _rank, user_id in waiting_list(draw)]
    type(users[0]).objects.filter(pk=waiting[1]).update(language="zh-hans")
    for winner in draw.winner_ids:
        assert cancel(live_order(sale, winner).pk, django_capture_on_commit_callbacks)
    assert published.count(("seckill.draw_offers_notify", {"sale_id": sale.pk})) == 2
    assert draw_notices.draw_offers_notify(sale_id=sale.pk) == 2
    assert draw_notices.draw_offers_notify(sale_id=sale.pk) == 0  # a redelivered task
    assert draw_notices.draw_winners_sweep() == 0  # and the sweep
    mobiles = dict(type(users[0]).objects.filter(pk__in=waiting[:2]).values_list("pk", "mobile"))
    texts = {user_id: [m["text"] for m in sms.outbox if m["mobile"] == mobiles[user_id]] for user_id in waiting[:2]}
    offer = SaleDrawOffer.objects.get(user_id=waiting[0])
    by = f"{timezone.localtime(offer.expires_at):%H:%M}"
    assert texts[waiting[0]] == [
        f"A unit of {sale.goods.name} came back: it is yours if you pay by {by} at "
        f"http://127.0.0.1:8000/goods/detail/{sale.pk}"
    ]
    assert len(texts[waiting[1]]) == 1 and "商品" in texts[waiting[1]][0]


@pytest.mark.django_db(transaction=True)
def test_no_script_gets_a_returned_unit_while_anyone_waits(flushes):
    """Winners cancel from threads while scripts outside the list hammer the gate: every unit
    goes to the next entrant in line, none to a script, each once."""
    sale, _users = drawn_and_written(stock=6, entrants=14)
    draw = SaleDraw.objects.get(sale=sale)
    scripts = make_users(8)
    orders = [live_order(sale, winner).pk for winner in draw.winner_ids]
    stop = threading.Event()
    refusals: list = []

    def script(user):
        # Straight at the sale's script, as fast as it answers: a public refusal counts nothing.
        sale_state.path_set(sale_id=sale.pk, user_id=user.pk, path=f"p{user.pk}")
        tries = 0
        while not stop.is_set():
            tries += 1
            reserved = sale_state.reserve(
                sale_id=sale.pk,
                user_id=user.pk,
                path=f"p{user.pk}",
                request_id=f"script-{user.pk}-{tries}",
                trace="",
                flush_mark_ms=5000,
            )
            refusals.append(reserved.refusal)

    def cancel_twice(order_id):
        try:
            return [order_cancel(order_id=order_id, reason=REASON_SHOPPER) for _ in range(2)]
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=len(scripts) + len(orders)) as pool:
        hammering = [pool.submit(script, user) for user in scripts]
        cancelled = list(pool.map(cancel_twice, orders + orders))
        stop.set()
        for done in hammering:
            done.result()
    assert sorted(sum(cancelled, [])).count(True) == len(orders)  # each cancelled once
    writer.sale_flush(sale_id=sale.pk)
    assert refusals and None not in refusals  # every try of every script refused
    offers = list(SaleDrawOffer.objects.filter(draw=draw).order_by("rank"))
    waiting = [user_id for _rank, user_id in waiting_list(draw)]
    assert [offer.user_id for offer in offers] == waiting[: len(orders)]
    holders = set(SeckillOrder.objects.filter(sale=sale, live=True).values_list("user_id", flat=True))
    assert holders == {offer.user_id for offer in offers}
    assert not holders & {user.pk for user in scripts}
    assert int(redis_client().get(keys.stock(sale.pk))) == 0 and Sale.objects.get(pk=sale.pk).stock_count == 0
    assert sale_reconcile(sale_id=sale.pk, repair=True).clean


@pytest.mark.django_db
def test_a_hand_over_arriving_after_its_order_was_cancelled_makes_no_buyer(
    flushes, django_capture_on_commit_callbacks, monkeypatch
):
    """The offer's Redis step is late, and the offered entrant cancelled meanwhile, whose own
    step came first: the late step must not make them a buyer answered with a cancelled order."""
    sale, _users = drawn_and_written(stock=1, entrants=4)
    winner_order = live_order(sale, SaleDraw.objects.get(sale=sale).winner_ids[0])
    late: list[dict] = []
    monkeypatch.setattr(sale_state, "unit_hand_over", lambda **kwargs: late.append(kwargs))
    assert cancel(winner_order.pk, django_capture_on_commit_callbacks)
    first = SaleDrawOffer.objects.get()
    assert cancel(first.order_id, django_capture_on_commit_callbacks)  # its step is late too
    monkeypatch.undo()
    for step in reversed(late):  # the second hand-over's step, then the first's
        assert sale_state.unit_hand_over(**step) is sale_state.UnitReturn.RETURNED
    second = SaleDrawOffer.objects.exclude(pk=first.pk).get()
    buyers = {int(m) for m in redis_client().smembers(keys.buyers(sale.pk))}
    assert buyers == {second.user_id}
    assert selectors.seckill_result(user_id=first.user_id, sale_id=sale.pk) != first.order_id
    assert sale_reconcile(sale_id=sale.pk, repair=True).clean


@pytest.mark.django_db
def test_an_entrant_whose_account_is_gone_is_passed_over(flushes, django_capture_on_commit_callbacks):
    sale, _users = drawn_and_written(stock=1, entrants=4)
    draw = SaleDraw.objects.get(sale=sale)
    waiting = [user_id for _rank, user_id in waiting_list(draw)]
    type(_users[0]).objects.filter(pk=waiting[0]).delete()
    assert cancel(live_order(sale, draw.winner_ids[0]).pk, django_capture_on_commit_callbacks)
    assert list(SaleDrawOffer.objects.values_list("user_id", "outcome")) == [
        (waiting[0], OfferOutcome.SKIPPED),
        (waiting[1], OfferOutcome.OPEN),
    ]
