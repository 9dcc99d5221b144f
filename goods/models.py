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
        raise ValidationError("The image is larger than 2 MB.")


def validate_image_dimensions(image) -> None:
    if not image or getattr(image, "_committed", True):
        return  # a stored image was checked (and re-encoded) when it was uploaded
    from PIL import Image, UnidentifiedImageError

    try:
        image.seek(0)
        width, height = Image.open(image).size  # reads the header only
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as error:
        raise ValidationError("Upload a valid image.") from error
    finally:
        image.seek(0)
    if width > MAX_IMAGE_SIDE or height > MAX_IMAGE_SIDE:
        raise ValidationError(
            f"The image is {width} x {height} pixels; at most {MAX_IMAGE_SIDE} x {MAX_IMAGE_SIDE} are taken."
        )


class Goods(models.Model):
    """The catalogue item: read-mostly, never locked by a sale (the hot counter is SeckillGoods)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="goods")
    name = models.CharField(max_length=64)
    title = models.CharField(max_length=128)
    image = models.ImageField(
        upload_to="goods/", blank=True, validators=[validate_image_size, validate_image_dimensions]
    )
    detail = models.TextField(blank=True)
    price = models.DecimalField(max_digits=10, decimal_places=2, validators=[MinValueValidator(0)])
    stock = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "goods"
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return self.name


class SaleStatus(models.IntegerChoices):
    # Values are seed 000's `seckillStatus`.
    NOT_STARTED = 0, "not started"
    ON = 1, "on sale"
    ENDED = 2, "ended"


class SeckillGoods(models.Model):
    """A sale event: its own table so the hot `stock_count` update never locks the catalogue row."""

    goods = models.ForeignKey(Goods, on_delete=models.PROTECT, related_name="sales")
    seckill_price = models.DecimalField(max_digits=10, decimal_places=2, validators=[MinValueValidator(0)])
    stock_count = models.IntegerField(validators=[MinValueValidator(0)])
    start_at = models.DateTimeField()
    end_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "sale event"
        ordering = ("start_at",)
        constraints = [
            models.CheckConstraint(condition=models.Q(stock_count__gte=0), name="seckill_stock_not_negative"),
            models.CheckConstraint(
                condition=models.Q(end_at__gt=models.F("start_at")), name="seckill_ends_after_start"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.goods.name} @ {self.seckill_price} ({self.start_at:%Y-%m-%d %H:%M})"

    def clean(self) -> None:
        if self.start_at and self.end_at and self.end_at <= self.start_at:
            raise ValidationError({"end_at": "The sale must end after it starts."})

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

    sale = models.ForeignKey(SeckillGoods, on_delete=models.CASCADE, related_name="stock_audit")
    # The merchant who edited, the shopper who bought or cancelled; empty for the system (expiry, reconcile).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    delta = models.IntegerField()
    reason = models.CharField(max_length=24, choices=StockChange.choices)
    # The order number for purchases and cancellations.
    reference = models.CharField(max_length=64, blank=True)
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        verbose_name = _("stock change")
        ordering = ("-created_at", "-pk")
        indexes = [models.Index(fields=["sale", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.sale_id} {self.delta:+d} ({self.reason})"
