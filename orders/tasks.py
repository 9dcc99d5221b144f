from celery import shared_task

from orders import notices
from orders.contact import notices as contact_notices
from orders.fulfilment import notices as fulfilment_notices
from orders.fulfilment.returns import orders_complete_overdue
from orders.metrics import ORDERS_EXPIRED

# Celery's autodiscovery imports each app's tasks.py and no deeper: importing a feature's tasks
# here registers them with the worker.
from orders.payments import tasks as payments_tasks  # noqa: F401
from orders.payments.closing import orders_expire_unpaid
from seckill_site.errors import OUTAGES


@shared_task(name="orders.expire_unpaid", acks_late=True, autoretry_for=OUTAGES, retry_backoff=5, max_retries=3)
def expire_unpaid() -> int:
    """Celery beat runs this every SECKILL_EXPIRE_SWEEP_SECONDS (settings.CELERY_BEAT_SCHEDULE)."""
    expired = orders_expire_unpaid()
    ORDERS_EXPIRED.inc(expired)
    return expired


@shared_task(name="orders.pay_reminders_send", acks_late=True)
def pay_reminders_send() -> int:
    """Celery beat: warn the buyers of unpaid orders about to expire, each once (orders.notices)."""
    return notices.pay_reminders_send()


@shared_task(name="orders.order_news_send", acks_late=True)
def order_news_send() -> int:
    """Celery beat: text each order shipped and each refund request answered, once (orders.fulfilment.notices)."""
    return fulfilment_notices.order_news_send()


@shared_task(name="orders.merchant_replies_send", acks_late=True)
def merchant_replies_send() -> int:
    """Celery beat: text the shopper once about each answer a merchant wrote on an order (orders.contact.notices)."""
    return contact_notices.merchant_replies_send()


@shared_task(name="orders.auto_complete", acks_late=True, autoretry_for=OUTAGES, retry_backoff=5, max_retries=3)
def auto_complete() -> int:
    """Celery beat: complete the shipped orders due, unless a return holds them (orders.fulfilment.returns)."""
    return orders_complete_overdue()
