"""The queue engine on real Redis and PostgreSQL: the pace, the brake, the published shuffle,
first come first served after it, the cap on passes running, the switches and the end of the
wait. The clock is the `now` every call takes, so a minute passes without waiting one."""

import hashlib
import threading
import time
from dataclasses import replace

import pytest

from seckill_site.redis import client
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.shoppers import reserve_directly
from waitingroom import keys, queue
from waitingroom.brake import Health, health_factor, health_read
from waitingroom.queue import (
    ADMITTED,
    CLOSED,
    PREQUEUE,
    SOLD_OUT,
    WAITING,
    counter,
    pass_issue,
    place,
    shuffle_published,
)
from waitingroom.room import Room, room_write, shop_switches_write

pytestmark = pytest.mark.django_db


def _room(sale_id: int, **fields) -> Room:
    room = Room(on=True, pass_seconds=600, **fields)
    room_write(sale_id, room)
    return room


def _admitted_over_a_minute(sale_id: int, start: float, *, factor: float | None = None, step: float = 0.5) -> int:
    """How far the head moves in the minute after `start`, the room read every `step` seconds."""
    head_before = counter(sale_id, now=start, factor=factor).head
    at = start
    while at < start + 60:
        at = min(start + 60, at + step)
        head = counter(sale_id, now=at, factor=factor).head
    return head - head_before


def _crowd(sale_id: int, count: int, at: float, first: int = 1) -> None:
    for user_id in range(first, first + count):
        place(sale_id, user_id, now=at)


def test_it_admits_at_the_set_rate_within_ten_percent_over_a_minute():
    sale = make_sale(stock=10_000)
    start = int(time.time())
    _room(sale.pk, starts_at=start, admit_per_minute=120)
    _crowd(sale.pk, 500, start)
    admitted = _admitted_over_a_minute(sale.pk, start)
    assert 108 <= admitted <= 132, admitted


def test_the_pace_holds_however_seldom_the_room_is_read():
    """Counted lazily, the line moves by the time elapsed, not by how often anyone asks."""
    sale = make_sale(stock=10_000)
    start = int(time.time())
    _room(sale.pk, starts_at=start, admit_per_minute=120)
    _crowd(sale.pk, 500, start)
    assert 108 <= _admitted_over_a_minute(sale.pk, start, step=7.0) <= 132


def test_its_brake_halves_the_inflow_when_the_writer_lags():
    sale = make_sale(stock=10_000)
    start = int(time.time())
    _room(sale.pk, starts_at=start, admit_per_minute=120, brake=True)
    healthy = health_read(sale.pk)
    assert healthy.writer_lag == 0 and health_factor(replace(healthy, redis_seconds=0, busy_share=0)) == 1.0
    # The writer has left a reservation 10 s unwritten (its flush lost).
    reserve_directly(make_user().pk, sale.pk, age=10)
    lagging = health_read(sale.pk)
    assert 9 <= lagging.writer_lag <= 15 and lagging.outbox == 1
    factor = health_factor(Health(writer_lag=lagging.writer_lag, outbox=lagging.outbox))
    assert factor == 0.5
    _crowd(sale.pk, 500, start)
    admitted = _admitted_over_a_minute(sale.pk, start, factor=factor)
    assert 54 <= admitted <= 66, admitted
    assert counter(sale.pk, now=start + 60, factor=factor).rate_per_minute == 60


def test_each_sign_of_trouble_halves_the_pace_again():
    assert health_factor(Health()) == 1.0
    assert health_factor(Health(writer_lag=30)) == 0.25
    assert health_factor(Health(outbox=10_000, redis_seconds=1.0)) == 0.25
    assert health_factor(Health(writer_lag=60, outbox=10_000, redis_seconds=1, busy_share=0.5)) == 0.1


def test_the_pre_queue_is_shuffled_at_the_start_in_the_published_order_then_first_come():
    sale = make_sale(stock=10_000)
    now = int(time.time())
    _room(sale.pk, opens_at=now, starts_at=now + 100, admit_per_minute=60)
    assert place(sale.pk, 1, now=now - 1).state == CLOSED  # before the pre-queue opens
    early = list(range(101, 141))
    for user_id in early:
        assert place(sale.pk, user_id, now=now + 5).state == PREQUEUE
    published = shuffle_published(sale.pk)
    assert set(published) == {"seedSha256"}  # the hash before, never the seed
    # The start: the first arrival after it triggers the shuffle, and is placed after it.
    late = place(sale.pk, 7, now=now + 100)
    assert late.state == WAITING and late.position == len(early) + 1
    assert place(sale.pk, 8, now=now + 101).position == len(early) + 2
    assert place(sale.pk, 7, now=now + 102).position == len(early) + 1  # joining again changes nothing
    published = shuffle_published(sale.pk)
    seed = published["seed"]
    assert hashlib.sha256(str(seed).encode()).hexdigest() == published["seedSha256"]
    assert published["shuffled"] == len(early)
    # Anyone recomputes the order from the seed, as for a draw (docs/draw.md).
    recomputed = sorted(early, key=lambda i: (hashlib.sha256(f"{seed}:{i}".encode()).hexdigest(), i))
    placed = sorted(early, key=lambda i: client().zscore(keys.queue(sale.pk), i))
    assert placed == recomputed and placed != early
    assert [place(sale.pk, i, now=now + 103, join=False).position for i in recomputed] == list(range(1, 41))


def test_the_shuffle_is_made_once_however_many_ask_at_the_start():
    sale = make_sale(stock=10_000)
    now = int(time.time())
    _room(sale.pk, opens_at=now, starts_at=now + 10)
    _crowd(sale.pk, 20, now + 1, first=200)
    positions = [place(sale.pk, user_id, now=now + 10).position for user_id in range(1, 6)]
    assert positions == [21, 22, 23, 24, 25]
    assert sorted(int(s) for _m, s in client().zrange(keys.queue(sale.pk), 0, -1, withscores=True)) == list(
        range(1, 26)
    )


