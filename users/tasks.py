"""The users app's Celery tasks."""

from celery import shared_task

from users import notices


@shared_task(name="users.notices_expire", acks_late=True)
def notices_expire() -> int:
    """Celery beat: skip the notices whose time to be sent has passed (users.notices)."""
    return notices.notices_expire()
