"""Writes on goods and sale events."""

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

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


def sale_save(*, sale: SeckillGoods) -> SeckillGoods:
    with transaction.atomic():
        sale.full_clean()
        sale.save()
        sale_changed(sale_id=sale.pk)
    return sale