def test_a_shopper_sees_their_place_the_people_ahead_and_the_wait():
    sale = make_sale(stock=10_000)
    start = int(time.time())
    _room(sale.pk, starts_at=start, admit_per_minute=60)
    _crowd(sale.pk, 30, start)
    mine = place(sale.pk, 30, now=start)
    assert mine.position == 30 and mine.head == 1  # the first of the bucket went in at once
    assert mine.ahead == 28 and mine.eta_seconds == 29
    assert place(sale.pk, 1, now=start).state == ADMITTED


def test_the_cap_on_passes_running_holds_the_line_until_one_ends():
    sale = make_sale(stock=10_000)
    start = int(time.time())
    _room(sale.pk, starts_at=start, active_max=3)
    _crowd(sale.pk, 10, start)
    assert counter(sale.pk, now=start + 1).head == 3
    assert counter(sale.pk, now=start + 100).head == 3
    pass_issue(sale.pk, 1, now=start + 2)  # user 1 takes their pass; users 2 and 3 never come
    # Past the pass's life the three places are free again; two left without their pass.
    assert counter(sale.pk, now=start + 700).head == 6
    assert int(client().get(keys.abandoned(sale.pk))) == 2
    assert client().zscore(keys.waits(sale.pk), 1) == 2.0


@pytest.mark.parametrize("switch", ["stop", "queue_all"])
def test_nobody_is_admitted_while_a_switch_is_thrown(switch):
    sale = make_sale(stock=10_000)
    start = int(time.time())
    _room(sale.pk, starts_at=start, admit_per_minute=600, **{switch: True})
    _crowd(sale.pk, 50, start)
    assert counter(sale.pk, now=start + 60).head == 0
    assert place(sale.pk, 10, now=start + 60).eta_seconds is None
    room_write(sale.pk, Room(on=True, pass_seconds=600, starts_at=start, admit_per_minute=600))
    # Released, the pace resumes from there: no minute's worth let in at once.
    assert counter(sale.pk, now=start + 61).head <= 2 + 10


def test_the_shop_wide_switch_stops_every_room():
    sale = make_sale(stock=10_000)
    start = int(time.time())
    _room(sale.pk, starts_at=start, admit_per_minute=600)
    _crowd(sale.pk, 50, start)
    shop_switches_write(queue_all=False, stop=True)
    assert counter(sale.pk, now=start + 30).head <= 1


def test_the_wait_ends_sold_out_the_moment_the_stock_is_gone():
    sale = make_sale(stock=1)
    start = int(time.time())
    _room(sale.pk, starts_at=start, admit_per_minute=1)
    _crowd(sale.pk, 5, start)
    assert place(sale.pk, 5, now=start).state == WAITING
    reserve_directly(make_user().pk, sale.pk)
    queue._stock_read.clear()  # this process read the stock less than a second ago
    assert place(sale.pk, 5, now=start).state == SOLD_OUT
    assert place(sale.pk, 6, now=start).sold_out


def test_a_pass_starts_once_however_often_it_is_asked_for():
    sale = make_sale(stock=10)
    start = int(time.time())
    _room(sale.pk, starts_at=start)
    _crowd(sale.pk, 1, start)
    assert pass_issue(sale.pk, 1, now=start + 5) == start + 5
    assert pass_issue(sale.pk, 1, now=start + 50) == start + 5


def test_the_published_shuffle_lets_anyone_recompute_every_place(client):
    sale = make_sale(stock=10_000)
    now = int(time.time())
    _room(sale.pk, opens_at=now - 100, starts_at=now + 100)
    early = [303, 101, 202, 404, 505]
    for user_id in early:
        place(sale.pk, user_id, now=now)
    before = client.get(f"/waiting-room/{sale.pk}/shuffle").json()["data"]
    assert set(before) == {"seedSha256"}
    place(sale.pk, 1, now=now + 100)
    # What anyone does with the published figures (docs/waiting-room.md):
    d = client.get(f"/waiting-room/{sale.pk}/shuffle").json()["data"]
    assert hashlib.sha256(d["seed"].encode()).hexdigest() == d["seedSha256"] == before["seedSha256"]
    rank = lambda i: (hashlib.sha256(f"{d['seed']}:{i}".encode()).hexdigest(), i)  # noqa: E731
    order = sorted(d["prequeueIds"], key=rank)
    assert d["prequeueIds"] == sorted(early) and d["shuffled"] == 5
    assert [place(sale.pk, i, now=now + 101, join=False).position for i in order] == [1, 2, 3, 4, 5]


def test_many_readers_at_once_admit_no_more_than_the_pace():
    """Eight processes' worth of readers, each with its own view of the clock (slightly out of
    order), count the same minute: the script counts each elapsed second once."""
    sale = make_sale(stock=10_000)
    start = int(time.time())
    _room(sale.pk, starts_at=start, admit_per_minute=120)
    _crowd(sale.pk, 500, start)
    head_before = counter(sale.pk, now=start).head

    def reader(skew: float) -> None:
        for tick in range(121):
            counter(sale.pk, now=start + tick * 0.5 + skew)

    threads = [
        threading.Thread(target=reader, args=(skew,)) for skew in (0.0, 0.01, -0.01, 0.2, -0.2, 0.3, 0.05, -0.05)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    admitted = counter(sale.pk, now=start + 60).head - head_before
    assert 108 <= admitted <= 132, admitted
    placed = client().zrange(keys.queue(sale.pk), 0, -1, withscores=True)
    assert len({score for _member, score in placed}) == len(placed) == 500  # one shopper per place
