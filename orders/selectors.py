"""Reads on orders, always scoped to whoever asks."""

from collections.abc import Iterator
from typing import Any

from django.db.models import Count, QuerySet
from django.db.models.functions import TruncSecond
from django.utils import timezone

from goods.models import SeckillGoods
from goods.selectors import sale_status, stock_left
from orders.models import Order
from seckill_site import sale_state
from users.models import User


def orders_of_user(*, user: User) -> QuerySet[Order]:
    return Order.objects.filter(user=user).select_related("goods", "sale").order_by("-created_at")


def order_of_user(*, user: User, order_no: str) -> Order | None:
    """Another shopper's order is indistinguishable from a missing one (both None → 404).
    Order numbers are digits; anything else (a NUL byte, say) never reaches the database."""
    if not (order_no.isascii() and order_no.isdigit() and len(order_no) <= 32):
        return None
    return orders_of_user(user=user).filter(order_no=order_no).first()


def orders_visible_to(*, user: User) -> QuerySet[Order]:
    """What the admin shows: everything to a superuser, a merchant's own goods' orders otherwise."""
    queryset = Order.objects.select_related("user", "goods", "sale")
    if user.is_superuser:
        return queryset
    return queryset.filter(goods__owner=user)


ORDERS_CSV_HEADER = [
    "order_no",
    "created_at",
    "status",
    "goods_name",
    "price",
    "quantity",
    "buyer_mobile",
    "sale_id",
    "paid_at",
    "cancelled_at",
    "cancel_reason",
]


def _csv_safe(value: object) -> str:
    """Text a spreadsheet shows as text: a cell starting with = + - @ would run as a formula
    (the goods name is the merchant's own input, but the file travels)."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _when(value) -> str:
    return timezone.localtime(value).isoformat(timespec="seconds") if value else ""


def orders_csv_rows(*, orders: QuerySet[Order]) -> Iterator[list[str]]:
    """The header, then one row per order, read in chunks (`iterator`) so an export of a
    big sale never holds every order in memory. `orders` is already scoped to the merchant."""
    yield ORDERS_CSV_HEADER
    rows = orders.select_related("user").order_by("pk").iterator(chunk_size=2000)
    for order in rows:
        yield [
            order.order_no,
            _when(order.created_at),
            order.status,
            _csv_safe(order.goods_name),
            str(order.price),
            str(order.quantity),
            order.user.mobile,
            str(order.sale_id or ""),
            _when(order.paid_at),
            _when(order.cancelled_at),
            _csv_safe(order.cancel_reason),
        ]


def sale_figures(*, sale: SeckillGoods) -> dict[str, Any]:
    """Live figures of one sale for the merchant: stock in both stores, orders by status,
    requests refused by the per-sale limits, and orders per second since the sale started
    (for the chart)."""
    orders = Order.objects.filter(sale=sale)
    by_status = dict(orders.values_list("status").annotate(n=Count("id")))
    per_second = list(
        orders.annotate(second=TruncSecond("created_at")).values("second").annotate(n=Count("id")).order_by("second")
    )
    cumulative, series = 0, []
    for point in per_second:
        cumulative += point["n"]
        series.append({"t": point["second"].timestamp(), "orders": point["n"], "cumulative": cumulative})
    status, remain = sale_status({"startEpoch": sale.start_at.timestamp(), "endEpoch": sale.end_at.timestamp()})
    refused = sale_state.refusals(sale.pk)
    return {
        "saleId": sale.pk,
        "status": int(status),
        "remainSeconds": remain,
        "stockDatabase": sale.stock_count,
        "stockRedis": stock_left([sale.pk])[sale.pk],
        "inFlight": sale_state.reservations_count([sale.pk])[sale.pk],
        "unpaid": by_status.get("unpaid", 0),
        "paid": by_status.get("paid", 0),
        "cancelled": by_status.get("cancelled", 0),
        # Requests the per-sale limits refused (seckill.services.paths.sale_limit_take): scripts at work.
        "refusedCaptcha": refused.get("captcha", 0),
        "refusedPath": refused.get("path", 0),
        "start": sale.start_at.timestamp(),
        "end": sale.end_at.timestamp(),
        "series": series,
    }
