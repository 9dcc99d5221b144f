"""Database connections in Celery tasks, kept as a request keeps them."""

from celery.signals import task_postrun, task_prerun
from django.db import close_old_connections


@task_prerun.connect(dispatch_uid="seckill.db_connections.prerun")
@task_postrun.connect(dispatch_uid="seckill.db_connections.postrun")
def task_connections_tidy(**_signal) -> None:
    """Treat each task like a request: keep a healthy connection for CONN_MAX_AGE, drop a broken
    one. Celery's fixup would otherwise reconnect around every task (CELERY_DB_REUSE_MAX)."""
    close_old_connections()
