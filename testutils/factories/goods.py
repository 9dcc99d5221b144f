"""Goods for tests, each owned by a merchant."""

from decimal import Decimal

from goods.models import Goods
from testutils.factories.users import make_merchant
from users.models import User


def make_goods(*, owner: User | None = None, **fields) -> Goods:
    fields.setdefault("name", "Test phone")
    fields.setdefault("title", "A phone for tests")
    fields.setdefault("price", Decimal("999.00"))
    fields.setdefault("stock", 100)
    return Goods.objects.create(owner=owner or make_merchant(), **fields)
