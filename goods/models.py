from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

MAX_IMAGE_BYTES = 2 * 1024 * 1024
# A product photo needs no more; a PNG of 12,000 x 12,000 pixels is a few KiB on the wire and
# over 400 MB once decoded (a decompression bomb). Checked from the header, before decoding.
MAX_IMAGE_SIDE = 4096


def validate_image_size(image) -> None:
    if image and image.size > MAX_IMAGE_BYTES:
        raise ValidationError(_("The image is larger than 2 MB."))


def validate_image_dimensions(image) -> None:
    if not image or getattr(image, "_committed", True):
        return  # a stored image was checked (and re-encoded) when it was uploaded
    from PIL import Image, UnidentifiedImageError

    try:
        image.seek(0)
        width, height = Image.open(image).size  # reads the header only
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as error:
        raise ValidationError(_("Upload a valid image.")) from error
    finally:
        image.seek(0)
    if width > MAX_IMAGE_SIDE or height > MAX_IMAGE_SIDE:
        raise ValidationError(
            _("The image is %(width)d x %(height)d pixels; at most %(side)d x %(side)d are taken.")
            % {"width": width, "height": height, "side": MAX_IMAGE_SIDE}
        )


class Goods(models.Model):
    """The catalogue item: read-mostly, never locked by a sale (the hot counter is SeckillGoods)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="goods", verbose_name=_("merchant")
    )
    name = models.CharField(_("name"), max_length=64)
    title = models.CharField(_("title"), max_length=128, help_text=_("One line under the name on the shop's pages."))
    image = models.ImageField(
        _("image"),
        upload_to="goods/",
        blank=True,
        validators=[validate_image_size, validate_image_dimensions],
        help_text=_("PNG or JPEG, at most 2 MB and 4096 pixels a side."),
    )
    detail = models.TextField(_("description"), blank=True)
    price = models.DecimalField(_("price"), max_digits=10, decimal_places=2, validators=[MinValueValidator(0)])
    stock = models.PositiveIntegerField(
        _("stock"), default=0, help_text=_("Units you hold. A sale offering more than this is flagged when saved.")
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("goods")
        verbose_name_plural = _("goods")
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return self.name


class SaleStatus(models.IntegerChoices):
    # Values are seed 000's `seckillStatus`.
    NOT_STARTED = 0, _("not started")
    ON = 1, _("on sale")
    ENDED = 2, _("ended")


class SeckillGoods(models.Model):
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
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("sale")
        verbose_name_plural = _("sales")
        ordering = ("start_at",)
        constraints = [
            models.CheckConstraint(condition=models.Q(stock_count__gte=0), name="seckill_stock_not_negative"),
            models.CheckConstraint(
                condition=models.Q(end_at__gt=models.F("start_at")), name="seckill_ends_after_start"
            ),
        ]

    def __str__(self) -> str:
        # In the shop's time zone, like every other time the merchant reads (filters, breadcrumbs).
        start = timezone.localtime(self.start_at) if self.start_at else None
        return f"{self.goods.name} ¥{self.seckill_price} ({start:%Y-%m-%d %H:%M})" if start else self.goods.name

    def clean(self) -> None:
        if self.start_at and self.end_at and self.end_at <= self.start_at:
            raise ValidationError({"end_at": _("The sale must end after it starts.")})

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


class StockAudit(models.Model):
    """One change of a sale's database stock: who, when, by how much and why.

    The deltas of a sale add up to its `stock_count`: every write of the stock (the merchant
    services, the order writer, cancellation and expiry) records its row in the same
    transaction. A reconcile repair squares Redis with the database, never the other way
    round, so it is recorded with delta 0 and the Redis figures in `note`.
    """

    sale = models.ForeignKey(SeckillGoods, on_delete=models.CASCADE, related_name="stock_audit", verbose_name=_("sale"))
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
    note = models.CharField(_("note"), max_length=200, blank=True)

    class Meta:
        verbose_name = _("stock change")
        verbose_name_plural = _("stock changes")
        ordering = ("-created_at", "-pk")
        indexes = [models.Index(fields=["sale", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.delta:+d} ({self.get_reason_display()})"
