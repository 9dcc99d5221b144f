"""A sale's waiting room as the merchant sets it, the shop-wide switches, and the log of every
switch thrown and setting changed.

PostgreSQL holds the truth; the web nodes read what waitingroom.services publishes of it to
Redis (waitingroom.room), so a Redis that lost the rooms gets them back from here
(`manage.py waiting_rooms_publish`, `seckill_warm`).
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from sales.models import Sale

PASS_MINUTES_MIN = 1
PASS_MINUTES_MAX = 60
PASS_MINUTES_DEFAULT = 10
ADMIT_PER_MINUTE_MAX = 1_000_000
ACTIVE_SHOPPERS_MAX = 1_000_000

# What the merchant sets on the room's page; the switches are thrown apart from it.
SETTINGS_FIELDS = (
    "enabled",
    "prequeue_opens_at",
    "admit_per_minute",
    "active_shoppers",
    "pass_minutes",
    "brake",
)


class WaitingRoom(models.Model):
    """One sale's waiting room: off until the merchant turns it on, then paced by arrivals let in
    a minute and/or shoppers holding a pass at once (at least one of the two), each pass good for
    `pass_minutes`. `queue_all` and `stop_admitting` are the operator's switches for this sale."""

    sale = models.OneToOneField(Sale, on_delete=models.CASCADE, related_name="waiting_room", verbose_name=_("sale"))
    enabled = models.BooleanField(
        _("on"), default=False, help_text=_("Off: every shopper goes straight to the sale, as without a room.")
    )
    prequeue_opens_at = models.DateTimeField(
        _("pre-queue opens"),
        null=True,
        blank=True,
        help_text=_(
            "Shoppers who arrive from this time until the start get a random place at the start; later "
            "arrivals queue in order of arrival. Empty: the queue opens at the start."
        ),
    )
    admit_per_minute = models.PositiveIntegerField(
        _("admitted per minute"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(ADMIT_PER_MINUTE_MAX)],
        help_text=_("How many shoppers are let in a minute. Empty: no limit of this kind."),
    )
    active_shoppers = models.PositiveIntegerField(
        _("shoppers in at once"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(ACTIVE_SHOPPERS_MAX)],
        help_text=_("At most this many shoppers hold a pass at the same time. Empty: no limit of this kind."),
    )
    pass_minutes = models.PositiveSmallIntegerField(
        _("pass lasts (minutes)"),
        default=PASS_MINUTES_DEFAULT,
        validators=[MinValueValidator(PASS_MINUTES_MIN), MaxValueValidator(PASS_MINUTES_MAX)],
        help_text=_("How long an admitted shopper has to buy (1 to 60 minutes)."),
    )
    brake = models.BooleanField(
        _("automatic brake"),
        default=True,
        help_text=_(
            "Let fewer shoppers in while the shop is under strain (orders waiting to be written, a slow Redis)."
        ),
    )
    queue_all = models.BooleanField(_("queue everyone"), default=False, editable=False)
    stop_admitting = models.BooleanField(_("admitting stopped"), default=False, editable=False)
    updated_at = models.DateTimeField(_("changed"), auto_now=True)

    class Meta:
        verbose_name = _("waiting room")
        verbose_name_plural = _("waiting rooms")
        ordering = ("-sale__start_at", "-pk")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(admit_per_minute__isnull=True) | models.Q(admit_per_minute__gte=1),
                name="waitingroom_admit_per_minute_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(active_shoppers__isnull=True) | models.Q(active_shoppers__gte=1),
                name="waitingroom_active_shoppers_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(pass_minutes__gte=PASS_MINUTES_MIN, pass_minutes__lte=PASS_MINUTES_MAX),
                name="waitingroom_pass_minutes_bounds",
            ),
            models.CheckConstraint(
                condition=models.Q(enabled=False)
                | models.Q(admit_per_minute__isnull=False)
                | models.Q(active_shoppers__isnull=False),
                name="waitingroom_on_has_a_pace",
            ),
        ]

    def __str__(self) -> str:
        return str(self.sale) if self.sale_id else str(_("waiting room"))

    def clean(self) -> None:
        if self.enabled and self.admit_per_minute is None and self.active_shoppers is None:
            raise ValidationError(
                {"admit_per_minute": _("A room that is on needs shoppers per minute, shoppers in at once, or both.")}
            )
        if self.prequeue_opens_at is not None and self.sale_id is not None:
            if self.prequeue_opens_at >= self.sale.start_at:
                raise ValidationError({"prequeue_opens_at": _("The pre-queue must open before the sale starts.")})


class ShopSwitches(models.Model):
    """The shop-wide switches, one row: queue everyone / stop admitting in every sale's room.

    A row rather than Redis alone: an operator's emergency stop must survive Redis losing its
    data, and `waiting_rooms_publish` writes it back from here with the rooms.
    """

    ROW = 1

    id = models.PositiveSmallIntegerField(primary_key=True, default=ROW, editable=False)
    queue_all = models.BooleanField(_("queue everyone"), default=False, editable=False)
    stop_admitting = models.BooleanField(_("admitting stopped"), default=False, editable=False)
    updated_at = models.DateTimeField(_("changed"), auto_now=True)

    class Meta:
        verbose_name = _("shop-wide switches")
        verbose_name_plural = _("shop-wide switches")
        constraints = [models.CheckConstraint(condition=models.Q(id=1), name="waitingroom_shop_switches_one_row")]

    def __str__(self) -> str:
        return str(_("every sale's waiting room"))


class RoomAction(models.TextChoices):
    CREATED = "created", _("room set up")
    SETTINGS = "settings", _("settings changed")
    QUEUE_ALL_ON = "queue_all_on", _("everyone queued")
    QUEUE_ALL_OFF = "queue_all_off", _("let in again")
    STOP_ON = "stop_on", _("admitting stopped")
    STOP_OFF = "stop_off", _("admitting resumed")


class WaitingRoomAction(models.Model):
    """One change of a room or of the shop-wide switches: who, when, what, from what to what.

    Written in the transaction that makes the change, once per change: a switch thrown to the
    state it is in already changes nothing and records nothing.
    """

    # Empty: the shop-wide switches.
    sale = models.ForeignKey(
        Sale,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="waiting_room_actions",
        verbose_name=_("sale"),
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("by"),
    )
    # Who, when no account did it: the operator's command ("operator:<OS user>").
    actor_name = models.CharField(_("by (command)"), max_length=64, blank=True)
    created_at = models.DateTimeField(_("when"), auto_now_add=True)
    action = models.CharField(_("action"), max_length=16, choices=RoomAction.choices)
    old = models.JSONField(_("before"), default=dict, blank=True)
    new = models.JSONField(_("after"), default=dict, blank=True)

    class Meta:
        verbose_name = _("waiting room change")
        verbose_name_plural = _("waiting room changes")
        ordering = ("-created_at", "-pk")
        indexes = [models.Index(fields=["sale", "-created_at"])]

    def __str__(self) -> str:
        return self.get_action_display()
