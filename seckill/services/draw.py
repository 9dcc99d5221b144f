"""A draw sale's draw: the entrants of its opening window, drawn once (docs/draw.md).

`sale_draw` may be called any time, any number of times, from any process (the ETA task, beat's
sweep, the gate); exactly one draw is stored and applied. It waits for the Redis node's clock to
close the entries (sale_state.draw_due), claims the draw with one conditional UPDATE of the
SaleDraw row in PostgreSQL (a Redis lock only spares the losers the work), applies the winners
idempotently, so the next caller finishes a drawer that died, and records `applied_at`, which a
Redis that lost the sale reads its drawn mark back from. The winners depend only on the seed
and the sorted entrant ids (`sales.draw_ranking`).
"""

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

from orders import reoffer
from orders.models import SeckillOrder
from sales import draw_seed, sale_state
from sales.draw_ranking import winners_of
from sales.models import SaleDraw
from sales.services import sale_pages_drop, sale_stock_lock
from seckill.metrics import DRAWS
from seckill.services.writer import ORDER_FLUSH
from seckill_site.publish import task_publish
from seckill_site.redis import server_time

logger = logging.getLogger(__name__)


def reservation_id(sale_id: int, user_id: int) -> str:
    """A winner's reservation id: the same for every drawer, so the database writes its order once."""
    return f"draw-{sale_id}-{user_id}"


@dataclass(frozen=True)
class DrawReport:
    # "not_due", "busy" (another drawer at it), "drawn" (here), "applied" (stored before), "done",
    # "key_lost" (no configured key gives the published seed: sales.draw_seed)
    state: str
    entrants: int = 0
    winners: int = 0
    applied: int = 0


def sale_draw(*, sale_id: int) -> DrawReport:
    """Make the sale's draw if it is due and not made; safe to call anywhere, any number of times."""
    if sale_state.drawn(sale_id):
        return DrawReport("done")
    draw = SaleDraw.objects.filter(sale_id=sale_id).select_related("sale").first()
    if draw is None or draw.sale.draw_at is None:
        return DrawReport("not_due")
    if draw.applied_at is not None:
        sale_state.drawn_mark(sale_id)  # Redis lost it: the draw is applied once, not again
        return DrawReport("done")
    if server_time() < draw.sale.draw_at.timestamp() or not sale_state.draw_due(sale_id):
        return DrawReport("not_due")
    with sale_state.draw_lock(sale_id) as token:
        if token is None:
            return DrawReport("busy")
        state = "applied"
        if draw.drawn_at is None:
            try:
                state = "drawn" if _draw_store(draw) else "applied"
            except draw_seed.SeedKeyLost:
                # An operator's error no retry mends: the entries wait, the alert names it.
                logger.error("draw of sale %s: its seed's key is not configured", sale_id, exc_info=True)
                DRAWS.labels("key_lost").inc()
                return DrawReport("key_lost")
            draw.refresh_from_db()
        ordered = set(SeckillOrder.objects.filter(sale_id=sale_id).values_list("user_id", flat=True))
        winners = [(user_id, reservation_id(sale_id, user_id)) for user_id in draw.winner_ids if user_id not in ordered]
        applied = sale_state.draw_apply(
            sale_id=sale_id, winners=winners, flush_mark_ms=settings.SECKILL_WRITER_FLUSH_MARK_MS
        )
        SaleDraw.objects.filter(pk=draw.pk, applied_at__isnull=True).update(applied_at=timezone.now())
        reoffer.waitlist_publish_quietly(sale_id)  # the waiting list, for its places below Django
        if applied.drawn_before:
            return DrawReport("done", len(draw.entrant_ids), len(draw.winner_ids), applied.applied)
        if applied.flush_due:
            _flush_publish(sale_id)
    sale_pages_drop(sale_id=sale_id)  # the page shows the outcome
    _winners_notify_publish(sale_id)
    logger.info(
        "draw of sale %s: %s winners of %s entrants",
        sale_id,
        len(draw.winner_ids),
        len(draw.entrant_ids),
        extra={"sale": sale_id, "outcome": state, "applied": applied.applied},
    )
    return DrawReport(state, len(draw.entrant_ids), len(draw.winner_ids), applied.applied)


def _draw_store(draw: SaleDraw) -> bool:
    """Draw and store it, unless another drawer stored one first; True when this call stored it.
    SeedKeyLost when no configured key gives the published seed: nothing is drawn."""
    seed = draw_seed.seed_reveal(nonce=draw.seed_nonce, sha256=draw.seed_sha256)
    entrants = sale_state.entrants(draw.sale_id)
    with transaction.atomic():
        sale_stock_lock(sale_id=draw.sale_id)
        left = sale_state.stock_left([draw.sale_id])[draw.sale_id] or 0
        units = min(max(left, 0), len(entrants))
        winners = winners_of(seed, entrants, units)
        stored = SaleDraw.objects.filter(pk=draw.pk, drawn_at__isnull=True).update(
            seed=seed, entrant_ids=entrants, winner_ids=winners, units=units, drawn_at=timezone.now()
        )
    return stored == 1


def _flush_publish(sale_id: int) -> None:
    """The winners' flush. When the broker refuses, the flush mark lapses and beat's flush sweep
    publishes it (the reservations wait in the outbox meanwhile)."""
    try:
        task_publish(ORDER_FLUSH, kwargs={"sale_id": sale_id})
    except (BrokerError, OSError, RedisError):
        logger.exception("publishing the flush of sale %s after its draw failed", sale_id)


def _winners_notify_publish(sale_id: int) -> None:
    """The winners' messages (seckill.services.draw_notices), after the draw is applied and never
    in its way: when the broker refuses, beat's sweep sends them."""
    try:
        task_publish("seckill.draw_winners_notify", kwargs={"sale_id": sale_id})
    except (BrokerError, OSError, RedisError):
        logger.exception("publishing the winners' messages of sale %s failed", sale_id)


def draws_due() -> list[int]:
    """Beat's sweep: draw every sale whose entry window is over and whose draw is not made; the
    sale ids drawn or finished here."""
    done = []
    due = (
        SaleDraw.objects.filter(sale__end_at__gte=timezone.now())
        .select_related("sale")
        .defer("entrant_ids", "winner_ids")
    )
    for draw in due:
        draw_at = draw.sale.draw_at
        if draw_at is None or draw_at > timezone.now() or sale_state.drawn(draw.sale_id):
            continue
        report = sale_draw(sale_id=draw.sale_id)
        if report.state in ("drawn", "applied"):
            done.append(draw.sale_id)
    return done
