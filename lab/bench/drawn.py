"""A draw sale drawn, its winners' orders written and its waiting list published: what the item
page's waiting-list poll (`/seckill/waitingList/<sale>`) asks about, for the shoppers it asks for.

The page polls only for an entrant who was not drawn and holds a place on the list (seckill.js,
listWatch), so the bench's replay of that poll needs such a sale and such shoppers; a first-come
sale has no list and answers 404. The sale is made as the shop makes one: entries taken through
the gate's service (the captcha is not the figure here: each path is stored as the path service
stores it), the draw made by the shop's own drawer once due, which publishes the list, and the
winners' orders written by the order writer, so no writing is left to overlap a measurement.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from lab import prepare
from lab.shopper import Shopper
from sales import sale_state
from sales.codes import SaleCode
from sales.draw_waiting import waiting_list
from sales.models import SaleDraw
from seckill.services import draw, gate, writer
from seckill_site.redis import now as redis_now

# Seconds between the sale's creation and its draw: long enough to enter the shoppers.
ENTRY_SECONDS = 3.0
# The longest the draw and the winners' orders may take once due.
SETTLE_SECONDS = 60.0


@dataclass(frozen=True)
class DrawnSale:
    """`sale_id`'s draw applied; `listed`: the entrants on its waiting list, first place first;
    `winners`: how many were drawn; `entries`: the gate's answers to the entries, by code."""

    sale_id: int
    listed: list[Shopper]
    winners: int
    entries: dict[str, int]


def drawn_sale_create(shoppers: list[Shopper], *, entry_seconds: float = ENTRY_SECONDS) -> DrawnSale:
    """A draw sale of half as many units as `shoppers` (as the recorded opening's draw had), every
    shopper entered, drawn, its winners' orders written. RuntimeError when the draw is not made
    within SETTLE_SECONDS of being due: no waiting list to poll."""
    units = max(1, len(shoppers) // 2)
    sale = prepare.sale_create(name="drawn", units=units, starts_in=timedelta(seconds=entry_seconds), draw=True)
    entries: Counter[str] = Counter()
    for shopper in shoppers:
        path = secrets.token_hex(16)
        sale_state.path_set(sale_id=sale.pk, user_id=shopper.user_id, path=path)
        entries[str(gate.seckill_attempt(user_id=shopper.user_id, sale_id=sale.pk, path=path).code.code)] += 1
    deadline = sale.draw_at.timestamp() + SETTLE_SECONDS
    while draw.sale_draw(sale_id=sale.pk).state in ("not_due", "busy") and redis_now() < deadline:
        time.sleep(0.1)
    made = SaleDraw.objects.filter(sale_id=sale.pk, applied_at__isnull=False).first()
    if made is None:
        raise RuntimeError(f"the draw of sale #{sale.pk} was not made by {SETTLE_SECONDS:.0f} s after it was due")
    while sale_state.reservations_count([sale.pk])[sale.pk] and redis_now() < deadline:
        writer.sale_flush(sale_id=sale.pk)  # the worker may be at it too: each takes its own claims
        time.sleep(0.05)
    by_user = {shopper.user_id: shopper for shopper in shoppers}
    listed = [by_user[user_id] for _rank, user_id in waiting_list(made) if user_id in by_user]
    return DrawnSale(sale.pk, listed, len(made.winner_ids), dict(entries))


def entered(drawn: DrawnSale) -> bool:
    """Every shopper's entry was taken."""
    return set(drawn.entries) == {str(SaleCode.ENTERED.code)}
