"""Writes of the waiting rooms: the merchant's settings, the operator's switches, and their
publication to Redis, where the web nodes read them (waitingroom.room).

Every change is logged (WaitingRoomAction) in the transaction that makes it and published after
its commit, from the row as committed then: changes whose commits run out of order still end
on the last one, and a rolled-back change never reaches a shopper.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from sales.models import Sale
from sales.services import sale_cache_drop
from users.models import User
from waitingroom.models import SETTINGS_FIELDS, RoomAction, ShopSwitches, WaitingRoom, WaitingRoomAction
from waitingroom.room import OFF, Room, room_read, room_write, shop_switches_write

__all__ = [
    "SWITCHES",
    "room_publish",
    "room_published",
    "room_settings_save",
    "room_switch",
    "rooms_publish_all",
    "shop_publish",
    "shop_switch",
    "shop_switches",
]

# switch name -> (model field, action when thrown on, action when thrown off)
SWITCHES = {
    "queue_all": ("queue_all", RoomAction.QUEUE_ALL_ON, RoomAction.QUEUE_ALL_OFF),
    "stop": ("stop_admitting", RoomAction.STOP_ON, RoomAction.STOP_OFF),
}


def _json(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _settings_of(room: WaitingRoom) -> dict[str, Any]:
    return {name: _json(getattr(room, name)) for name in SETTINGS_FIELDS}


def room_published(room: WaitingRoom) -> Room:
    """What the web nodes are told of `room`: OFF when it is off. The pre-queue opens at its
    time, or at the start when it has none or the sale has moved to start before it."""
    if not room.enabled:
        return OFF
    start = int(room.sale.start_at.timestamp())
    opens = int(room.prequeue_opens_at.timestamp()) if room.prequeue_opens_at else start
    return Room(
        on=True,
        opens_at=min(opens, start),
        starts_at=start,
        admit_per_minute=room.admit_per_minute or 0,
        active_max=room.active_shoppers or 0,
        pass_seconds=room.pass_minutes * 60,
        brake=room.brake,
        queue_all=room.queue_all,
        stop=room.stop_admitting,
    )


def room_publish(*, sale_id: int) -> Room:
    """Write the sale's room to Redis as the database holds it now (none: OFF)."""
    room = WaitingRoom.objects.select_related("sale").filter(sale_id=sale_id).first()
    published = OFF if room is None else room_published(room)
    was_on = room_read(sale_id).on
    room_write(sale_id, published)
    if published.on != was_on:
        # The item page says whether the sale has a room, and the edge keeps it for everybody.
        sale_cache_drop(sale_id=sale_id)
    return published


def _publish_after_commit(sale_id: int) -> None:
    transaction.on_commit(lambda: room_publish(sale_id=sale_id))


def shop_switches() -> ShopSwitches:
    """The shop-wide switches' row, made (both off) on first use."""
    ShopSwitches.objects.bulk_create([ShopSwitches(id=ShopSwitches.ROW)], ignore_conflicts=True)
    return ShopSwitches.objects.get(id=ShopSwitches.ROW)


def shop_publish() -> ShopSwitches:
    """Write the shop-wide switches to Redis as the database holds them now."""
    switches = shop_switches()
    shop_switches_write(queue_all=switches.queue_all, stop=switches.stop_admitting)
    return switches


def rooms_publish_all() -> int:
    """Write every room and the shop-wide switches to Redis (after Redis lost them); the number
    of rooms that are on."""
    shop_publish()
    on = 0
    for room in WaitingRoom.objects.select_related("sale").order_by("pk").iterator():
        published = room_published(room)
        room_write(room.sale_id, published)
        on += published.on
    return on


def room_settings_save(*, room: WaitingRoom, actor: User | None = None, actor_name: str = "") -> WaitingRoom:
    """Set up a room or change its settings (validated: ValidationError changes nothing), log
    what changed and publish it once committed.

    Only the settings are written: a switch thrown between the caller's read and this save stays
    thrown (the switches are room_switch's alone).
    """
    with transaction.atomic():
        before = None
        if room.pk is not None:
            stored = WaitingRoom.objects.select_for_update().get(pk=room.pk)
            before = _settings_of(stored)
            room.queue_all, room.stop_admitting = stored.queue_all, stored.stop_admitting
        room.full_clean()
        after = _settings_of(room)
        if before is None:
            room.save()
            WaitingRoomAction.objects.create(
                sale_id=room.sale_id, actor=actor, actor_name=actor_name, action=RoomAction.CREATED, new=after
            )
        else:
            changed = [name for name in SETTINGS_FIELDS if before[name] != after[name]]
            if not changed:
                return room
            room.save(update_fields=[*changed, "updated_at"])
            WaitingRoomAction.objects.create(
                sale_id=room.sale_id,
                actor=actor,
                actor_name=actor_name,
                action=RoomAction.SETTINGS,
                old={name: before[name] for name in changed},
                new={name: after[name] for name in changed},
            )
        _publish_after_commit(room.sale_id)
    return room


def room_switch(*, sale: Sale, switch: str, on: bool, actor: User | None = None, actor_name: str = "") -> bool:
    """Throw one of a sale's switches (`queue_all`, `stop`) on or off; True when it changed.

    A conditional UPDATE: of two operators throwing the same switch at once, one changes it and
    is logged, the other finds it thrown and records nothing. WaitingRoom.DoesNotExist when the
    sale has no room.
    """
    field, action_on, action_off = SWITCHES[switch]
    with transaction.atomic():
        rooms = WaitingRoom.objects.filter(sale=sale)
        if not rooms.exists():
            raise WaitingRoom.DoesNotExist(f"sale {sale.pk} has no waiting room")
        if not rooms.exclude(**{field: on}).update(**{field: on, "updated_at": timezone.now()}):
            return False
        WaitingRoomAction.objects.create(
            sale=sale,
            actor=actor,
            actor_name=actor_name,
            action=action_on if on else action_off,
            old={switch: not on},
            new={switch: on},
        )
        _publish_after_commit(sale.pk)
    return True


def shop_switch(*, switch: str, on: bool, actor: User | None = None, actor_name: str = "") -> bool:
    """Throw a shop-wide switch (`queue_all`, `stop`: every sale's room) on or off; True when it
    changed. Logged once, as room_switch."""
    field, action_on, action_off = SWITCHES[switch]
    with transaction.atomic():
        shop_switches()
        if (
            not ShopSwitches.objects.filter(id=ShopSwitches.ROW)
            .exclude(**{field: on})
            .update(**{field: on, "updated_at": timezone.now()})
        ):
            return False
        WaitingRoomAction.objects.create(
            sale=None,
            actor=actor,
            actor_name=actor_name,
            action=action_on if on else action_off,
            old={switch: not on},
            new={switch: on},
        )
        transaction.on_commit(shop_publish)
    return True
