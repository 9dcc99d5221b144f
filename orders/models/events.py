"""The order's audit trail (OrderEvent): every move an order made after it was placed and who
made it, written by paying, cancelling, shipping and refunding alike
(orders.services.order_event_record)."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class OrderEventKind(models.TextChoices):
    PAID = "paid", _("paid")
    SHIPPED = "shipped", _("shipped")
    DELIVERED = "delivered", _("delivered")
    CANCELLED = "cancelled", _("cancelled")
    REFUND_REQUESTED = "refund requested", _("refund requested")
    REFUND_DECLINED = "refund declined", _("refund declined")
    REFUND_WITHDRAWN = "refund withdrawn", _("refund request withdrawn")
    REFUNDED = "refunded", _("refunded")
    # Shipped orders complete by themselves after ORDER_AUTO_COMPLETE_DAYS (the shop is "who").
    COMPLETED = "completed", _("completed automatically")
    RETURN_REQUESTED = "return requested", _("return requested")
    RETURN_APPROVED = "return approved", _("return approved")
    RETURN_DECLINED = "return declined", _("return declined")
    RETURN_WITHDRAWN = "return withdrawn", _("return request withdrawn")
    RETURN_SENT = "return sent", _("parcel sent back")
    RETURN_RECEIVED = "return received", _("parcel came back")


class OrderEvent(models.Model):
    """The audit trail: one row per move of an order after it was placed, written in the
    move's own transaction. `actor` is the merchant or shopper who made it; None when the
    shop did (a payment provider's word, the expiry sweep)."""

    order = models.ForeignKey("orders.Order", on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(_("what happened"), max_length=24, choices=OrderEventKind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    note = models.CharField(_("note"), max_length=200, blank=True)
    at = models.DateTimeField(_("at"), default=timezone.now)

    class Meta:
        verbose_name = _("order event")
        verbose_name_plural = _("order events")
        ordering = ("at", "pk")
        indexes = [models.Index(fields=["order", "at"])]

    def __str__(self) -> str:
        return f"{self.order_id} {self.kind} {self.at:%Y-%m-%d %H:%M:%S}"
