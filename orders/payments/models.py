"""The money side of an order: each attempt to pay it (Payment), each notification a provider
sent about one (PaymentNotice), each refund (Refund), and what reconciliation found amiss
(PaymentMismatch). Their life is written in orders/payments/__init__.py."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class PaymentStatus(models.TextChoices):
    OPEN = "open", _("waiting for the provider")
    SUCCEEDED = "succeeded", _("paid")
    CLOSED = "closed", _("closed")
    REFUNDING = "refunding", _("being refunded")
    REFUNDED = "refunded", _("refunded")


class PaymentFailure(models.TextChoices):
    """Why an attempt did not go through, as its provider said. The attempt stays open at the
    provider (so it is closed before the order's unit is released, as any open attempt), but
    the shop never tries it again: paying again is a new attempt."""

    DECLINED = "declined", _("the card was declined")
    AUTHENTICATION = "authentication", _("the bank's security check was not passed")
    LEFT = "left", _("the shopper left the cashier without paying")


class Payment(models.Model):
    """One attempt to pay an order at one provider: the shopper was sent to its cashier."""

    order = models.ForeignKey(
        "orders.Order", on_delete=models.PROTECT, related_name="payments", verbose_name=_("order")
    )
    # The provider's name in settings.PAYMENT_PROVIDERS (orders.payments.providers.registry):
    # no choices here, so adding a provider needs no migration.
    provider = models.CharField(_("provider"), max_length=16)
    # Ours, sent to the provider as its merchant-side trade number (and idempotency key).
    # PAYMENT_TRADE_PREFIX, the order number, the attempt's number in the order.
    trade_no = models.CharField(_("trade number"), max_length=64, unique=True)
    # Theirs: the provider's own id of the trade.
    provider_ref = models.CharField(_("provider's reference"), max_length=64, blank=True)
    amount = models.DecimalField(_("amount"), max_digits=10, decimal_places=2)
    currency = models.CharField(_("currency"), max_length=3)
    status = models.CharField(_("status"), max_length=16, choices=PaymentStatus.choices, default=PaymentStatus.OPEN)
    created_at = models.DateTimeField(_("started at"), auto_now_add=True)
    # Set once the provider says this attempt failed; the order stays payable by a new one.
    failure = models.CharField(_("why it failed"), max_length=16, choices=PaymentFailure.choices, blank=True)
    failed_at = models.DateTimeField(_("failed at"), null=True, blank=True)
    # The card's last four digits, for the shopper's receipt ("card •••• 4242"); blank when
    # paid otherwise, or the provider did not say.
    card_last4 = models.CharField(_("card's last 4 digits"), max_length=4, blank=True)
    succeeded_at = models.DateTimeField(_("paid at"), null=True, blank=True)
    closed_at = models.DateTimeField(_("closed at"), null=True, blank=True)
    # False when the order's unit was released without the provider confirming the close
    # (it could not be reached for longer than the sale allows): a success after that is refunded.
    close_confirmed = models.BooleanField(_("close confirmed by the provider"), default=True)
    # The expiry sweep's backoff while the provider cannot be reached to close this attempt.
    close_tries = models.PositiveSmallIntegerField(default=0)
    close_next_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("payment")
        verbose_name_plural = _("payments")
        ordering = ("-created_at",)
        constraints = [
            # No order is paid twice: a second success is refunded, never kept.
            models.UniqueConstraint(
                fields=["order"], condition=models.Q(status="succeeded"), name="one_kept_payment_per_order"
            ),
        ]
        indexes = [
            # The query sweep and the expiry read open attempts by age.
            models.Index(fields=["created_at"], condition=models.Q(status="open"), name="payment_open_created"),
        ]

    def __str__(self) -> str:
        return self.trade_no


class PaymentNotice(models.Model):
    """A provider's notification, stored once: a duplicate finds this row and changes nothing."""

    provider = models.CharField(_("provider"), max_length=16)
    # The provider's id of the notification (its event), unique per provider.
    event_id = models.CharField(_("event"), max_length=128)
    payment = models.ForeignKey(
        Payment, on_delete=models.PROTECT, related_name="notices", null=True, verbose_name=_("payment")
    )
    kind = models.CharField(_("kind"), max_length=64)
    outcome = models.CharField(_("outcome"), max_length=32)
    payload = models.JSONField(_("payload"))
    received_at = models.DateTimeField(_("received at"), auto_now_add=True)

    class Meta:
        verbose_name = _("payment notification")
        verbose_name_plural = _("payment notifications")
        ordering = ("-received_at",)
        constraints = [models.UniqueConstraint(fields=["provider", "event_id"], name="one_notice_per_event")]

    def __str__(self) -> str:
        return f"{self.provider} {self.event_id}"


class RefundKind(models.TextChoices):
    MERCHANT = "merchant", _("by the merchant")
    LATE = "late", _("paid after the order closed")
    DUPLICATE = "duplicate", _("paid twice")


class RefundStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    SUCCEEDED = "succeeded", _("refunded")


class Refund(models.Model):
    """A full refund of one payment: at most one per payment, sent until the provider confirms."""

    payment = models.OneToOneField(Payment, on_delete=models.PROTECT, related_name="refund", verbose_name=_("payment"))
    # Ours, sent to the provider as the refund's request number or idempotency key, so a
    # resend refunds once.
    request_no = models.CharField(_("refund number"), max_length=72, unique=True)
    provider_ref = models.CharField(_("provider's reference"), max_length=64, blank=True)
    amount = models.DecimalField(_("amount"), max_digits=10, decimal_places=2)
    kind = models.CharField(_("kind"), max_length=16, choices=RefundKind.choices)
    reason = models.CharField(_("reason"), max_length=200, blank=True)
    status = models.CharField(_("status"), max_length=16, choices=RefundStatus.choices, default=RefundStatus.PENDING)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, verbose_name=_("by")
    )
    tries = models.PositiveSmallIntegerField(_("tries"), default=0)
    last_error = models.CharField(_("last error"), max_length=200, blank=True)
    created_at = models.DateTimeField(_("requested at"), auto_now_add=True)
    refunded_at = models.DateTimeField(_("refunded at"), null=True, blank=True)

    class Meta:
        verbose_name = _("refund")
        verbose_name_plural = _("refunds")
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return self.request_no


class PaymentMismatch(models.Model):
    """A difference reconciliation found between the shop's payments and a provider's records,
    or a money invariant broken in the shop's own tables. Found once per (day, kind, trade)."""

    day = models.DateField(_("day"))
    provider = models.CharField(_("provider"), max_length=16, blank=True)
    kind = models.CharField(_("kind"), max_length=48)
    trade_no = models.CharField(_("trade number"), max_length=64)
    detail = models.JSONField(_("detail"), default=dict)
    found_at = models.DateTimeField(_("found at"), auto_now_add=True)
    resolved_at = models.DateTimeField(_("resolved at"), null=True, blank=True)

    class Meta:
        verbose_name = _("payment mismatch")
        verbose_name_plural = _("payment mismatches")
        ordering = ("-found_at",)
        constraints = [models.UniqueConstraint(fields=["day", "kind", "trade_no"], name="one_mismatch_per_day_trade")]

    def __str__(self) -> str:
        return f"{self.day} {self.kind} {self.trade_no}"
