"""The live view's waiting-room figures, read from the queue engine's keys (the contract in
waitingroom.keys): missing keys read as nothing yet, written ones as the engine meant them."""

import pytest

from seckill_site import redis as shop_redis
from seckill_site.redis import now as redis_now
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant
from testutils.factories.waitingroom import make_room
from waitingroom import keys
from waitingroom.figures import RoomFigures, room_figures

pytestmark = pytest.mark.django_db


def _engine_wrote(sale_id: int) -> None:
    """What the queue engine leaves: 10 arrivals (positions 1..10), 4 let in, 1 gave up."""
    client, now = shop_redis.client(), int(redis_now())
    client.zadd(keys.queue(sale_id), {str(100 + p): p for p in range(1, 11)})
    client.set(keys.head(sale_id), 4)
    client.set(keys.tail(sale_id), 10)
    client.zadd(keys.admitted_log(sale_id), {"101": now - 300, "102": now - 30, "103": now - 5, "104": now})
    client.zadd(keys.waits(sale_id), {"101": 2, "102": 40, "103": 7, "104": 100})
    client.set(keys.abandoned(sale_id), 1)


def test_a_room_the_engine_has_not_touched_reads_as_nothing_yet():
    assert room_figures(987654) == RoomFigures(
        waiting=0,
        head=0,
        tail=0,
        admitted=0,
        admitted_last_minute=0,
        abandoned=0,
        abandonment=None,
        wait_p50=None,
        wait_p99=None,
    )


def test_figures_come_from_the_engines_keys():
    _engine_wrote(41)
    assert room_figures(41) == RoomFigures(
        waiting=6,
        head=4,
        tail=10,
        admitted=4,
        admitted_last_minute=3,
        abandoned=1,
        abandonment=0.2,
        wait_p50=7.0,
        wait_p99=100.0,
    )


def test_the_live_view_shows_the_rooms_cards_and_figures(client, django_capture_on_commit_callbacks):
    merchant = make_merchant()
    sale, plain = (make_sale(goods=make_goods(owner=merchant)) for _ in range(2))
    with django_capture_on_commit_callbacks(execute=True):
        make_room(sale=sale)
    _engine_wrote(sale.pk)
    client.force_login(merchant)
    page = client.get(f"/admin/orders/order/sale/{sale.pk}/live/").content.decode()
    assert 'id="room-waiting"' in page and 'id="room-wait"' in page
    assert 'id="room-waiting"' not in client.get(f"/admin/orders/order/sale/{plain.pk}/live/").content.decode()
    cards = client.get(f"/admin/orders/order/sale/{sale.pk}/live.json").json()["cards"]
    assert cards == {
        "room-state": "on",
        "room-waiting": 6,
        "room-admitted-minute": 3,
        "room-abandoned": "1 (20%)",
        "room-wait": "7 s / 100 s",
    }
    assert client.get(f"/admin/orders/order/sale/{plain.pk}/live.json").json()["cards"] == {}
