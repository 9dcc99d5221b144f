import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from orders import services
from orders.models import Order, OrderStatus, Payment, PaymentStatus, SeckillOrder
from orders.payments import closing
from orders.payments.providers import Trade, TradeState
from orders.payments.reconcile import money_check
from orders.payments.services import Captured, payment_captured, payment_start
from sales.models import Sale
from sales.sale_state import keys
from seckill_site.redis import client
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user, make_users


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
        closing.order_cancel_by_shopper(order=order)
        with pytest.raises(services.OrderStateError, match="cancelled"):
            pay(order)

    def test_cancelling_a_paid_order_is_refused(self):
        order = pay(buy(sale=make_sale(), user=make_user()))
        with pytest.raises(services.OrderStateError, match="already paid"):
            closing.order_cancel_by_shopper(order=order)
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
            assert closing.orders_expire_unpaid() == 1
        statuses = dict(Order.objects.values_list("pk", "status"))
        assert statuses == {late.pk: "cancelled", fresh.pk: "unpaid", paid.pk: "paid"}
        assert (db_stock(sale), redis_stock(sale)) == (3, 3)

    def test_a_cancelled_shopper_can_buy_again_a_paid_one_cannot(self, django_capture_on_commit_callbacks):
        sale = make_sale(stock=5)
        quitter, payer = make_user(), make_user()
        with django_capture_on_commit_callbacks(execute=True):
            closing.order_cancel_by_shopper(order=buy(sale=sale, user=quitter))
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
            return closing.orders_expire_unpaid(batch_size=7)

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

    def test_payment_versus_expiry_races_keep_the_money_and_the_unit_together(self):
        """The provider's word that an attempt was paid races the expiry closing that attempt
        and cancelling the order: either the order is paid (and keeps its unit), or it is
        cancelled (its unit back on sale) and the money is being refunded, never both."""
        races = 60
        sale = make_sale(stock=races)
        orders = [buy(sale=sale, user=user) for user in make_users(races)]
        attempts = {}
        for order in orders:
            attempts[order.pk], _checkout = payment_start(
                order=order,
                provider_name="alipay",
                address=make_address(order.user),
                return_url="http://shop.test/r",
                notify_url="http://shop.test/n",
            )
        overdue(*orders)

        def race(order):
            barrier = threading.Barrier(2)
            outcome = {}

            def paid():
                barrier.wait()
                payment = Payment.objects.get(pk=attempts[order.pk].pk)
                outcome["paid"] = payment_captured(payment=payment, trade=Trade(TradeState.PAID)) == Captured.PAID

            def expire():
                barrier.wait()
                outcome["cancelled"] = closing.order_close(
                    order=Order.objects.get(pk=order.pk), reason="expired", force=True
                )

            with ThreadPoolExecutor(2) as pool:
                for f in (paid, expire):
                    pool.submit(self._in_thread(f))
            return outcome

        with ThreadPoolExecutor(4) as pool:
            outcomes = list(pool.map(self._in_thread(race), orders))
        assert all(o["paid"] != o["cancelled"] for o in outcomes), outcomes
        paid = sum(o["paid"] for o in outcomes)
        statuses = list(Order.objects.values_list("status", flat=True))
        assert statuses.count("paid") == paid and statuses.count("cancelled") == races - paid
        assert db_stock(sale) == races - paid == redis_stock(sale)
        assert Payment.objects.filter(status=PaymentStatus.REFUNDING).count() == races - paid
        assert money_check() == []
        print(f"\npayment vs expiry: {paid} paid, {races - paid} cancelled and refunded of {races} races")
