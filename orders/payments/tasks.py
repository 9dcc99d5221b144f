"""The money's background work: the sweeps beat runs and a refund's send. Each task keeps the
name it was registered under before it lived here (orders.*): beat's schedule and the
messages already queued name it so."""

from datetime import date, timedelta

from celery import shared_task
from django.utils import timezone

from orders.payments.closing import payments_left_open_close, payments_unconfirmed_close
from orders.payments.providers import GatewayDown
from orders.payments.reconcile import payments_reconcile
from orders.payments.refunds import refund_send as refund_send_service
from orders.payments.refunds import refunds_resend
from orders.payments.services import payments_sync
from seckill_site.errors import OUTAGES


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
