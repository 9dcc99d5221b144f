"""A sale's waiting room as the web nodes see it: its settings and the operator's switches,
read from Redis and remembered by each process for at most ROOM_SECONDS, so a switch an
operator throws reaches every node within a second, the command's own time included."""

from __future__ import annotations

import time
from dataclasses import dataclass, fields

from seckill_site import redis as shop_redis
from waitingroom import keys

__all__ = ["ROOM_SECONDS", "Room", "room_forget", "room_read", "room_write", "shop_switches_write"]

# Half the promised second: the other half covers the switch reaching Redis and a request in flight.
ROOM_SECONDS = 0.5


@dataclass(frozen=True)
class Room:
    """One sale's room. `on` False: no room, every shopper goes straight to the sale.

    `opens_at` / `starts_at` are epoch seconds: arrivals from `opens_at` until `starts_at` are
    the pre-queue (shuffled at the start), later ones queue first come, first served.
    `admit_per_minute` and `active_max` are 0 for "no limit of that kind"; `pass_seconds` is how
    long a pass lets its holder buy; `brake` lets the shop's health slow the inflow.
    `queue_all` (queue everyone, passes included) and `stop` (admit no one new) are the
    operator's switches, the sale's or the shop's, whichever is thrown.
    """

    on: bool = False
    opens_at: int = 0
    starts_at: int = 0
    admit_per_minute: int = 0
    active_max: int = 0
    pass_seconds: int = 0
    brake: bool = False
    queue_all: bool = False
    stop: bool = False


OFF = Room()
_INTS = {f.name for f in fields(Room) if f.type == "int"}
_BOOLS = {f.name for f in fields(Room) if f.type == "bool"}
_SWITCHES = ("queue_all", "stop")

# sale id -> (read at, monotonic; the room)
_read: dict[int, tuple[float, Room]] = {}


def room_forget() -> None:
    """Forget every room read (tests, and a process that must see a switch at once)."""
    _read.clear()


def room_read(sale_id: int) -> Room:
    """The sale's room, at most ROOM_SECONDS old; OFF when the sale has none set."""
    now = time.monotonic()
    known = _read.get(sale_id)
    if known is not None and now - known[0] < ROOM_SECONDS:
        return known[1]
    client = shop_redis.client()
    sale_fields = client.hgetall(keys.room(sale_id))
    shop_fields = client.hgetall(keys.shop())
    room = _parsed(sale_fields, shop_fields)
    _read[sale_id] = (now, room)
    return room


def _parsed(sale_fields: dict, shop_fields: dict) -> Room:
    sale = {k.decode() if isinstance(k, bytes) else k: v for k, v in sale_fields.items()}
    shop = {k.decode() if isinstance(k, bytes) else k: v for k, v in shop_fields.items()}
    if sale.get("on") not in (b"1", "1"):
        return OFF
    values: dict[str, int | bool] = {}
    for name in _INTS:
        try:
            values[name] = int(sale.get(name, 0))
        except ValueError:
            values[name] = 0
    for name in _BOOLS:
        values[name] = sale.get(name) in (b"1", "1")
    for name in _SWITCHES:
        values[name] = values[name] or shop.get(name) in (b"1", "1")
    return Room(**values)  # type: ignore[arg-type]


def room_write(sale_id: int, room: Room) -> None:
    """Publish the sale's room (the admin's save, the operator's switches); OFF removes it."""
    client = shop_redis.client()
    if not room.on:
        client.delete(keys.room(sale_id))
    else:
        client.hset(keys.room(sale_id), mapping={f.name: int(getattr(room, f.name)) for f in fields(Room)})
    _read.pop(sale_id, None)


def shop_switches_write(*, queue_all: bool, stop: bool) -> None:
    """Throw or reset the shop-wide switches, for every sale's room at once."""
    shop_redis.client().hset(keys.shop(), mapping={"queue_all": int(queue_all), "stop": int(stop)})
    _read.clear()
