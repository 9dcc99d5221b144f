"""A made draw's waiting list (docs/draw.md, "Units that come back"): the entrants who did not
win, in the published ranking, to whom units that come back are offered one by one
(orders.reoffer). Reads only; the offers are SaleDrawOffer rows.

The ranking of a stored draw never changes, so each process computes it once per draw (a
SHA-256 per entrant) and keeps the last few, keyed by the draw's row, seed and drawn time.
"""

import bisect
import functools
from datetime import datetime
from typing import Any

from django.db.models import Max

from sales.draw_ranking import ranked
from sales.models import SaleDraw, SaleDrawOffer

# (rank, user id) of each entrant waiting, in order; user id -> index in it; the ranks alone.
_Waiting = tuple[tuple[tuple[int, int], ...], dict[int, int], list[int]]


@functools.lru_cache(maxsize=8)
def _waiting(draw_id: int, seed: str, drawn_at: datetime | None) -> _Waiting:
    entrant_ids, winner_ids = SaleDraw.objects.filter(pk=draw_id).values_list("entrant_ids", "winner_ids").get()
    winners = set(winner_ids)
    waiting = tuple(
        (rank, user_id) for rank, user_id in enumerate(ranked(seed, entrant_ids), start=1) if user_id not in winners
    )
    places = {user_id: at for at, (_rank, user_id) in enumerate(waiting)}
    return waiting, places, [rank for rank, _user_id in waiting]


def waiting_list(draw: SaleDraw) -> tuple[tuple[int, int], ...]:
    """(rank, user id) of every entrant who did not win, in the published order; rank is the
    1-based place in the whole ranking, winners included. Empty before the draw."""
    if draw.drawn_at is None:
        return ()
    return _waiting(draw.pk, draw.seed, draw.drawn_at)[0]


def offered_up_to(draw: SaleDraw) -> int:
    """The rank of the last entrant offered a unit (or passed over), 0 before any: offers walk
    the waiting list in order, so everyone ranked up to it has had their turn."""
    return SaleDrawOffer.objects.filter(draw=draw).aggregate(last=Max("rank"))["last"] or 0


def turns_taken(draw: SaleDraw) -> int:
    """How many of the waiting list had their turn (offered a unit or passed over): the offers
    walk it in order, so they are its first places."""
    if draw.drawn_at is None:
        return 0
    return bisect.bisect_right(_waiting(draw.pk, draw.seed, draw.drawn_at)[2], offered_up_to(draw))


def waiting_next(draw: SaleDraw) -> list[tuple[int, int]]:
    """The entrants still waiting, in order: (rank, user id)."""
    last = offered_up_to(draw)
    return [(rank, user_id) for rank, user_id in waiting_list(draw) if rank > last]


def waiting_place(*, sale_id: int, user_id: int) -> int | None:
    """The shopper's place on the sale's waiting list, 1 = the next offered; None when they are
    not on it (a winner, offered already, or no made draw)."""
    draw = SaleDraw.objects.filter(sale_id=sale_id, drawn_at__isnull=False).only("pk", "seed", "drawn_at").first()
    if draw is None:
        return None
    waiting, places, ranks = _waiting(draw.pk, draw.seed, draw.drawn_at)
    at = places.get(user_id)
    last = offered_up_to(draw)
    if at is None or waiting[at][0] <= last:
        return None
    return at - bisect.bisect_right(ranks, last) + 1


def offers_public(*, sale_id: int) -> list[dict[str, Any]]:
    """The sale's offers as /seckill/draw publishes them, in the order they were made."""
    offers = SaleDrawOffer.objects.filter(draw__sale_id=sale_id).order_by("rank")
    return [
        {
            "rank": offer.rank,
            "userId": offer.user_id,
            "offeredAt": offer.offered_at,
            "expiresAt": offer.expires_at,
            "outcome": offer.outcome,
        }
        for offer in offers
    ]
