"""Writes on the catalogue: the one place the admin and the API both go through."""

import io
from pathlib import Path

from django.core.files.base import ContentFile
from django.db import transaction
from PIL import Image, ImageOps

from goods.models import Goods
from goods.signals import goods_changed, goods_deleting


class GoodsInUse(Exception):
    """Something built on the goods (a sale with orders, orders still being written) stops
    the deletion; nothing was deleted. The message is for the merchant."""


# What an uploaded image is stored as: its own format when it is one of these, else PNG.
IMAGE_FORMATS = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp", "GIF": "png"}


def _image_reencoded(upload) -> ContentFile:
    """A new file decoded from the upload and encoded again: only pixels survive, so no EXIF
    (a phone's GPS position), no comments, and nothing appended after the image's end (a
    polyglot file) is ever served back. Called after validation capped its pixel size."""
    upload.seek(0)
    with Image.open(upload) as original:
        original.load()
        image = ImageOps.exif_transpose(original)  # keep the orientation the EXIF gave
    file_format = original.format if original.format in IMAGE_FORMATS else "PNG"
    if file_format == "GIF":
        file_format = "PNG"
    if file_format == "JPEG" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    elif image.mode not in ("RGB", "RGBA", "L", "LA", "P"):
        image = image.convert("RGBA")
    image.info = {}  # comments, text chunks, ICC and EXIF blocks: Pillow writes back what is here
    buffer = io.BytesIO()
    image.save(buffer, format=file_format)
    stem = Path(upload.name or "image").stem[:80] or "image"
    return ContentFile(buffer.getvalue(), name=f"{stem}.{IMAGE_FORMATS[file_format]}")


def goods_save(*, goods: Goods, fields: list[str] | None = None) -> Goods:
    """Create or edit goods (validated); an edit writes `fields` only (all when None) and
    raises Goods.DoesNotExist when the goods were deleted meanwhile, rather than insert them
    again. A newly uploaded image is stored re-encoded (_image_reencoded). Once committed,
    goods_changed tells the sales, whose pages and order writer read the goods' name and price
    from their cache."""
    with transaction.atomic():
        goods.full_clean()
        if goods.image and not goods.image._committed:  # type: ignore[attr-defined]  # a new upload, not yet stored
            goods.image = _image_reencoded(goods.image.file)
        if goods._state.adding:
            goods.save()
        else:
            Goods.objects.select_for_update().only("pk").get(pk=goods.pk)
            goods.save(force_update=True, update_fields=fields)
        goods_id = goods.pk
        transaction.on_commit(lambda: goods_changed.send(sender=Goods, goods_id=goods_id))
    return goods


def goods_delete(*, goods: Goods) -> None:
    """Delete goods. Whatever stands on them goes first, in the same transaction
    (goods_deleting: the sales app deletes their sales); refused with GoodsInUse, changing
    nothing, when any of it may not go."""
    with transaction.atomic():
        goods_deleting.send(sender=Goods, goods=goods)
        goods.delete()
