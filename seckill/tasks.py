import logging
import time

from celery import shared_task
from django.conf import settings
from django_redis.exceptions import ConnectionInterrupted

from seckill import services
from seckill.repairs import reconcile_repair_record
from seckill_site.errors import UNAVAILABLE
from seckill_site.metrics import ORDERS_WRITTEN, WRITER_BATCH_SECONDS, WRITER_BATCH_SIZE

logger = logging.getLogger(__name__)

# Outages the order writer waits out rather than drop a reserved unit: the database (its
# writes) and Redis (the result the shopper polls), a Redis Cluster failover included. Found
# by `make faults`: a task that died on a Redis restart was acked and gone, and its shopper
# was told -1. (django-redis wraps the cache's Redis errors in ConnectionInterrupted.)
OUTAGES = (*UNAVAILABLE, ConnectionInterrupted)

# Both order writers (per request and per flush): acked after their transaction, re-queued if
# the worker dies, and retried through any outage, however long: a database outage must not
# lose a reserved unit (the reconciler is the backstop).
WRITER_TASK_OPTIONS = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": OUTAGES,
    "retry_backoff": 1,
    "retry_backoff_max": 30,
    "retry_jitter": True,
    "max_retries": None,
}


@shared_task(name="seckill.order_write", **WRITER_TASK_OPTIONS)
def order_write(*, sale_id: int, user_id: int, request_id: str) -> str:
    started = time.perf_counter()
    outcome = services.seckill_order_write(sale_id=sale_id, user_id=user_id, request_id=request_id).value
    ORDERS_WRITTEN.labels(outcome.replace(" ", "_")).inc()
    # `request_id` here is the reservation's; the log line's own request_id is the HTTP
    # request's that queued it (seckill_site.logs carries it in the message headers).
    logger.info(
        "order write: %s",
        outcome,
        extra={
            "sale": sale_id,
            "user_id": user_id,
            "reservation": request_id,
            "outcome": outcome,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        },
    )
    return outcome


def _batch_observed(sale_id: int, done: services.BatchDone) -> None:
    """Metrics for the batch, and a log line for each order it wrote: the line carries the
    reservation id that the buy's own request line carries too (seckill.observe)."""
    WRITER_BATCH_SIZE.observe(len(done.reservations))
    WRITER_BATCH_SECONDS.observe(done.seconds)
    for reservation, order_id in done.created.items():
        logger.info(
            "order write: created",
            extra={
                "sale": sale_id,
                # the buy's own request, not the one whose buy published this flush
                "request_id": done.traces[reservation] or None,
                "user_id": done.reservations[reservation],
                "reservation": reservation,
                "order_id": order_id,
                "outcome": "created",
                "batch_size": len(done.reservations),
            },
        )


@shared_task(name="seckill.order_flush", **WRITER_TASK_OPTIONS)
def order_flush(*, sale_id: int) -> dict:
    """The batch writer: write the sale's reservations as orders until none are left. The
    gate publishes this when a buy finds no flush pending (reserve.lua's flush mark)."""
    started = time.perf_counter()
    report = services.sale_flush(sale_id=sale_id, on_batch=lambda done: _batch_observed(sale_id, done))
    ORDERS_WRITTEN.labels("created").inc(report.created)
    for outcome, count in report.one_by_one.items():
        ORDERS_WRITTEN.labels(outcome.replace(" ", "_")).inc(count)
    # (not "created": a log record's own attribute, which `extra` may not overwrite)
    summary = {
        "batches": report.batches,
        "orders_created": report.created,
        "orders_one_by_one": report.one_by_one,
    }
    logger.info(
        "order flush: %s orders in %s batches",
        report.created,
        report.batches,
        extra={"sale": sale_id, **summary, "duration_ms": round((time.perf_counter() - started) * 1000, 2)},
    )
    return summary


@shared_task(name="seckill.flush_sweep", acks_late=True)
def flush_sweep() -> list[int]:
    """Celery beat: a flush for sales whose reservations wait without one (a lost flush)."""
    if settings.SECKILL_ORDER_WRITER != "batch":
        return []
    published = services.flushes_lapsed_publish()
    if published:
        logger.warning("flush sweep: reservations waited without a flush on sales %s", published)
    return published


@shared_task(name="seckill.sale_rebuild", acks_late=True, autoretry_for=OUTAGES, retry_backoff=1, max_retries=10)
def sale_rebuild(*, sale_id: int, passes_left: int = 1) -> None:
    """Rebuild a sale whose keys Redis lost, once the queue has gone round.

    Order messages published before the loss still carry units Redis no longer knows about.
    This task was queued behind them; it queues itself once more so that those already taken
    by other workers have finished too. Only then does the database stock count them all.
    """
    if passes_left > 0:
        sale_rebuild.apply_async(kwargs={"sale_id": sale_id, "passes_left": passes_left - 1})
        return
    report = services.stock_warm(sale_id=sale_id)
    logger.warning("rebuilt sale %s after Redis lost it: %s", sale_id, report)


@shared_task(name="seckill.reconcile", acks_late=True)
def reconcile() -> int:
    """Celery beat, every minute: finish stale reservations and repair drift on live sales."""
    repaired = 0
    for sale_id in services.sales_to_reconcile():
        report = services.sale_reconcile(sale_id=sale_id, repair=True)
        repaired += reconcile_repair_record(report=report)
    return repaired
