"""Database connections in Celery tasks, kept as a request keeps them."""

from celery.signals import task_postrun, task_prerun
from django.db import close_old_connections


@task_prerun.connect(dispatch_uid="seckill.db_connections.prerun")
@task_postrun.connect(dispatch_uid="seckill.db_connections.postrun")
def task_connections_tidy(**_signal) -> None:
    """Treat each task like a request: keep a healthy connection for CONN_MAX_AGE, drop a
    broken or obsolete one (after a PostgreSQL restart, say). Celery's own Django fixup
    would otherwise close and reopen the connection around every task (CELERY_DB_REUSE_MAX),
    which cost one new PostgreSQL backend per order in `make bench`."""
    close_old_connections()
