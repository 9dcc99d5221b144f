"""The catalogue: goods a merchant sells, whatever sale events put them on (sales.models)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from modeltranslation.manager import MultilingualManager

from seckill_site.text import validate_one_line
from seckill_site.translated import field_in, texts_of

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
    """The catalogue item: read-mostly, never locked by a sale (the hot counter is Sale).

    Its name, title and description are kept in each language (goods/translation.py): `name`
    reads the active language's, else the other's."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="goods", verbose_name=_("merchant")
    )
    # One line each: both are written into other formats (the sale's calendar file, texts, CSV).
    name = models.CharField(_("name"), max_length=64, validators=[validate_one_line])
    title = models.CharField(
        _("title"),
        max_length=128,
        validators=[validate_one_line],
        help_text=_("One line under the name on the shop's pages."),
    )
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

    # What goods.translation makes of the default manager, named here for the type checker.
    objects = MultilingualManager()

    class Meta:
        verbose_name = _("goods")
        verbose_name_plural = _("goods")
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """A name and a title in one language at least: a language without its own shows them."""
        errors = {
            field_in(field, settings.LANGUAGE_CODE): ValidationError(message, code="in_no_language")
            for field, message in (
                ("name", _("Write the name in one language at least.")),
                ("title", _("Write the title in one language at least.")),
            )
            if not any(texts_of(self, field).values())
        }
        if errors:
            raise ValidationError(errors)
