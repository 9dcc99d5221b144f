import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from goods.models import Sale
from goods.sale_state import keys
from goods.tests.factories import make_sale
from orders import services
from orders.models import Order, OrderStatus, SeckillOrder
from orders.tests.factories import buy, pay
from seckill_site.redis import client
from users.tests.factories import make_address, make_user, make_users


def redis_stock(sale) -> int:
    return int(client().get(keys.stock(sale.pk)))


def db_stock(sale) -> int:
    return Sale.objects.get(pk=sale.pk).stock_count


def overdue(*orders):
    Order.objects.filter(pk__in=[o.pk for o in orders]).update(pay_deadline=timezone.now() - timedelta(seconds=1))


@pytest.mark.django_db
class TestPayAndCancel:
    def test_pay(self):
        sale = make_sale(stock=3)
        order = pay(buy(sale=sale, user=make_user()))
        assert order.status == OrderStatus.PAID and order.paid_at is not None

    def test_cancel_returns_the_unit_everywhere(self, django_capture_on_commit_callbacks):
        sale, user = make_sale(stock=3), make_user()
        order = buy(sale=sale, user=user)
        assert (db_stock(sale), redis_stock(sale)) == (2, 2)
        with django_capture_on_commit_callbacks(execute=True):
            assert services.order_cancel(order_id=order.pk, reason="test")
        assert (db_stock(sale), redis_stock(sale)) == (3, 3)
        assert not client().sismember(keys.buyers(sale.pk), user.pk)
        assert client().get(keys.result(sale.pk, user.pk)) is None
        assert not SeckillOrder.objects.get(order=order).live
        with django_capture_on_commit_callbacks(execute=True):
            assert not services.order_cancel(order_id=order.pk, reason="again")  # idempotent
        assert (db_stock(sale), redis_stock(sale)) == (3, 3)

    def test_paying_a_cancelled_order_is_refused(self):
        order = buy(sale=make_sale(), user=make_user())
        services.order_cancel_by_user(order=order)
        with pytest.raises(services.OrderStateError, match="cancelled"):
            pay(order)

    def test_cancelling_a_paid_order_is_refused(self):
        order = pay(buy(sale=make_sale(), user=make_user()))
        with pytest.raises(services.OrderStateError, match="already paid"):
            services.order_cancel_by_user(order=order)
        assert Order.objects.get(pk=order.pk).status == OrderStatus.PAID

    def test_paying_after_the_deadline_is_refused(self):
        order = buy(sale=make_sale(), user=make_user())
        overdue(order)
        with pytest.raises(services.OrderStateError, match="ran out"):
            pay(order)

    def test_expiry_sweep_cancels_only_overdue_unpaid(self, django_capture_on_commit_callbacks):
        sale = make_sale(stock=5)
        late, fresh, paid = (buy(sale=sale, user=make_user()) for _ in range(3))
        pay(paid)
        overdue(late, paid)
        with django_capture_on_commit_callbacks(execute=True):
            assert services.orders_expire_unpaid() == 1
        statuses = dict(Order.objects.values_list("pk", "status"))
        assert statuses == {late.pk: "cancelled", fresh.pk: "unpaid", paid.pk: "paid"}
        assert (db_stock(sale), redis_stock(sale)) == (3, 3)

    def test_a_cancelled_shopper_can_buy_again_a_paid_one_cannot(self, django_capture_on_commit_callbacks):
        sale = make_sale(stock=5)
        quitter, payer = make_user(), make_user()
        with django_capture_on_commit_callbacks(execute=True):
            services.order_cancel_by_user(order=buy(sale=sale, user=quitter))
        again = buy(sale=sale, user=quitter)
        assert again.status == OrderStatus.UNPAID
        pay(buy(sale=sale, user=payer))
        with pytest.raises(AssertionError, match="reserve refused: -1"):
            buy(sale=sale, user=payer)


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
class TestRaces:
    """Real threads with their own PostgreSQL connections."""

    def _in_thread(self, function):
        def run(*args):
            try:
                return function(*args)
            finally:
                connection.close()

        return run

    def test_expiry_returns_stock_exactly_once_under_concurrent_sweeps_and_cancels(self):
        sale = make_sale(stock=40)
        orders = [buy(sale=sale, user=user) for user in make_users(30)]
        overdue(*orders)
        assert (db_stock(sale), redis_stock(sale)) == (10, 10)
        start = threading.Barrier(3)

        def sweep():
            start.wait()
            return services.orders_expire_unpaid(batch_size=7)

        def shopper_cancels():
            start.wait()
            return sum(services.order_cancel(order_id=o.pk, reason="shopper") for o in orders[::2])

        with ThreadPoolExecutor(3) as pool:
            results = [pool.submit(self._in_thread(f)) for f in (sweep, sweep, shopper_cancels)]
            counts = [r.result() for r in results]
        assert sum(counts) == 30  # each order cancelled by exactly one of them
        assert Order.objects.filter(status=OrderStatus.CANCELLED).count() == 30
        assert (db_stock(sale), redis_stock(sale)) == (40, 40)
        assert client().scard(keys.buyers(sale.pk)) == 0

    def test_pay_versus_expire_races_have_exactly_one_winner(self):
        races = 100
        sale = make_sale(stock=races)
        orders = [buy(sale=sale, user=user) for user in make_users(races)]
        addresses = {order.user_id: make_address(order.user) for order in orders}
        # Not yet due, so paying is allowed; the expiry path (order_cancel, as the sweep
        # calls it) runs at the same instant.
        Order.objects.update(pay_deadline=timezone.now() + timedelta(seconds=60))

        def race(order):
            barrier = threading.Barrier(2)
            outcome = {}

            def pay():
                barrier.wait()
                try:
                    services.order_pay(order=Order.objects.get(pk=order.pk), address=addresses[order.user_id])
                    outcome["paid"] = True
                except services.OrderStateError:
                    outcome["paid"] = False

            def expire():
                barrier.wait()
                outcome["cancelled"] = services.order_cancel(order_id=order.pk, reason="expired")

            with ThreadPoolExecutor(2) as pool:
                for f in (pay, expire):
                    pool.submit(self._in_thread(f))
            return outcome

        with ThreadPoolExecutor(4) as pool:
            outcomes = list(pool.map(self._in_thread(race), orders))
        assert all(o["paid"] != o["cancelled"] for o in outcomes), outcomes
        paid = sum(o["paid"] for o in outcomes)
        statuses = list(Order.objects.values_list("status", flat=True))
        assert statuses.count("paid") == paid and statuses.count("cancelled") == races - paid
        assert db_stock(sale) == races - paid == redis_stock(sale)
        print(f"\npay vs expire: {paid} paid, {races - paid} cancelled of {races} races")
