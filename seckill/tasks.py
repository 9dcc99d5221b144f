"""The seckill app's Celery tasks: each calls one service and adds metrics and log lines.
Services publish them by name (seckill_site.publish), never importing this module."""

import logging
import time

from celery import shared_task
from django.conf import settings

from sales.sale_state import Settlement
from seckill.metrics import (
    DRAWS,
    ORDERS_WRITTEN,
    RECONCILE_FAILURES,
    WRITER_BATCH_SECONDS,
    WRITER_BATCH_SIZE,
)
from seckill.repairs import reconcile_repair_record
from seckill.services import draw, draw_notices, paths, reconcile, writer
from seckill_site.errors import OUTAGES
from waitingroom.services import room_publish

logger = logging.getLogger(__name__)


def _batch_observed(sale_id: int, done: writer.BatchDone) -> None:
    """Metrics for the batch, and a log line per order written carrying its buy's request id."""
    WRITER_BATCH_SIZE.observe(len(done.reservations))
    WRITER_BATCH_SECONDS.observe(done.seconds)
    if not done.created:
        return
    traces = {reservation.request_id: reservation.trace for reservation in done.reservations}
    for settled in done.settles:
        if settled.kind is Settlement.WRITTEN:
            logger.info(
                "order write: created",
                extra={
                    "sale": sale_id,
                    # the buy's own request, not the one whose buy published this flush
                    "request_id": traces[settled.request_id] or None,
                    "user_id": settled.user_id,
                    "reservation": settled.request_id,
                    "order_id": settled.order_id,
                    "outcome": "created",
                    "batch_size": len(done.reservations),
                },
            )


# Acked after its transactions, re-queued if the worker dies, and retried through any outage,
# however long: a database outage must not lose a reserved unit (the reconciler is the
# backstop). A retried or redelivered message keeps its task id, the token of its claims.
@shared_task(
    name=writer.ORDER_FLUSH,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=OUTAGES,
    retry_backoff=1,
    retry_backoff_max=30,
    retry_jitter=True,
    max_retries=None,
)
def order_flush(self, *, sale_id: int) -> dict:
    """Write the sale's reservations as orders until none are left (seckill.services.writer)."""
    started = time.perf_counter()
    report = writer.sale_flush(
        sale_id=sale_id, token=self.request.id, on_batch=lambda done: _batch_observed(sale_id, done)
    )
    ORDERS_WRITTEN.labels("created").inc(report.created)
    for outcome, count in report.one_by_one.items():
        ORDERS_WRITTEN.labels(outcome.replace(" ", "_")).inc(count)
    # (not "created": a log record's own attribute, which `extra` may not overwrite)
    summary = {"batches": report.batches, "orders_created": report.created, "orders_one_by_one": report.one_by_one}
    logger.info(
        "order flush: %s orders in %s batches",
        report.created,
        report.batches,
        extra={"sale": sale_id, **summary, "duration_ms": round((time.perf_counter() - started) * 1000, 2)},
    )
    return summary


@shared_task(name="seckill.order_write", bind=True, acks_late=True, autoretry_for=OUTAGES, max_retries=None)
def order_write(self, *, sale_id: int, **_reservation) -> dict:
    """An older release's per-request message (a rolling deploy): its reservation is in the
    sale's outbox like any other, so a flush writes it."""
    return order_flush.run(sale_id=sale_id)


@shared_task(name="seckill.flush_sweep", acks_late=True)
def flush_sweep() -> list[int]:
    """Celery beat: a flush for sales whose reservations wait without one (a lost flush)."""
    published = writer.flushes_lapsed_publish()
    if published:
        logger.warning("flush sweep: reservations waited without a flush on sales %s", published)
    return published


@shared_task(name="seckill.captcha_pool_fill", acks_late=True)
def captcha_pool_fill() -> int:
    """Celery beat: top the captcha pool up for at most SECKILL_CAPTCHA_POOL_FILL_SECONDS."""
    drawn = paths.captcha_pool_fill(seconds=settings.SECKILL_CAPTCHA_POOL_FILL_SECONDS)
    if drawn:
        logger.info("captcha pool: %s drawn", drawn, extra={"captchas_drawn": drawn})
    return drawn


@shared_task(name="seckill.sale_rebuild", acks_late=True, autoretry_for=OUTAGES, retry_backoff=1, max_retries=10)
def sale_rebuild(*, sale_id: int, passes_left: int = 1) -> None:
    """Rebuild a sale whose keys Redis lost, once the queue has gone round.

    Flushes published before the loss may still be writing orders. Queued behind them, this task
    queues itself once more, so that those other workers took finish too; then the stock counts all.
    """
    if passes_left > 0:
        sale_rebuild.apply_async(kwargs={"sale_id": sale_id, "passes_left": passes_left - 1})
        return
    report = reconcile.stock_warm(sale_id=sale_id)
    room_publish(sale_id=sale_id)  # its waiting room went with its keys
    logger.warning("rebuilt sale %s after Redis lost it: %s", sale_id, report)


@shared_task(name="seckill.reconcile", acks_late=True)
def reconcile_sales() -> int:
    """Celery beat: reconcile and repair the sales in play; a sale that fails is counted, the rest go on."""
    repaired = 0
    for report in reconcile.sales_reconcile(repair=True):
        if report.error:
            RECONCILE_FAILURES.inc()
        else:
            repaired += reconcile_repair_record(report=report)
    return repaired


@shared_task(name="seckill.sale_draw", acks_late=True, autoretry_for=OUTAGES, retry_backoff=1, max_retries=10)
def sale_draw(*, sale_id: int) -> str:
    """A draw sale's draw, published with an ETA at the end of its entry window (sales.services)."""
    report = draw.sale_draw(sale_id=sale_id)
    if report.state in ("drawn", "applied"):
        DRAWS.labels(report.state).inc()
    return report.state


@shared_task(name="seckill.draw_sweep", acks_late=True)
def draw_sweep() -> list[int]:
    """Celery beat: the draws due and not made (their ETA message lost or late)."""
    drawn = draw.draws_due()
    if drawn:
        DRAWS.labels("sweep").inc(len(drawn))
        logger.warning("draw sweep: drew sales %s", drawn)
    return drawn


@shared_task(name="seckill.draw_winners_notify", acks_late=True, autoretry_for=OUTAGES, retry_backoff=1, max_retries=10)
def draw_winners_notify(*, sale_id: int) -> int:
    """Text a draw's winners, each once; published by the draw once it is applied."""
    return draw_notices.draw_winners_notify(sale_id=sale_id)


@shared_task(name="seckill.draw_offers_notify", acks_late=True, autoretry_for=OUTAGES, retry_backoff=1, max_retries=10)
def draw_offers_notify(*, sale_id: int) -> int:
    """Text the entrants offered a unit that came back, each once; published by the offer."""
    return draw_notices.draw_offers_notify(sale_id=sale_id)


@shared_task(name="seckill.draw_winners_sweep", acks_late=True)
def draw_winners_sweep() -> int:
    """Celery beat: winners and offered entrants whose message a lost task or a dead sender
    left unsent."""
    return draw_notices.draw_winners_sweep()
