"""Sales for tests: first-come sales and draw sales, loaded into Redis as the shop loads them."""

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from goods.models import Goods
from sales.models import Admission, Sale
from sales.services import draw_seed_ensure, sale_open
from testutils.factories.goods import make_goods


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


def make_draw_sale(*, stock: int, window: int = 60) -> Sale:
    """A draw sale whose entry window opened a second ago and lasts `window` seconds."""
    sale = make_sale(stock=stock, starts_in=-1, warm=False, admission=Admission.DRAW, draw_window_s=window)
    draw_seed_ensure(sale=sale)
    sale_open(sale_id=sale.pk)
    return sale


def make_ahead_sale(*, stock: int, opens_in: int = -30, starts_in: int = 60, window: int = 0) -> Sale:
    """A draw sale whose entries open `opens_in` seconds from now (negative: open already) and
    whose start, and draw (with `window` 0), is `starts_in` seconds from now."""
    now = timezone.now()
    sale = make_sale(
        stock=stock,
        starts_in=starts_in,
        warm=False,
        admission=Admission.DRAW,
        draw_window_s=window,
        entries_open_at=now + timedelta(seconds=opens_in),
    )
    draw_seed_ensure(sale=sale)
    sale_open(sale_id=sale.pk)
    return sale
