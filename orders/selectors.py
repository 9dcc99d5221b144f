"""Reads on orders, always scoped to whoever asks."""

from django.db.models import QuerySet

from orders.models import Order
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
