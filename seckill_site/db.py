"""Database connections as the shop keeps them: in Celery tasks as in requests, and a server
that takes no writes treated as the outage it is."""

from celery.signals import task_postrun, task_prerun
from django.db import InternalError, OperationalError, close_old_connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from psycopg2.errors import ReadOnlySqlTransaction


@task_prerun.connect(dispatch_uid="seckill.db_connections.prerun")
@task_postrun.connect(dispatch_uid="seckill.db_connections.postrun")
def task_connections_tidy(**_signal) -> None:
    """Treat each task like a request: keep a healthy connection for CONN_MAX_AGE, drop a broken
    one. Celery's fixup would otherwise reconnect around every task (CELERY_DB_REUSE_MAX)."""
    close_old_connections()


def read_only_is_an_outage(execute, sql, params, many, context):
    """A write that reached a server in recovery raises OperationalError, not InternalError.

    During a failover a leader demoted to a standby, or a standby not yet out of the balancer's
    rotation, refuses writes for a few seconds: the same outage as a refused connection, so a
    request answers 503 "busy, retry" and a task retries (seckill_site.errors), never 500."""
    try:
        return execute(sql, params, many, context)
    except InternalError as error:
        if isinstance(error.__cause__, ReadOnlySqlTransaction):
            raise OperationalError(str(error).strip()) from error
        raise


@receiver(connection_created, dispatch_uid="seckill.db_connections.read_only")
def read_only_wrapper_install(*, connection: BaseDatabaseWrapper, **_signal) -> None:
    """On every connection, once: a wrapper object outlives the connections it reopens."""
    if read_only_is_an_outage not in connection.execute_wrappers:
        connection.execute_wrappers.append(read_only_is_an_outage)
