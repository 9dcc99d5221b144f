"""A sale event and what belongs to it: its stock log, its draw and the shoppers' reminders.

The tables keep the names they had in the goods app (`db_table`): the move between apps changed
no schema, and a rolling deploy's old processes still read and write the same rows.
"""

from datetime import timedelta
from typing import TypedDict

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from goods.models import Goods


class SaleStatus(models.IntegerChoices):
    # Values are seed 000's `seckillStatus`.
    NOT_STARTED = 0, _("not started")
    ON = 1, _("on sale")
    ENDED = 2, _("ended")


class Admission(models.TextChoices):
    """How a sale hands out its units when it opens."""

    FCFS = "fcfs", _("first come, first served")
    # Entries in the first `draw_window_s` seconds are drawn at random (docs/draw.md).
    DRAW = "draw", _("draw at opening")


DRAW_WINDOW_MIN = 5
DRAW_WINDOW_MAX = 120
DRAW_WINDOW_DEFAULT = 10
# A draw that took its entries ahead (entries_open_at) may take none after the start: it is
# drawn at the opening itself.
DRAW_WINDOW_NONE = 0


# Minutes an expired order's unit waits for its payment provider to confirm the close.
UNPAID_HOLD_DEFAULT = 30
UNPAID_HOLD_MAX = 24 * 60


