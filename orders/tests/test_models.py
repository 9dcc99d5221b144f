import pytest
from django.db import IntegrityError, transaction

from orders.models import SeckillOrder
from testutils.factories.orders import make_order
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user

pytestmark = pytest.mark.django_db


def test_database_refuses_a_second_live_order_per_user_and_sale():
    sale, user = make_sale(), make_user()
    make_order(sale=sale, user=user)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_order(sale=sale, user=user)


def test_a_cancelled_order_frees_the_user_to_buy_again():
    sale, user = make_sale(), make_user()
    first = make_order(sale=sale, user=user)
    SeckillOrder.objects.filter(order=first).update(live=False)
    make_order(sale=sale, user=user)
    assert SeckillOrder.objects.filter(user=user, sale=sale).count() == 2


def test_order_numbers_are_unique_and_not_the_primary_key():
    sale = make_sale()
    orders = [make_order(sale=sale) for _ in range(5)]
    numbers = [order.order_no for order in orders]
    assert len(set(numbers)) == 5 and all(len(n) == 24 and n.isdigit() for n in numbers)
    assert all(order.order_no != str(order.pk) for order in orders)


def test_order_numbers_stay_unique_when_redis_loses_everything(settings):
    """A replica promoted after a crash may not have seen the latest writes: nothing that makes
    an order number unique may live in Redis (a Redis counter restarted at 1 and repeated the
    numbers of the same second)."""
    from orders.services import order_number_next
    from testutils.stores import redis_keys_delete

    before = {order_number_next() for _ in range(3)}
    redis_keys_delete(settings.REDIS_KEY_PREFIX)  # what a failover to a stale replica can lose
    after = {order_number_next() for _ in range(3)}
    assert len(before | after) == 6
