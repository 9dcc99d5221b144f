"""The Celery broker's queues: RabbitMQ quorum queues with a dead-letter queue in production,
Redis in the embedded single-node mode.

    CELERY_BROKER_URL=amqp://u:p@rabbit1:5672//;amqp://u:p@rabbit2:5672//;...

A `;`-separated list is kombu's failover list: a publisher or worker that loses its broker
node moves to the next. On RabbitMQ the task queue is a quorum queue (Raft-replicated over
the cluster's nodes, so losing its leader loses no message), on a topic exchange, which
Celery's native delayed delivery needs for retries with a countdown on quorum queues. A
message that fails for good (a task that raised past its retries, or one redelivered
DELIVERY_LIMIT times because it keeps killing workers) is dead-lettered to `<queue>.dead`
for an operator to read, instead of being dropped.
"""

from __future__ import annotations

from celery.signals import worker_ready
from django.conf import settings
from kombu import Connection, Exchange, Queue

DEAD_LETTER_EXCHANGE = "seckill.dead-letter"
# Deliveries of one message before RabbitMQ dead-letters it: a worker crash (kill -9, OOM)
# redelivers the message it held; ten crashes on one message means the message is the cause.
DELIVERY_LIMIT = 10


def is_amqp(broker_url: str) -> bool:
    return broker_url.split(";")[0].strip().startswith(("amqp://", "amqps://", "pyamqp://"))


def dead_letter_queue_name(queue: str) -> str:
    return f"{queue}.dead"


def _expiry(expires_ms: int | None) -> dict:
    """RabbitMQ deletes a queue unused this long (x-expires): a test run's own queues."""
    return {"x-expires": expires_ms} if expires_ms else {}


def task_queues(queue: str, *, broker_url: str, expires_ms: int | None = None) -> tuple[Queue, ...]:
    """The queue every task goes to (CELERY_TASK_QUEUES), declared the same by every worker,
    publisher and test. `expires_ms`: CELERY_QUEUE_EXPIRES_MS (tests; production keeps its queues)."""
    if not is_amqp(broker_url):
        return (Queue(queue, Exchange(queue), routing_key=queue),)
    arguments = {
        "x-queue-type": "quorum",
        "x-delivery-limit": DELIVERY_LIMIT,
        "x-dead-letter-exchange": DEAD_LETTER_EXCHANGE,
        "x-dead-letter-routing-key": dead_letter_queue_name(queue),
        **_expiry(expires_ms),
    }
    return (Queue(queue, Exchange(queue, type="topic"), routing_key=queue, queue_arguments=arguments),)


def dead_letter_queue(queue: str) -> Queue:
    name = dead_letter_queue_name(queue)
    exchange = Exchange(DEAD_LETTER_EXCHANGE, type="direct")
    arguments = {"x-queue-type": "quorum", **_expiry(getattr(settings, "CELERY_QUEUE_EXPIRES_MS", None))}
    return Queue(name, exchange, routing_key=name, queue_arguments=arguments)


def dead_letter_queue_declare(connection: Connection, queue: str) -> None:
    """Declare the dead-letter exchange and queue (idempotent). Workers do it at start-up: a
    queue nobody consumes is not declared by Celery itself."""
    dead_letter_queue(queue)(connection.default_channel).declare()


def task_queue_empty(connection: Connection, queue: Queue) -> None:
    """Start a test or bench run on an empty task queue: leftovers of an aborted run name rows
    that no longer exist. Deleting and declaring again, rather than purging, also replaces a
    queue that an earlier version declared with other arguments (RabbitMQ would refuse it)."""
    bound = queue(connection.default_channel)
    bound.delete()
    bound.declare()


@worker_ready.connect(dispatch_uid="seckill.broker.dead_letter")
def dead_letter_queue_ready(sender, **_signal) -> None:
    """RabbitMQ: make sure a worker's failed messages have somewhere to go before it takes any."""
    if is_amqp(settings.CELERY_BROKER_URL):
        with sender.app.connection_for_write() as connection:
            dead_letter_queue_declare(connection, settings.CELERY_TASK_DEFAULT_QUEUE)
