"""The Celery broker's queues: RabbitMQ in production, Redis in the embedded single-node mode.

    CELERY_BROKER_URL=amqp://u:p@rabbit1:5672//;amqp://u:p@rabbit2:5672//;...  (failover list)

On RabbitMQ the task queue is a quorum queue (losing its leader loses no message) on a topic
exchange, as Celery's delayed delivery needs. A message that fails for good is dead-lettered to
`<queue>.dead` for an operator to read, never dropped."""

from __future__ import annotations

from celery.signals import worker_ready
from django.conf import settings
from kombu import Connection, Exchange, Queue

DEAD_LETTER_EXCHANGE = "seckill.dead-letter"
# Deliveries before RabbitMQ dead-letters a message: that many crashes mean it is the cause.
DELIVERY_LIMIT = 10


def is_amqp(broker_url: str) -> bool:
    return broker_url.split(";")[0].strip().startswith(("amqp://", "amqps://", "pyamqp://"))


def dead_letter_queue_name(queue: str) -> str:
    return f"{queue}.dead"


def _expiry(expires_ms: int | None) -> dict:
    """RabbitMQ deletes a queue unused this long (x-expires): a test run's own queues."""
    return {"x-expires": expires_ms} if expires_ms else {}


def task_queues(queue: str, *, broker_url: str, expires_ms: int | None = None) -> tuple[Queue, ...]:
    """The task queue (CELERY_TASK_QUEUES), declared alike everywhere; `expires_ms` for tests."""
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
    """Declare the dead-letter exchange and queue; idempotent. Celery declares no queue nobody consumes."""
    dead_letter_queue(queue)(connection.default_channel).declare()


def task_queue_empty(connection: Connection, queue: Queue) -> None:
    """Delete and declare `queue` again, empty (tests, bench): unlike a purge this also replaces a
    queue declared with other arguments, which RabbitMQ would refuse."""
    bound = queue(connection.default_channel)
    bound.delete()
    bound.declare()


@worker_ready.connect(dispatch_uid="seckill.broker.dead_letter")
def dead_letter_queue_ready(sender, **_signal) -> None:
    """RabbitMQ: a worker's failed messages have somewhere to go before it takes any."""
    if is_amqp(settings.CELERY_BROKER_URL):
        with sender.app.connection_for_write() as connection:
            dead_letter_queue_declare(connection, settings.CELERY_TASK_DEFAULT_QUEUE)
