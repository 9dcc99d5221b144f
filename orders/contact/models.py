"""The messages between a shopper and the merchant about one order (OrderMessage), and what a
message may be (message_text_clean), which the forms and the services both apply.

A message is plain text: line ends made "\n", trailing spaces and more than one blank line in a
row dropped, at most MESSAGE_MAX characters. Control characters and the bidirectional
overrides that make text read other than it is stored are refused (MessageInvalid), never
quietly removed."""

import re
import unicodedata

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from orders.models.order import PAID_STATUSES, OrderStatus

# The longest message, in characters: a question and its details, not a letter.
MESSAGE_MAX = 500
# The orders that have a thread: those the shopper paid for.
THREAD_STATUSES = (*PAID_STATUSES, OrderStatus.REFUNDED)
# Unicode's bidirectional embeddings, overrides and isolates.
_BIDI = {chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


class MessageInvalid(ValueError):
    """The text is no message the shop keeps; str() says why, in the writer's language."""


def message_text_clean(text: str) -> str:
    """`text` as the thread keeps it, or MessageInvalid."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    if any((char != "\n" and unicodedata.category(char) == "Cc") or char in _BIDI for char in text):
        raise MessageInvalid(_("A message is plain text: it has a character that cannot be shown."))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in text.split("\n"))).strip()
    if not text:
        raise MessageInvalid(_("Write your message."))
    if len(text) > MESSAGE_MAX:
        raise MessageInvalid(
            _("A message has at most %(max)d characters; this one has %(n)d.") % {"max": MESSAGE_MAX, "n": len(text)}
        )
    return text


class OrderMessage(models.Model):
    """One message of an order's thread, from its shopper or from the merchant. A shopper's
    message waits for an answer until the merchant writes on the order (`answered_at`)."""

    order = models.ForeignKey(
        "orders.Order", on_delete=models.CASCADE, related_name="messages", verbose_name=gettext_lazy("order")
    )
    from_merchant = models.BooleanField(gettext_lazy("from the merchant"))
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    text = models.CharField(gettext_lazy("message"), max_length=MESSAGE_MAX)
    created_at = models.DateTimeField(gettext_lazy("written at"), default=timezone.now)
    answered_at = models.DateTimeField(gettext_lazy("answered at"), null=True, blank=True)

    class Meta:
        verbose_name = gettext_lazy("order message")
        verbose_name_plural = gettext_lazy("order messages")
        ordering = ("created_at", "pk")
        indexes = [
            models.Index(fields=["order", "created_at"]),
            # The merchant's "messages to answer": the shoppers' messages not answered yet.
            models.Index(
                fields=["order"],
                condition=models.Q(from_merchant=False, answered_at__isnull=True),
                name="order_message_unanswered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order_id} {'merchant' if self.from_merchant else 'shopper'} {self.created_at:%Y-%m-%d %H:%M}"
