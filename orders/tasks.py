from datetime import date, timedelta

from celery import shared_task
from django.utils import timezone

from orders import notices
from orders.metrics import ORDERS_EXPIRED
from orders.payments.closing import orders_expire_unpaid, payments_left_open_close, payments_unconfirmed_close
from orders.payments.providers import GatewayDown
from orders.payments.reconcile import payments_reconcile
from orders.payments.refunds import refund_send as refund_send_service
from orders.payments.refunds import refunds_resend
from orders.payments.services import payments_sync
from seckill_site.errors import OUTAGES


@shared_task(name="orders.expire_unpaid", acks_late=True, autoretry_for=OUTAGES, retry_backoff=5, max_retries=3)
def expire_unpaid() -> int:
    """Celery beat runs this every SECKILL_EXPIRE_SWEEP_SECONDS (settings.CELERY_BEAT_SCHEDULE)."""
    expired = orders_expire_unpaid()
    ORDERS_EXPIRED.inc(expired)
    return expired


@shared_task(name="orders.payments_sync", acks_late=True, autoretry_for=OUTAGES, retry_backoff=5, max_retries=3)
def sync_payments() -> int:
    """Ask the providers about attempts whose notification has not come, close attempts left
    open on orders settled otherwise, and ask again about closes left unconfirmed (beat)."""
    payments_left_open_close()
    payments_unconfirmed_close()
    return payments_sync()


@shared_task(
    name="orders.refund_send",
    acks_late=True,
    autoretry_for=(*OUTAGES, GatewayDown),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=8,
)
def refund_send(refund_id: int) -> bool:
    return refund_send_service(refund_id=refund_id)


@shared_task(name="orders.refunds_resend", acks_late=True, autoretry_for=OUTAGES, retry_backoff=5, max_retries=3)
def resend_refunds() -> int:
    """Pending refunds whose task was lost or ran out of retries (beat)."""
    return refunds_resend()


@shared_task(name="orders.payments_reconcile", acks_late=True, autoretry_for=OUTAGES, retry_backoff=60, max_retries=3)
def reconcile_payments(day: str | None = None) -> dict:
    """Yesterday's payments against the providers' records (beat, daily)."""
    chosen = date.fromisoformat(day) if day else timezone.localdate() - timedelta(days=1)
    return payments_reconcile(day=chosen)


@shared_task(name="orders.pay_reminders_send", acks_late=True)
def pay_reminders_send() -> int:
    """Celery beat: warn the buyers of unpaid orders about to expire, each once (orders.notices)."""
    return notices.pay_reminders_send()
