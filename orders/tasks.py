from celery import shared_task

from orders import services
from orders.metrics import ORDERS_EXPIRED
from seckill_site.errors import OUTAGES


@shared_task(name="orders.expire_unpaid", acks_late=True, autoretry_for=OUTAGES, retry_backoff=5, max_retries=3)
def expire_unpaid() -> int:
    """Celery beat runs this every SECKILL_EXPIRE_SWEEP_SECONDS (settings.CELERY_BEAT_SCHEDULE)."""
    expired = services.orders_expire_unpaid()
    ORDERS_EXPIRED.inc(expired)
    return expired
