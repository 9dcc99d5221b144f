"""The sales' answers to the catalogue's signals (goods.signals), connected in SalesConfig.ready."""

from django.db import transaction
from django.dispatch import receiver

from goods.models import Goods
from goods.signals import goods_changed, goods_deleting
from sales.models import Sale
from sales.services import goods_list_cache_drop, sale_cache_drop, sale_delete


@receiver(goods_changed, sender=Goods, dispatch_uid="sales.goods_changed")
def goods_changed_drop_sale_caches(*, goods_id: int, **_kwargs) -> None:
    """The goods' name, title or price changed: every sale of them drops its cached row (the
    pages and the order writer read them from it) and the list its HTML."""
    for sale_id in Sale.objects.filter(goods_id=goods_id).values_list("pk", flat=True):
        sale_cache_drop(sale_id=sale_id)
    goods_list_cache_drop()


@receiver(goods_deleting, sender=Goods, dispatch_uid="sales.goods_deleting")
def goods_deleting_delete_sales(*, goods: Goods, **_kwargs) -> None:
    """The goods' sales go first, each through sale_delete; one that may not go raises
    SaleInUse (a GoodsInUse), which refuses the whole deletion."""
    for sale in Sale.objects.filter(goods=goods).select_for_update().order_by("pk"):  # pk order: no lock cycles
        sale_delete(sale=sale)
    transaction.on_commit(goods_list_cache_drop)
