"""Writes on goods and sale events."""

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F

from goods.models import SeckillGoods
from seckill import keys


def goods_list_cache_drop() -> None:
    cache.delete_many([keys.goods_list_html(code) for code, _ in settings.LANGUAGES])


def sale_cache_drop(*, sale_id: int) -> None:
    cache.delete_many([keys.sale_cache(sale_id), keys.sale_missing(sale_id)])


def sale_changed(*, sale_id: int) -> None:
    """A sale event was created or edited: once committed, reload Redis and drop cached pages.

    Called explicitly by the admin and the API (no signal), inside or outside a transaction.
    """
    from seckill.services import stock_warm

    def refresh() -> None:
        stock_warm(sale_id=sale_id)
        sale_cache_drop(sale_id=sale_id)
        goods_list_cache_drop()

    transaction.on_commit(refresh)


def sale_stock_adjust(*, sale_id: int, delta: int) -> bool:
    """Add (or with a negative delta, remove) units atomically, never below zero.

    A merchant edits stock while orders are being written: writing the form's absolute value
    would overwrite the decrements made since the form was loaded. Returns False (and changes
    nothing) when fewer than -delta units are left."""
    if delta == 0:
        return True
    sales = SeckillGoods.objects.filter(pk=sale_id)
    if delta < 0:
        sales = sales.filter(stock_count__gte=-delta)
    if not sales.update(stock_count=F("stock_count") + delta):
        return False
    sale_changed(sale_id=sale_id)
    return True


def sale_save(*, sale: SeckillGoods) -> SeckillGoods:
    with transaction.atomic():
        sale.full_clean()
        sale.save()
        sale_changed(sale_id=sale.pk)
    return sale
