"""Publish Celery tasks by the names each app's tasks.py gives them. Services call this, never a
tasks module: tasks import the services they run, so that would close an import circle."""

import logging
from datetime import datetime

from django.db import transaction
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

from celery_app import app

logger = logging.getLogger(__name__)

# The gate publishes while its shopper waits, and gives the unit back if the broker refuses:
# a publish must fail fast rather than retry for Celery's default of minutes.
FAST_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


def task_publish(name: str, *, kwargs: dict, fast: bool = False, eta: datetime | None = None) -> None:
    """Send the task `name` (to run at `eta` if given); raises the broker's error (OperationalError,
    OSError) once retries are spent. `fast`: FAST_RETRY_POLICY, for a publish someone waits for."""
    if fast:
        app.send_task(name, kwargs=kwargs, eta=eta, retry=True, retry_policy=FAST_RETRY_POLICY)
    else:
        app.send_task(name, kwargs=kwargs, eta=eta)


def task_publish_on_commit(name: str, *, kwargs: dict) -> None:
    """Send the task `name` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: task_publish(name, kwargs=kwargs))


def publisher_warm() -> bool:
    """Do now what a process's first publish would otherwise do while a shopper waits for it:
    import Celery's result backend and the broker's transport, open the producer pool's
    connection and declare the task queues. False when the broker cannot be reached: the first
    publish then tries again, as it would have."""
    try:
        # Each is made on first use: imports, an entry-point scan, the (disabled) event dispatcher.
        app.backend  # noqa: B018
        app.amqp.send_task_message  # noqa: B018
        with app.producer_or_acquire() as producer:
            for queue in app.amqp.queues.values():
                producer.maybe_declare(queue)
    except (BrokerError, OSError, RedisError):
        logger.warning("the broker could not be reached to warm this process's publisher", exc_info=True)
        return False
    return True
