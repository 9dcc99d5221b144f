"""The room's settings and switches go through Redis to every process, at most a second late."""

import time

import pytest

from waitingroom.room import OFF, ROOM_SECONDS, Room, room_read, room_write

pytestmark = pytest.mark.django_db


def test_no_room_reads_off():
    assert room_read(123456) == OFF


def test_a_room_written_reads_back():
    room = Room(on=True, opens_at=100, starts_at=200, admit_per_minute=60, active_max=5, pass_seconds=300, brake=True)
    room_write(41, room)
    assert room_read(41) == room
    room_write(41, OFF)
    assert room_read(41) == OFF


def test_the_shop_switch_reaches_another_process_within_a_second():
    room_write(42, Room(on=True, pass_seconds=300))
    assert not room_read(42).queue_all
    # Another process threw the switch: this one's copy is at most ROOM_SECONDS old.
    from seckill_site import redis as shop_redis
    from waitingroom import keys

    shop_redis.client().hset(keys.shop(), "queue_all", 1)
    time.sleep(ROOM_SECONDS + 0.05)
    assert room_read(42).queue_all
