"""The Celery application: settings come from Django's, under the CELERY_ namespace."""

import os

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.local")

app = Celery("seckill")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect(dispatch_uid="seckill.db_connections.prerun")
@task_postrun.connect(dispatch_uid="seckill.db_connections.postrun")
def _close_old_connections(**kwargs) -> None:
    """Treat each task like a request: keep a healthy connection for CONN_MAX_AGE, drop a
    broken or obsolete one (after a PostgreSQL restart, say). Celery's own Django fixup
    would otherwise close and reopen the connection around every task (CELERY_DB_REUSE_MAX
    below), which cost one new PostgreSQL backend per order in `make bench`."""
    from django.db import close_old_connections

    close_old_connections()


@worker_ready.connect(dispatch_uid="seckill.broker.dead_letter")
def _declare_dead_letter_queue(sender, **kwargs) -> None:
    """RabbitMQ: make sure failed messages have somewhere to go (seckill_site/broker.py)."""
    from django.conf import settings

    from seckill_site.broker import dead_letter_queue_declare, is_amqp

    if is_amqp(settings.CELERY_BROKER_URL):
        with app.connection_for_write() as connection:
            dead_letter_queue_declare(connection, settings.CELERY_TASK_DEFAULT_QUEUE)
