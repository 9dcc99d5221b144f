"""Draw sales moved through their clock, entered, and checked against the published
recomputation (docs/draw.md)."""

import hashlib
from datetime import timedelta

from django.utils import timezone

from sales import sale_state
from sales.codes import SaleCode
from sales.models import Sale, SaleDraw
from sales.sale_state import keys
from seckill.services import gate
from seckill_site.redis import client
from testutils.shoppers import path_for


def window_over(sale: Sale) -> None:
    """Move the sale's start back so that its entry window is over, in both stores."""
    start = timezone.now() - timedelta(seconds=sale.draw_window_s + 1)
    Sale.objects.filter(pk=sale.pk).update(start_at=start)
    sale.refresh_from_db()
    sale_state.window_set(
        sale_id=sale.pk, start=sale.start_at.timestamp(), end=sale.end_at.timestamp(), draw=sale.draw_at.timestamp()
    )
    sale_state.process_marks_clear()


def attempt(user, sale) -> gate.Attempt:
    return gate.seckill_attempt(user_id=user.pk, sale_id=sale.pk, path=path_for(user.pk, sale.pk))


def enter_all(users, sale) -> None:
    for user in users:
        assert attempt(user, sale).code is SaleCode.ENTERED


def recomputed(sale: Sale) -> list[int]:
    """The docs' recomputation, from the published seed and entrants only."""
    draw = SaleDraw.objects.get(sale=sale)
    assert hashlib.sha256(draw.seed.encode()).hexdigest() == draw.seed_sha256
    ranked = sorted(draw.entrant_ids, key=lambda u: (hashlib.sha256(f"{draw.seed}:{u}".encode()).hexdigest(), u))
    return ranked[: draw.units]


def redis_invariants(sale: Sale) -> dict:
    reservations = client().hgetall(keys.reservations(sale.pk))
    users = [value.decode().split(":")[0] for value in reservations.values()]
    assert len(users) == len(set(users)), "a shopper holds two reservations"
    return {
        "stock": int(client().get(keys.stock(sale.pk))),
        "reserved": len(users),
        "buyers": client().scard(keys.buyers(sale.pk)),
    }


def opening_over(sale: Sale) -> None:
    """Move the sale back in time so that its start (and draw) has passed, in both stores."""
    assert sale.draw_at is not None and sale.entries_open_at is not None
    shift = sale.draw_at - timezone.now() + timedelta(seconds=1)
    Sale.objects.filter(pk=sale.pk).update(
        entries_open_at=sale.entries_open_at - shift, start_at=sale.start_at - shift, end_at=sale.end_at - shift
    )
    sale.refresh_from_db()
    assert sale.draw_at is not None and sale.entries_open_at is not None
    sale_state.window_set(
        sale_id=sale.pk,
        start=sale.start_at.timestamp(),
        end=sale.end_at.timestamp(),
        draw=sale.draw_at.timestamp(),
        entries=sale.entries_open_at.timestamp(),
    )
    sale_state.process_marks_clear()
