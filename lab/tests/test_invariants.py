"""lab.invariants: the one check every experiment uses finds each kind of violation, on real
PostgreSQL and Redis, and nothing on a sale sold as the shop sells."""

import pytest

from lab.invariants import sale_check
from orders.models import Order, OrderStatus
from sales import sale_state
from sales.models import Sale
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.shoppers import reserve_directly

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_sale_sold_as_the_shop_sells_passes():
    sale = make_sale(stock=3)
    buyers = [make_user() for _ in range(2)]
    orders = [buy(sale=sale, user=user) for user in buyers]
    check = sale_check(sale_id=sale.pk, units=3, queued=[user.pk for user in buyers])
    assert check.problems() == []
    assert (check.orders, check.db_stock, check.redis_stock, check.order_ids) == (2, 1, 1, {o.pk for o in orders})
    assert (check.oversold, check.stranded, check.lost, check.unanswered) == (0, 0, 0, 0)


def test_each_violation_is_found():
    sale = make_sale(stock=3)
    buy(sale=sale, user=make_user())
    Sale.objects.filter(pk=sale.pk).update(stock_count=3)  # a unit sold that the database still counts
    waiting = make_user()
    reserve_directly(waiting.pk, sale.pk)  # a reservation the writer never took: told "queued"
    check = sale_check(sale_id=sale.pk, units=3, queued=[waiting.pk])
    found = " | ".join(check.problems())
    assert check.reservations == 1 and check.stranded and check.drifted and check.lost == 1
    for words in ("orders 1 + database stock 3 != units 3", "Redis stock 1 != database stock 3",
                  "1 reservations waiting", "reconciler", "told queued, then neither"):  # fmt: skip
        assert words in found, found
    assert sale_check(sale_id=sale.pk, units=0).oversold == 1  # one order of a sale with no units
    assert sale_state.reservations_count([sale.pk])[sale.pk] == 1  # the check changed nothing


def test_a_broken_money_invariant_is_found():
    sale = make_sale(stock=2)
    order = pay(buy(sale=sale, user=make_user()))
    assert sale_check(sale_id=sale.pk, units=2).money == []
    Order.objects.filter(pk=order.pk).update(status=OrderStatus.CANCELLED)  # its payment kept all the same
    found = " | ".join(sale_check(sale_id=sale.pk, units=2).problems())
    assert "money: kept payment of an order not paid" in found, found
