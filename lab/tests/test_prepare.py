"""What the bench makes before it measures and removes after (lab/prepare.py, lab/shopper.py),
on the test database and Redis: its sales in their roles, shoppers whose sessions log them in,
and a clean-up that removes what the bench tagged and nothing else."""

import pytest
from django.contrib.auth import get_user
from django.core.cache import caches
from django.http import HttpRequest
from django.utils import timezone

from goods.models import Goods
from lab import prepare
from lab.shopper import log_in, path_solve
from orders.models import Order
from sales import sale_state
from sales.models import Sale
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from users.models import User
from users.sessions import SessionStore

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in_as(session_key: str):
    request = HttpRequest()
    request.session = SessionStore(session_key)
    return get_user(request)


def test_the_bench_sales_come_in_their_roles_with_their_stock_in_redis():
    sales = prepare.sales_create(stock=3, warmup_stock=5, bursts=2)
    assert len(set(sales.ids)) == 7
    units = dict(Sale.objects.filter(pk__in=sales.ids).values_list("pk", "stock_count"))
    assert [units[pk] for pk in sales.burst] == [3, 3]
    assert [units[pk] for pk in sales.api_burst] == [3, 3]
    assert (units[sales.sold_out], units[sales.naive], units[sales.warmup]) == (0, 3, 5)
    assert sale_state.stock_left(sales.ids) == units  # warmed: Redis holds every one
    names = Goods.objects.filter(sales__pk__in=[sales.burst[1], sales.sold_out]).values_list("name", flat=True)
    assert sorted(name.split()[0] for name in names) == ["bench:burst#2", "bench:sold-out"]
    opened = Sale.objects.get(pk=sales.naive)
    assert opened.start_at < timezone.now() < opened.end_at  # open since a minute ago


def test_shoppers_are_logged_in_by_their_session_and_tagged_with_new_mobiles():
    first = prepare.shoppers_create(count=3, secret_key=None, progress=None)
    more = prepare.shoppers_create(count=2, secret_key=None, progress=None)
    users = User.objects.in_bulk([s.user_id for s in first + more])
    mobiles = [users[s.user_id].mobile for s in first + more]
    assert mobiles == sorted(mobiles) and len(set(mobiles)) == 5  # the next run goes on after the last
    assert all(m.startswith(prepare.MOBILE_PREFIX) for m in mobiles)
    for shopper in first + more:
        assert logged_in_as(shopper.session).pk == shopper.user_id
        assert shopper.token
    old = first[0].session
    log_in(first[:1])
    assert first[0].session != old and logged_in_as(first[0].session).pk == first[0].user_id


def test_a_session_signed_with_another_key_does_not_log_in_here():
    (shopper,) = prepare.shoppers_create(count=1, secret_key="the deployment's own key", progress=None)
    assert not logged_in_as(shopper.session).is_authenticated


def test_a_solved_path_is_one_per_shopper():
    sale = prepare.sale_create(name="paths", units=2)
    shoppers = prepare.shoppers_create(count=2, secret_key=None, progress=None)
    paths = [path_solve(sale_id=sale.pk, user_id=s.user_id) for s in shoppers]
    assert all(paths) and paths[0] != paths[1]


def test_cleanup_removes_the_bench_sales_orders_shoppers_and_sessions():
    sales = prepare.sales_create(stock=2, warmup_stock=1, bursts=1)
    shoppers = prepare.shoppers_create(count=2, secret_key=None, progress=None)
    drained = prepare.users_create(count=2)
    buy(sale=Sale.objects.get(pk=sales.burst[0]), user=User.objects.get(pk=shoppers[0].user_id))
    kept_sale, kept_user = make_sale(stock=1), make_user()
    prepare.cleanup(sales=sales, shoppers=shoppers, user_ids=drained)
    assert not Sale.objects.filter(pk__in=sales.ids).exists()
    assert not Order.objects.filter(sale_id__in=sales.ids).exists()
    assert not User.objects.filter(pk__in=[*drained, *(s.user_id for s in shoppers)]).exists()
    assert all(left is None for left in sale_state.stock_left(sales.ids).values())
    assert not logged_in_as(shoppers[1].session).is_authenticated
    assert caches["default"].get(f"django.contrib.sessions.cache{shoppers[1].session}") is None
    assert Sale.objects.filter(pk=kept_sale.pk).exists() and User.objects.filter(pk=kept_user.pk).exists()


def test_leftovers_of_a_killed_run_are_found_by_their_tags_only():
    left_sale = prepare.sale_create(name="killed", units=1)
    left_users = prepare.users_create(count=2)
    other_sale = make_sale(stock=1)
    lookalike = User.objects.create(mobile="16000000999", nickname="someone else")  # the prefix, not the tag
    assert prepare.leftovers_remove() == 3
    assert not Sale.objects.filter(pk=left_sale.pk).exists()
    assert not User.objects.filter(pk__in=left_users).exists()
    assert Sale.objects.filter(pk=other_sale.pk).exists() and User.objects.filter(pk=lookalike.pk).exists()
    assert User.objects.filter(mobile=prepare.MERCHANT_MOBILE).exists()  # the merchant stays for the next run
    assert prepare.leftovers_remove() == 0
