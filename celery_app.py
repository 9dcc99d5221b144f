"""The Celery application: settings come from Django's, under the CELERY_ namespace."""

import os

from celery import Celery
from celery.signals import after_setup_logger, before_task_publish, task_postrun, task_prerun, worker_init, worker_ready

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


@worker_init.connect(dispatch_uid="seckill.metrics.worker_exporter")
def _metrics_exporter(**kwargs) -> None:
    """CELERY_METRICS_PORT set: the worker serves its Prometheus metrics (seckill_site.metrics)."""
    from seckill_site.metrics import worker_exporter_start

    worker_exporter_start()


@before_task_publish.connect(dispatch_uid="seckill.logs.publish")
def _request_id_to_message(**kwargs) -> None:
    from seckill_site.logs import task_publish_add_request_id

    task_publish_add_request_id(**kwargs)


@task_prerun.connect(dispatch_uid="seckill.logs.prerun")
def _request_id_from_message(**kwargs) -> None:
    from seckill_site.logs import task_prerun_set_request_id

    task_prerun_set_request_id(**kwargs)


@task_postrun.connect(dispatch_uid="seckill.logs.postrun")
def _request_id_cleared(**kwargs) -> None:
    from seckill_site.logs import task_postrun_clear_request_id

    task_postrun_clear_request_id(**kwargs)


@after_setup_logger.connect(dispatch_uid="seckill.logs.worker")
def _worker_logs_like_django(**kwargs) -> None:
    """Production (LOG_JSON): once Celery has set up its logging, apply Django's LOGGING, so a
    worker writes the same one-JSON-object-per-line records as the web processes."""
    import logging.config

    from django.conf import settings

    if getattr(settings, "LOG_JSON", False):
        logging.config.dictConfig(settings.LOGGING)
