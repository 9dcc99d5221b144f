import pytest
from django.db import IntegrityError, transaction

from goods.tests.factories import make_sale
from orders.models import SeckillOrder
from orders.tests.factories import make_order
from users.tests.factories import make_user

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
    assert len(set(numbers)) == 5 and all(len(n) == 22 and n.isdigit() for n in numbers)
    assert all(order.order_no != str(order.pk) for order in orders)
