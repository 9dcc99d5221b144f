from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from goods.models import Goods
from sales.models import Sale
from sales.services import sale_open
from users.models import User
from users.tests.factories import make_merchant


def make_goods(*, owner: User | None = None, **fields) -> Goods:
    fields.setdefault("name", "Test phone")
    fields.setdefault("title", "A phone for tests")
    fields.setdefault("price", Decimal("999.00"))
    fields.setdefault("stock", 100)
    return Goods.objects.create(owner=owner or make_merchant(), **fields)


def make_sale(
    *, goods: Goods | None = None, stock: int = 10, starts_in: int = -60, lasts: int = 3600, warm: bool = True, **fields
) -> Sale:
    """A sale event starting `starts_in` seconds from now (negative: already on), loaded into Redis."""
    start = timezone.now() + timedelta(seconds=starts_in)
    sale = Sale.objects.create(
        goods=goods or make_goods(),
        seckill_price=fields.pop("seckill_price", Decimal("1.00")),
        stock_count=stock,
        start_at=start,
        end_at=start + timedelta(seconds=lasts),
        **fields,
    )
    if warm:
        sale_open(sale_id=sale.pk)
    return sale
