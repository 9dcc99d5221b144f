"""Reads of the catalogue."""

from django.db.models import QuerySet

from goods.models import Goods
from users.merchants import visible_to_merchant
from users.models import User


def goods_visible_to(user: User) -> QuerySet[Goods]:
    """A merchant's own goods, newest first (a superuser's: everyone's)."""
    return visible_to_merchant(Goods.objects.order_by("-created_at", "-pk"), user=user)
