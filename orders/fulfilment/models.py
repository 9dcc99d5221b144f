"""What happens to an order after it is paid: its parcel (Shipment), the shopper's refund
requests before it ships (RefundRequest) and return requests after (ReturnRequest). The moves
themselves are orders.fulfilment.services and .returns; each writes its line of the order's
trail (orders.models.events)."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Carrier(models.TextChoices):
    SF = "sf", _("SF Express")
    JD = "jd", _("JD Logistics")
    EMS = "ems", _("China Post EMS")
    ZTO = "zto", _("ZTO Express")
    YTO = "yto", _("YTO Express")
    STO = "sto", _("STO Express")
    YUNDA = "yunda", _("Yunda Express")
    JT = "jt", _("J&T Express")
    DEPPON = "deppon", _("Deppon Express")
    OTHER = "other", _("other carrier")


class Shipment(models.Model):
    """The parcel of a shipped order: its own table, written when the merchant ships, so the
    order writers' hot INSERT stays as narrow as it was."""

    order = models.OneToOneField(
        "orders.Order", on_delete=models.CASCADE, primary_key=True, related_name="shipment", verbose_name=_("order")
    )
    carrier = models.CharField(_("carrier"), max_length=16, choices=Carrier.choices)
    tracking_no = models.CharField(_("tracking number"), max_length=40)
    shipped_at = models.DateTimeField(_("shipped at"))
    delivered_at = models.DateTimeField(_("delivered at"), null=True, blank=True)

    class Meta:
        verbose_name = _("shipment")
        verbose_name_plural = _("shipments")

    def __str__(self) -> str:
        return f"{self.get_carrier_display()} {self.tracking_no}"


class RefundRequestStatus(models.TextChoices):
    OPEN = "open", _("waiting for the merchant")
    APPROVED = "approved", _("approved")
    DECLINED = "declined", _("declined")
    WITHDRAWN = "withdrawn", _("withdrawn by the shopper")


class RefundRequest(models.Model):
    """A shopper asks for their money back on a paid order not yet shipped; the merchant
    approves (the order is refunded through its payment provider) or declines with a word,
    unless the shopper withdraws it first."""

    order = models.ForeignKey(
        "orders.Order", on_delete=models.CASCADE, related_name="refund_requests", verbose_name=_("order")
    )
    reason = models.CharField(_("reason"), max_length=200)
    status = models.CharField(
        _("status"), max_length=16, choices=RefundRequestStatus.choices, default=RefundRequestStatus.OPEN
    )
    created_at = models.DateTimeField(_("asked at"), auto_now_add=True)
    decided_at = models.DateTimeField(_("decided at"), null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    answer = models.CharField(_("merchant's answer"), max_length=200, blank=True)

    class Meta:
        verbose_name = _("refund request")
        verbose_name_plural = _("refund requests")
        ordering = ("-created_at",)
        constraints = [
            # A double click or two tabs cannot open two requests for one order.
            models.UniqueConstraint(
                fields=["order"], condition=models.Q(status="open"), name="one_open_refund_request_per_order"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order_id}: {self.get_status_display()}"


class ReturnRequestStatus(models.TextChoices):
    OPEN = "open", _("waiting for the merchant")
    APPROVED = "approved", _("approved: to send back")
    SENT = "sent", _("parcel on its way back")
    REFUNDED = "refunded", _("parcel back, refunded")
    DECLINED = "declined", _("declined")
    WITHDRAWN = "withdrawn", _("withdrawn by the shopper")


# The statuses of a return still under way: it holds the order (no auto-completion meanwhile).
RETURN_ACTIVE = (ReturnRequestStatus.OPEN, ReturnRequestStatus.APPROVED, ReturnRequestStatus.SENT)


class ReturnRequest(models.Model):
    """After-sales on a shipped or delivered order (退货退款): the shopper asks to send it back;
    the merchant approves with the address to send it to, or declines with a word; the shopper
    gives the carrier and tracking number of the parcel sent back; the merchant marks it
    received, which refunds the order. The moves are orders.fulfilment.returns'."""

    order = models.ForeignKey(
        "orders.Order", on_delete=models.CASCADE, related_name="return_requests", verbose_name=_("order")
    )
    reason = models.CharField(_("reason"), max_length=200)
    status = models.CharField(
        _("status"), max_length=16, choices=ReturnRequestStatus.choices, default=ReturnRequestStatus.OPEN
    )
    created_at = models.DateTimeField(_("asked at"), auto_now_add=True)
    decided_at = models.DateTimeField(_("decided at"), null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    answer = models.CharField(_("merchant's answer"), max_length=200, blank=True)
    return_address = models.CharField(_("return address"), max_length=200, blank=True)
    carrier = models.CharField(_("carrier"), max_length=16, choices=Carrier.choices, blank=True)
    tracking_no = models.CharField(_("tracking number"), max_length=40, blank=True)
    sent_at = models.DateTimeField(_("sent back at"), null=True, blank=True)
    refunded_at = models.DateTimeField(_("refunded at"), null=True, blank=True)

    class Meta:
        verbose_name = _("return request")
        verbose_name_plural = _("return requests")
        ordering = ("-created_at", "-pk")
        constraints = [
            # One return under way per order, whatever double clicks or two tabs send.
            models.UniqueConstraint(
                fields=["order"],
                condition=models.Q(status__in=["open", "approved", "sent"]),
                name="one_active_return_request_per_order",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order_id}: {self.get_status_display()}"
