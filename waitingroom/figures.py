"""A waiting room's live figures, read from the queue engine's keys (waitingroom.keys): how many
wait, how many were let in over the last minute, how many gave up, and how long the admitted
waited. A key the engine has not written yet reads as 0, a figure with nothing to measure as None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.utils.translation import gettext as _

from orders.selectors import LiveCard, sale_live_cards_add
from sales.models import Sale
from seckill_site import redis as shop_redis
from seckill_site.redis import now as redis_now
from waitingroom import keys
from waitingroom.models import ShopSwitches, WaitingRoom

__all__ = ["RoomFigures", "live_cards_register", "room_figures", "room_state_words"]


@dataclass(frozen=True)
class RoomFigures:
    waiting: int  # in the queue, past the head
    head: int
    tail: int
    admitted: int  # in all
    admitted_last_minute: int
    abandoned: int
    abandonment: float | None  # abandoned / (admitted + abandoned)
    wait_p50: float | None  # seconds the admitted waited
    wait_p99: float | None


def _int(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def room_figures(sale_id: int) -> RoomFigures:
    """The room's figures now: one round trip, then one per wait percentile."""
    client = shop_redis.client()
    now = redis_now()
    pipe = client.pipeline(transaction=False)
    pipe.get(keys.head(sale_id))
    pipe.get(keys.tail(sale_id))
    pipe.get(keys.abandoned(sale_id))
    pipe.zcard(keys.admitted_log(sale_id))
    pipe.zcount(keys.admitted_log(sale_id), now - 60, "+inf")
    pipe.zcard(keys.waits(sale_id))
    head_raw, tail_raw, abandoned_raw, admitted, last_minute, waited = pipe.execute()
    head, abandoned = _int(head_raw), _int(abandoned_raw)
    waiting = client.zcount(keys.queue(sale_id), f"({head}", "+inf")
    return RoomFigures(
        waiting=waiting,
        head=head,
        tail=_int(tail_raw),
        admitted=admitted,
        admitted_last_minute=last_minute,
        abandoned=abandoned,
        abandonment=abandoned / (admitted + abandoned) if admitted + abandoned else None,
        wait_p50=_percentile(client, sale_id, waited, 0.50),
        wait_p99=_percentile(client, sale_id, waited, 0.99),
    )


def _percentile(client, sale_id: int, count: int, share: float) -> float | None:
    """The nearest-rank percentile of the waits: the smallest wait at least `share` of them reach."""
    if not count:
        return None
    rank = max(1, math.ceil(share * count)) - 1
    found = client.zrange(keys.waits(sale_id), rank, rank, withscores=True)
    return float(found[0][1]) if found else None


def _seconds(value: float | None) -> str | None:
    return None if value is None else _("%(n)s s") % {"n": f"{value:.0f}"}


def _room_card(sale: Sale) -> LiveCard | None:
    """The live view's waiting-room cards, for a sale with a room (on or off: its figures stay)."""
    room = WaitingRoom.objects.filter(sale=sale).first()
    if room is None:
        return None
    figures = room_figures(sale.pk)
    share = None if figures.abandonment is None else f"{figures.abandoned} ({figures.abandonment:.0%})"
    return LiveCard(
        template="admin/waitingroom/live_cards.html",
        figures={
            "room-state": room_state_words(room),
            "room-waiting": figures.waiting,
            "room-admitted-minute": figures.admitted_last_minute,
            "room-abandoned": share if share is not None else figures.abandoned,
            "room-wait": f"{_seconds(figures.wait_p50) or '–'} / {_seconds(figures.wait_p99) or '–'}",
        },
    )


def room_state_words(room: WaitingRoom) -> str:
    """The room's state in the merchant's words: on or off, and the switches thrown (its own or
    the shop's)."""
    shop = ShopSwitches.objects.filter(id=ShopSwitches.ROW).first()
    words = [_("on") if room.enabled else _("off")]
    if room.queue_all or (shop is not None and shop.queue_all):
        words.append(_("everyone queued"))
    if room.stop_admitting or (shop is not None and shop.stop_admitting):
        words.append(_("admitting stopped"))
    return " · ".join(words)


def live_cards_register() -> None:
    """Put the room's cards on the merchant's live view of a sale (orders' admin)."""
    sale_live_cards_add(_room_card)
