"""Waiting rooms for tests, set up as the admin sets them up (validated, logged, published)."""

from sales.models import Sale
from waitingroom.models import WaitingRoom
from waitingroom.services import room_settings_save


def make_room(*, sale: Sale, **fields) -> WaitingRoom:
    """`sale`'s waiting room, on and admitting 60 a minute unless `fields` say otherwise; published
    to Redis when the caller's transaction commits (at once outside one)."""
    fields.setdefault("enabled", True)
    fields.setdefault("admit_per_minute", 60)
    return room_settings_save(room=WaitingRoom(sale=sale, **fields))
