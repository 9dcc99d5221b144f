from celery import shared_task
from django.db import InterfaceError, OperationalError

from seckill import services


@shared_task(
    name="seckill.order_write",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=1,
    retry_backoff_max=30,
    retry_jitter=True,
    max_retries=None,  # a database outage must not lose a reserved unit; the reconciler is the backstop
)
def order_write(*, sale_id: int, user_id: int, request_id: str) -> str:
    return services.seckill_order_write(sale_id=sale_id, user_id=user_id, request_id=request_id).value


@shared_task(name="seckill.sale_rebuild", acks_late=True, autoretry_for=(OperationalError,), retry_backoff=1)
def sale_rebuild(*, sale_id: int) -> None:
    services.stock_warm(sale_id=sale_id)


@shared_task(name="seckill.reconcile", acks_late=True)
def reconcile() -> int:
    """Celery beat, every minute: finish stale reservations and repair drift on live sales."""
    repaired = 0
    for sale_id in services.sales_to_reconcile():
        report = services.sale_reconcile(sale_id=sale_id, repair=True)
        repaired += bool(report.finished or report.after)
    return repaired
