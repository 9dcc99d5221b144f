"""The order writer: a sale's reservations, its outbox in Redis, become orders a batch per
transaction, each then settled (sales.sale_state).

Safe to run twice and concurrently: a claim belongs to one token, the database writes each
order once (its request id is unique), and two flushes of one sale take turns on its stock lock.
"""

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError

from orders.services import WriteOutcome, order_create_from_seckill, orders_create_from_seckill_batch
from sales import sale_state
from sales.sale_state import Reservation, Settle, Settlement
from seckill.selectors import sales_to_reconcile
from seckill_site.publish import task_publish

logger = logging.getLogger(__name__)

# The Celery task that runs sale_flush (seckill.tasks.order_flush is declared with this name):
# every publisher of a flush names it through this constant.
ORDER_FLUSH = "seckill.order_flush"


@dataclass(frozen=True)
class BatchDone:
    reservations: list[Reservation]  # the batch, as claimed
    settles: list[Settle]  # how each was settled
    created: int  # orders its one transaction created (0 when it went one by one)
    seconds: float


@dataclass
class FlushReport:
    batches: int = 0
    created: int = 0
    # outcome -> count, over the batches the database refused whole and were written one by one
    one_by_one: dict[str, int] = field(default_factory=dict)


def sale_flush(
    *,
    sale_id: int,
    token: str | None = None,
    on_batch: Callable[[BatchDone], None] | None = None,
    reserved_before: float = 0,
) -> FlushReport:
    """Write the sale's reservations as orders until none is left that this token may claim.

    `token` names this flush's claims; a redelivered task keeps its id, so it takes its own claims
    back at once. A batch the database refuses whole is written one by one, and a row refused for
    good is settled as refused, never holding up the rest. `on_batch` is told of every batch. With
    `reserved_before` (epoch seconds) only reservations made before then are written."""
    token = token or uuid.uuid4().hex
    report = FlushReport()
    while True:
        claimed = sale_state.claim(
            sale_id=sale_id,
            token=token,
            size=settings.SECKILL_WRITER_BATCH_SIZE,
            lease_ms=settings.SECKILL_WRITER_CLAIM_MS,
            flush_mark_ms=settings.SECKILL_WRITER_FLUSH_MARK_MS,
            reserved_before=reserved_before,
        )
        if not claimed.reservations:
            return report
        started = time.perf_counter()
        settles, created = _batch_write(sale_id, claimed.reservations, report)
        sale_state.settle(
            sale_id=sale_id, token=token, settles=settles, flush_mark_ms=settings.SECKILL_WRITER_FLUSH_MARK_MS
        )
        report.batches += 1
        report.created += created
        if on_batch is not None:
            on_batch(BatchDone(claimed.reservations, settles, created, time.perf_counter() - started))


def _batch_write(sale_id: int, batch: list[Reservation], report: FlushReport) -> tuple[list[Settle], int]:
    """The batch's orders in one transaction, or one by one when the database refuses it whole."""
    users = {reservation.request_id: reservation.user_id for reservation in batch}
    created = orders_create_from_seckill_batch(sale_id=sale_id, reservations=users)
    if created is not None:
        settles = [Settle(rid, users[rid], Settlement.WRITTEN, order_id) for rid, order_id in created.items()]
        return settles, len(created)
    settles = []
    for reservation in batch:
        settle, outcome = _write_one(sale_id, reservation)
        settles.append(settle)
        report.one_by_one[outcome] = report.one_by_one.get(outcome, 0) + 1
    return settles, 0


_SETTLEMENTS = {
    WriteOutcome.CREATED: Settlement.WRITTEN,
    WriteOutcome.DUPLICATE: Settlement.DUPLICATE,
    WriteOutcome.SOLD_OUT: Settlement.SOLD_OUT,
}


def _write_one(sale_id: int, reservation: Reservation) -> tuple[Settle, str]:
    """One reservation's order, decided by the database alone; (its settlement, the outcome's name)."""
    try:
        written = order_create_from_seckill(
            sale_id=sale_id, user_id=reservation.user_id, request_id=reservation.request_id
        )
    except IntegrityError as error:
        # A row the database will never take (say, the shopper's account was deleted after the
        # buy): its unit goes back and the shopper is told it failed.
        logger.error(
            "order write refused for good: %s",
            str(error).splitlines()[0],
            extra={"sale": sale_id, "user_id": reservation.user_id, "reservation": reservation.request_id},
        )
        return Settle(reservation.request_id, reservation.user_id, Settlement.REFUSED), "refused"
    if written.outcome is WriteOutcome.ALREADY_WRITTEN:
        kind = Settlement.WRITTEN if written.live else Settlement.WRITTEN_NOT_LIVE
    else:
        kind = _SETTLEMENTS[written.outcome]
    return Settle(reservation.request_id, reservation.user_id, kind, written.order_id or 0), written.outcome.value


def flushes_lapsed_publish() -> list[int]:
    """Publish a flush for every sale holding reservations but no flush mark; the sale ids.

    A flush can be lost after its mark was set (the web process died before publishing, or the
    broker lost it). Once the mark lapses only a later buy would publish again, and a sold-out
    sale has none: without this sweep its reservations would wait minutes for the reconciler."""
    waiting = sale_state.reservations_count(sales_to_reconcile())
    published = []
    for sale_id, count in waiting.items():
        if count and sale_state.flush_mark_take(sale_id=sale_id, flush_mark_ms=settings.SECKILL_WRITER_FLUSH_MARK_MS):
            task_publish(ORDER_FLUSH, kwargs={"sale_id": sale_id})
            published.append(sale_id)
    return published
