"""Writing on an order's thread: the shopper asks, the merchant answers.

A message's text is orders.contact.models.message_text_clean's (MessageInvalid). Only an order
that was paid has a thread (MessageRefused otherwise), and a shopper has at most
UNANSWERED_MAX messages waiting for an answer, counted under the order's row lock so two tabs
cannot pass it together."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from orders.contact.models import THREAD_STATUSES, OrderMessage, message_text_clean
from orders.models import Order
from orders.services import OrderStateError

# A shopper's messages waiting for the merchant at most: a question, its details, a reminder.
UNANSWERED_MAX = 5


class MessageRefused(OrderStateError):
    """The order cannot take this message now; str() says why."""


def _writable(order_id: int) -> Order:
    order = Order.objects.select_for_update().get(pk=order_id)
    if order.status not in THREAD_STATUSES:
        raise MessageRefused(_("You can write to the merchant once the order is paid."))
    return order


def order_message_ask(*, order_id: int, text: str, actor_id: int) -> OrderMessage:
    """The shopper writes to the merchant about their order. MessageInvalid for a bad text,
    MessageRefused for an unpaid order or too many messages waiting."""
    text = message_text_clean(text)
    with transaction.atomic():
        order = _writable(order_id)
        waiting = OrderMessage.objects.filter(order=order, from_merchant=False, answered_at__isnull=True).count()
        if waiting >= UNANSWERED_MAX:
            raise MessageRefused(
                ngettext(
                    "%(n)d message waits for the merchant's answer: wait for it before writing again.",
                    "%(n)d messages wait for the merchant's answer: wait for it before writing again.",
                    waiting,
                )
                % {"n": waiting}
            )
        return OrderMessage.objects.create(order=order, from_merchant=False, author_id=actor_id, text=text)


def order_message_answer(*, order_id: int, text: str, actor_id: int) -> OrderMessage:
    """The merchant writes on the order's thread; the shopper's messages waiting are answered
    by it. The shopper is texted about it by beat's sweep (orders.contact.notices)."""
    text = message_text_clean(text)
    with transaction.atomic():
        order = _writable(order_id)
        message = OrderMessage.objects.create(order=order, from_merchant=True, author_id=actor_id, text=text)
        OrderMessage.objects.filter(order=order, from_merchant=False, answered_at__isnull=True).update(
            answered_at=timezone.now()
        )
    return message
