"""The goods app's Celery tasks. Services publish them by name (seckill_site.publish)."""

from celery import shared_task

from goods import reminders


@shared_task(name="goods.sale_reminders_send", acks_late=True)
def sale_reminders_send() -> int:
    """Celery beat: text the sale reminders due, each once (goods.reminders)."""
    return reminders.sale_reminders_send()