class Sale(models.Model):
    """A sale event: its own table so the hot `stock_count` update never locks the catalogue row."""

    goods = models.ForeignKey(Goods, on_delete=models.PROTECT, related_name="sales", verbose_name=_("goods"))
    seckill_price = models.DecimalField(
        _("sale price"), max_digits=10, decimal_places=2, validators=[MinValueValidator(0)]
    )
    stock_count = models.IntegerField(
        _("units left"), validators=[MinValueValidator(0)], help_text=_("Units still to sell in this sale.")
    )
    start_at = models.DateTimeField(_("start"))
    end_at = models.DateTimeField(_("end"))
    admission = models.CharField(
        _("admission"),
        max_length=8,
        choices=Admission.choices,
        default=Admission.FCFS,
        db_default=Admission.FCFS,  # rows inserted by a release before this column are first come, first served
        help_text=_("With a draw, shoppers who enter in the opening window are drawn at random."),
    )
    draw_window_s = models.PositiveSmallIntegerField(
        _("draw window (seconds)"),
        default=DRAW_WINDOW_DEFAULT,
        db_default=DRAW_WINDOW_DEFAULT,
        validators=[MinValueValidator(DRAW_WINDOW_NONE), MaxValueValidator(DRAW_WINDOW_MAX)],
        help_text=_(
            "How long entries are still taken after the start, before the draw (5 to 120 seconds; 0 when "
            "entries open ahead and the draw is at the start)."
        ),
    )
    entries_open_at = models.DateTimeField(
        _("entries open"),
        null=True,
        blank=True,
        help_text=_(
            "Draw sales only: take entries from this time until the draw, ahead of the start (pre-registration). "
            "Empty: entries are taken only in the draw window after the start."
        ),
    )
    unpaid_hold_minutes = models.PositiveSmallIntegerField(
        _("hold while payment is unconfirmed (minutes)"),
        default=UNPAID_HOLD_DEFAULT,
        db_default=UNPAID_HOLD_DEFAULT,
        validators=[MinValueValidator(1), MaxValueValidator(UNPAID_HOLD_MAX)],
        help_text=_(
            "When an order's time to pay runs out and its payment provider cannot be reached to close the "
            "payment, the unit is held this long before it goes back on sale; a payment that arrives "
            "after that is refunded."
        ),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        # The table keeps its first name: a rolling deploy's old processes still query it.
        db_table = "goods_seckillgoods"
        verbose_name = _("sale")
        verbose_name_plural = _("sales")
        ordering = ("start_at",)
        constraints = [
            models.CheckConstraint(condition=models.Q(stock_count__gte=0), name="seckill_stock_not_negative"),
            models.CheckConstraint(
                condition=models.Q(end_at__gt=models.F("start_at")), name="seckill_ends_after_start"
            ),
            models.CheckConstraint(
                condition=models.Q(draw_window_s__gte=DRAW_WINDOW_MIN, draw_window_s__lte=DRAW_WINDOW_MAX)
                | models.Q(draw_window_s=DRAW_WINDOW_NONE, entries_open_at__isnull=False),
                name="seckill_draw_window_bounds",
            ),
            models.CheckConstraint(
                condition=models.Q(entries_open_at__isnull=True)
                | models.Q(admission=Admission.DRAW, entries_open_at__lt=models.F("start_at")),
                name="seckill_entries_open_before_start",
            ),
        ]

    def __str__(self) -> str:
        # In the shop's time zone, like every other time the merchant reads (filters, breadcrumbs).
        start = timezone.localtime(self.start_at) if self.start_at else None
        return f"{self.goods.name} ¥{self.seckill_price} ({start:%Y-%m-%d %H:%M})" if start else self.goods.name

    def clean(self) -> None:
        if self.start_at and self.end_at and self.end_at <= self.start_at:
            raise ValidationError({"end_at": _("The sale must end after it starts.")})
        if (
            self.admission == Admission.DRAW
            and self.start_at
            and self.end_at
            and self.draw_window_s
            and (self.end_at - self.start_at).total_seconds() <= self.draw_window_s
        ):
            raise ValidationError({"draw_window_s": _("The draw window must end before the sale does.")})
        if self.entries_open_at is not None:
            if self.admission != Admission.DRAW:
                raise ValidationError({"entries_open_at": _("Only a draw sale takes entries ahead of its start.")})
            if self.start_at and self.entries_open_at >= self.start_at:
                raise ValidationError({"entries_open_at": _("Entries must open before the sale starts.")})
        if self.draw_window_s is not None and DRAW_WINDOW_NONE < self.draw_window_s < DRAW_WINDOW_MIN:
            raise ValidationError({"draw_window_s": _("The draw window is 5 to 120 seconds.")})
        if self.draw_window_s == DRAW_WINDOW_NONE and self.entries_open_at is None:
            raise ValidationError(
                {"draw_window_s": _("A draw window of 0 seconds needs entries that open ahead of the start.")}
            )

    @property
    def draw_at(self):
        """When the draw happens (the end of the entry window); None for first come, first served."""
        if self.admission != Admission.DRAW or self.start_at is None:
            return None
        return self.start_at + timedelta(seconds=self.draw_window_s)

    @property
    def entries_from(self):
        """When a draw sale starts taking entries (ahead of the start with entries_open_at, else
        at the start); None for first come, first served."""
        if self.admission != Admission.DRAW or self.start_at is None:
            return None
        return self.entries_open_at or self.start_at

    def status_at(self, now=None) -> SaleStatus:
        now = now or timezone.now()
        if now < self.start_at:
            return SaleStatus.NOT_STARTED
        if now >= self.end_at:
            return SaleStatus.ENDED
        return SaleStatus.ON


class StockChange(models.TextChoices):
    MERCHANT_EDIT = "merchant edit", _("merchant edit")
    PURCHASE = "purchase", _("purchase")
    CANCELLATION = "cancellation", _("cancellation")
    EXPIRY = "expiry", _("expiry")
    RECONCILE_REPAIR = "reconcile repair", _("reconcile repair")
    # The stock a sale already had when the log began (written once by the migration).
    OPENING = "opening balance", _("opening balance")


class StockAuditDetail(TypedDict, total=False):
    """What a stock change's `detail` may hold; each kind of change fills in its own keys.

    - `created`: True on the merchant edit that put the sale on (its first stock).
    - `orders`: on a purchase written in one batch, how many orders the batch wrote.
    - `cancelled_by`: on a cancellation, "shopper" or "merchant" (an expiry needs none).
    - `stock_before`, `stock_after`, `buyers_before`, `buyers_after`: on a reconcile repair,
      Redis's units on sale and buyers before and after; `stock_before` is None when Redis
      had lost the sale.
    - `note`: an English note from before `detail` that the migration could not read, as it was.
    """

    created: bool
    orders: int
    cancelled_by: str
    stock_before: int | None
    stock_after: int
    buyers_before: int
    buyers_after: int
    note: str


class StockAudit(models.Model):
    """One change of a sale's database stock: who, when, by how much and why.

    The deltas of a sale add up to its `stock_count`: every write of the stock (the merchant
    services, the order writer, cancellation and expiry) records its row in the same
    transaction. A reconcile repair squares Redis with the database, never the other way
    round, so it is recorded with delta 0 and the Redis figures in `detail`. `detail` holds
    figures, never words (StockAuditDetail): the admin says them in the merchant's language.
    """

    sale = models.ForeignKey(Sale, on_delete=models.CASCADE, related_name="stock_audit", verbose_name=_("sale"))
    # The merchant who edited, the shopper who bought or cancelled; empty for the system (expiry, reconcile).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("by"),
    )
    created_at = models.DateTimeField(_("when"), auto_now_add=True)
    delta = models.IntegerField(_("change"))
    reason = models.CharField(_("reason"), max_length=24, choices=StockChange.choices)
    # The order number for purchases and cancellations.
    reference = models.CharField(_("order number"), max_length=64, blank=True)
    # A row inserted by a release before this column (during a rolling deploy) has no detail.
    detail = models.JSONField(_("detail"), default=dict, db_default={}, blank=True)

    class Meta:
        db_table = "goods_stockaudit"
        verbose_name = _("stock change")
        verbose_name_plural = _("stock changes")
        ordering = ("-created_at", "-pk")
        indexes = [models.Index(fields=["sale", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.delta:+d} ({self.get_reason_display()})"


class SaleDraw(models.Model):
    """A sale's draw, for anyone to check and the merchant to audit (docs/draw.md).

    Created when the sale is set to draw with a random nonce and the SHA-256 of the seed that
    nonce gives under the draw key, which the database never holds (sales.draw_seed): the hash
    is public from then on, and nothing stored reveals the seed. Drawing derives the seed and
    stores it with the sorted entrant ids, the units drawn and the winners: winners are the
    `units` entrants whose sha256(f"{seed}:{id}") hex digests are smallest (ties by id). One
    row per sale, and the draw is claimed by the UPDATE that sets `drawn_at` where it is still
    empty: two drawers cannot both store a draw.
    """

    sale = models.OneToOneField(Sale, on_delete=models.CASCADE, related_name="draw", verbose_name=_("sale"))
    seed_nonce = models.CharField(_("seed nonce"), max_length=64)
    seed_sha256 = models.CharField(_("seed SHA-256"), max_length=64)
    # Empty until the draw writes it: before, it exists nowhere but in the drawer's memory.
    seed = models.CharField(_("seed"), max_length=64, blank=True, default="")
    entrant_ids = models.JSONField(_("entrants"), default=list, blank=True)
    winner_ids = models.JSONField(_("winners"), default=list, blank=True)
    units = models.PositiveIntegerField(_("units drawn"), default=0)
    drawn_at = models.DateTimeField(_("drawn"), null=True, blank=True)
    # Set once every winner holds a reservation: a Redis that lost the sale is told so when it
    # is rebuilt, instead of the draw being applied a second time (seckill.services.draw).
    applied_at = models.DateTimeField(_("applied"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        db_table = "goods_saledraw"
        verbose_name = _("draw")
        verbose_name_plural = _("draws")

    def __str__(self) -> str:
        return f"draw of sale {self.sale_id}"


class OfferOutcome(models.TextChoices):
    OPEN = "open", _("open")
    PAID = "paid", _("paid")
    EXPIRED = "expired", _("expired")
    CANCELLED = "cancelled", _("cancelled")
    # The next in the ranking held a unit of the sale already (bought after the merchant added
    # units) or their account was gone: passed over, and published so, so the list recomputes.
    SKIPPED = "skipped", _("passed over")


class SaleDrawOffer(models.Model):
    """A unit that came back after the draw, offered to the next entrant of the published
    ranking who holds none and was not offered one (docs/draw.md, "Units that come back").

    Written in the transaction that cancels the order whose unit came back, under the sale's
    stock lock, with the order that hands the unit to the entrant: `returned_order_id` is
    unique, so a unit that comes back is offered once, and `rank` and `user` are unique per
    draw, so the ranking is walked once. The orders are referred to by id: orders sit above
    sales and update `outcome` themselves.
    """

    draw = models.ForeignKey(SaleDraw, on_delete=models.CASCADE, related_name="offers", verbose_name=_("draw"))
    rank = models.PositiveIntegerField(_("place in the ranking"))  # 1-based, in the whole ranking
    user_id = models.BigIntegerField(_("user id"))
    returned_order_id = models.BigIntegerField(_("returned order id"), unique=True, null=True, blank=True)
    order_id = models.BigIntegerField(_("order id"), unique=True, null=True, blank=True)
    offered_at = models.DateTimeField(_("offered"))
    expires_at = models.DateTimeField(_("expires"))
    outcome = models.CharField(_("outcome"), max_length=16, choices=OfferOutcome, default=OfferOutcome.OPEN)

    class Meta:
        db_table = "goods_saledrawoffer"
        verbose_name = _("draw offer")
        verbose_name_plural = _("draw offers")
        ordering = ["draw", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["draw", "rank"], name="one_offer_per_rank"),
            models.UniqueConstraint(fields=["draw", "user_id"], name="one_offer_per_entrant"),
        ]

    def __str__(self) -> str:
        return f"offer #{self.rank} of sale {self.draw_id}'s draw to user {self.user_id}"


class SaleReminder(models.Model):
    """A shopper asked to be texted about a sale: before it opens, or, asked once it is on and
    sold out, when a unit comes back (sales.reminders.services)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sale_reminders", verbose_name=_("user")
    )
    sale = models.ForeignKey(Sale, on_delete=models.CASCADE, related_name="reminders", verbose_name=_("sale"))
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        db_table = "goods_salereminder"
        verbose_name = _("sale reminder")
        verbose_name_plural = _("sale reminders")
        constraints = [models.UniqueConstraint(fields=["user", "sale"], name="one_reminder_per_user_per_sale")]

    def __str__(self) -> str:
        return f"reminder of sale {self.sale_id} for user {self.user_id}"
