"""The sales app's Celery tasks. Services publish them by name (seckill_site.publish)."""

from celery import shared_task

from sales.reminders import services as reminders


# Named as when it lived in goods: beat and the queued messages of a running release still ask for it.
@shared_task(name="goods.sale_reminders_send", acks_late=True)
def sale_reminders_send() -> int:
    """Celery beat: text the sale reminders due, each once (sales.reminders.services)."""
    return reminders.sale_reminders_send()
