"""Writes on goods and sale events: the one place the admin and the API both go through."""

import io
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.files.base import ContentFile
from django.db import connection, transaction
from django.db.models import F
from django.utils.translation import gettext as _
from PIL import Image, ImageOps

from goods.models import Goods, SeckillGoods, StockAudit, StockChange
from goods.selectors import sale_writes_in_flight
from seckill_site.http import INT32_MAX
from seckill_site.redis import client, keys
from users.models import User


class StockShortage(Exception):
    """Fewer units are left than the edit removes, or more would be than the column holds;
    nothing was changed. The message is for the merchant."""


class SaleInUse(Exception):
    """The sale has orders, or units handed out whose orders are not written yet; nothing was
    deleted. The message is for the merchant."""


def stock_audit_record(
    *,
    sale_id: int,
    delta: int,
    reason: StockChange,
    actor_id: int | None = None,
    reference: str = "",
    note: str = "",
) -> None:
    """Log one change of a sale's stock. The caller changes the stock in the same transaction,
    so the log and the stock commit (or roll back) together. One INSERT: the order writer calls
    it for every order."""
    StockAudit.objects.create(
        sale_id=sale_id, delta=delta, reason=reason, actor_id=actor_id, reference=reference, note=note[:200]
    )


# The sale's stock lock (pg_advisory_xact_lock: released at commit or rollback, so it holds
# behind PgBouncer in transaction mode too): the first statement of every transaction that
# writes a sale's orders (both order writers) or returns a unit (cancellation, expiry), and
# held by the reconciler from its database read until its Redis write (seckill.services).
# Two flushes of one sale take turns instead of both writing and one rolling back, and no
# order lands or unit returns between what the reconciler read and what it writes.
SALE_STOCK_LOCK_CLASS = 0x5EC1  # the advisory lock's first key: this lock's namespace


def sale_stock_lock(*, sale_id: int) -> None:
    """Take the sale's stock lock for the rest of the current transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [SALE_STOCK_LOCK_CLASS, sale_id])


def goods_list_cache_drop() -> None:
    cache.delete_many([keys.goods_list_html(code) for code, _code in settings.LANGUAGES])


def sale_cache_drop(*, sale_id: int) -> None:
    cache.delete_many([keys.sale_cache(sale_id), keys.sale_missing(sale_id)])


def sale_changed(*, sale_id: int) -> None:
    """A sale event was created or edited: once committed, reload Redis and drop cached pages.

    Called explicitly by the services below and by tools that create sales (no signal),
    inside or outside a transaction.
    """
    from seckill.services import stock_warm

    def refresh() -> None:
        stock_warm(sale_id=sale_id)
        sale_cache_drop(sale_id=sale_id)
        goods_list_cache_drop()

    transaction.on_commit(refresh)


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


def goods_save(*, goods: Goods) -> Goods:
    """Create or edit goods (validated). A newly uploaded image is stored re-encoded
    (_image_reencoded). The pages and the order writer read a goods' name and price from the
    sale cache, so every sale of these goods is dropped from it once committed."""
    with transaction.atomic():
        goods.full_clean()
        if goods.image and not goods.image._committed:
            goods.image = _image_reencoded(goods.image.file)
        goods.save()
        sale_ids = list(goods.sales.values_list("pk", flat=True))

        def refresh() -> None:
            for sale_id in sale_ids:
                sale_cache_drop(sale_id=sale_id)
            goods_list_cache_drop()

        transaction.on_commit(refresh)
    return goods


def sale_create(*, sale: SeckillGoods, actor: User | None = None) -> SeckillGoods:
    """Put a new sale event on (validated); it is loaded into Redis once committed."""
    with transaction.atomic():
        sale.full_clean()
        sale.save()
        stock_audit_record(
            sale_id=sale.pk,
            delta=sale.stock_count,
            reason=StockChange.MERCHANT_EDIT,
            actor_id=actor.pk if actor else None,
            note="created",
        )
        sale_changed(sale_id=sale.pk)
    return sale


def sale_update(
    *, sale: SeckillGoods, changes: dict[str, Any], stock_delta: int = 0, actor: User | None = None
) -> SeckillGoods:
    """Edit a sale event: the fields in `changes`, and its stock by a difference.

    The stock is never written as an absolute value: order writes decrement it all through a
    sale, and a form or API client holding an older count would undo them (overselling).
    Only the changed fields are saved; `stock_delta` adds (or removes) units atomically and is
    refused with StockShortage when fewer than -stock_delta are left, changing nothing at all.
    Redis is reloaded once committed. `sale` is refreshed with the stock it ends with.
    """
    if "stock_count" in changes:
        raise ValueError("stock changes are differences: pass stock_delta")
    with transaction.atomic():
        for field, value in changes.items():
            setattr(sale, field, value)
        sale.full_clean(exclude=["stock_count"])
        if changes:
            sale.save(update_fields=list(changes))
        if stock_delta:
            rows = SeckillGoods.objects.filter(pk=sale.pk)
            if stock_delta < 0:
                rows = rows.filter(stock_count__gte=-stock_delta)
                shortage = _("Not enough units left to remove %(n)s; nothing changed.") % {"n": -stock_delta}
            else:
                # The column is a 32-bit integer: a sum past it would overflow in PostgreSQL (a 500).
                rows = rows.filter(stock_count__lte=INT32_MAX - min(stock_delta, INT32_MAX))
                shortage = _("The stock cannot exceed %(max)s units; nothing changed.") % {"max": INT32_MAX}
            if abs(stock_delta) > INT32_MAX or not rows.update(stock_count=F("stock_count") + stock_delta):
                raise StockShortage(shortage)
            stock_audit_record(
                sale_id=sale.pk,
                delta=stock_delta,
                reason=StockChange.MERCHANT_EDIT,
                actor_id=actor.pk if actor else None,
            )
        sale_changed(sale_id=sale.pk)
    sale.refresh_from_db(fields=["stock_count"])
    return sale


def _sale_redis_keys_drop(*, sale_id: int) -> None:
    """Every Redis key of the sale, per-user ones (captcha, path, result) included. They all
    share the sale's hash tag: on a Redis Cluster they live on one node, and SCAN visits
    each node; every DEL is a single key."""
    redis = client()
    prefix = keys.stock(sale_id).rpartition(":")[0]  # "sk:{42}"
    for key in redis.scan_iter(match=f"{prefix}:*", count=500):
        redis.delete(key)


def sale_delete(*, sale: SeckillGoods) -> None:
    """Delete a sale event with everything it left in Redis and the page caches.

    Refused (SaleInUse) while it has orders (they keep their sale) or units reserved whose
    orders are still being written: deleting then would strand a shopper told "queued".
    """
    sale_id = sale.pk
    if sale_writes_in_flight(sale_id=sale_id):
        raise SaleInUse(_("Orders of this sale are still being written; try again in a minute."))
    if sale.orders.exists():
        raise SaleInUse(_("This sale has orders; it cannot be deleted."))
    with transaction.atomic():
        sale.delete()

        def cleanup() -> None:
            _sale_redis_keys_drop(sale_id=sale_id)
            sale_cache_drop(sale_id=sale_id)
            goods_list_cache_drop()

        transaction.on_commit(cleanup)


def goods_delete(*, goods: Goods) -> None:
    """Delete goods and their sales (each through sale_delete); refused with SaleInUse,
    changing nothing, when any of them may not go."""
    with transaction.atomic():
        for sale in goods.sales.select_for_update().order_by("pk"):  # primary-key order: no lock cycles
            sale_delete(sale=sale)
        goods.delete()
        transaction.on_commit(goods_list_cache_drop)
