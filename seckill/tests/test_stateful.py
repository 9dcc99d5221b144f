"""A Hypothesis state machine over the whole lifecycle against real Redis and PostgreSQL.

Messages to the order writer are captured instead of published, so the machine decides when
each is delivered — once, twice (redelivery), or after Redis lost everything.
"""

from datetime import timedelta

import pytest
from django.db.models import Count
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from goods.models import SeckillGoods
from goods.tests.factories import make_sale
from orders import services as orders
from orders.models import Order, OrderStatus, SeckillOrder
from orders.tests.factories import pay
from seckill import services
from seckill.tests.shoppers import path_for
from seckill_site.codes import Code
from seckill_site.redis import client, keys
from users.tests.factories import make_users

STOCK = 3
SHOPPERS = 5


class Lifecycle(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.sale = make_sale(stock=STOCK)
        self.users = make_users(SHOPPERS)
        self.pending: list[dict] = []  # published, not yet delivered
        self.delivered: list[dict] = []
        self.queued_users: set[int] = set()
        # After Redis loses its keys, messages already in flight ("orphans") are written later
        # without Redis knowing: Redis then runs one unit ahead of the database (the database's
        # conditional UPDATE refuses that unit) until the reconciler runs after their delivery.
        self.drift_possible = False
        self.orphans: set[str] = set()
        from seckill.tasks import order_write, sale_rebuild

        # One message per buy (the per-request writer), each delivered when the machine says;
        # the batch writer's flushes run the same per-reservation writer when refused.
        self._per_request = override_settings(SECKILL_ORDER_WRITER="per-request")
        self._per_request.enable()
        self._real_apply_async = order_write.apply_async
        self._real_rebuild = sale_rebuild.delay
        order_write.apply_async = lambda kwargs, **options: self.pending.append(kwargs)
        self.rebuild_requested = False
        sale_rebuild.delay = lambda **kwargs: setattr(self, "rebuild_requested", True)

    def teardown(self):
        from seckill.tasks import order_write

        try:
            while self.pending:
                self.deliver(0)
            self.orphans.clear()
            if client().get(keys.stock(self.sale.pk)) is None:
                services.stock_warm(sale_id=self.sale.pk)
            services.sale_reconcile(sale_id=self.sale.pk, repair=True)
            self.redis_agrees_with_the_database(force=True)
            for user_id in self.queued_users:
                has_order = SeckillOrder.objects.filter(user_id=user_id, sale=self.sale).exists()
                answer = client().get(keys.result(self.sale.pk, user_id))
                assert has_order or answer == b"-1", f"user {user_id} was queued and then forgotten"
        finally:
            from seckill.tasks import sale_rebuild

            order_write.apply_async = self._real_apply_async
            sale_rebuild.delay = self._real_rebuild
            self._per_request.disable()

    def _unpaid(self, user_index):
        return Order.objects.filter(user=self.users[user_index], sale=self.sale, status=OrderStatus.UNPAID).first()

    @rule(user_index=st.integers(0, SHOPPERS - 1))
    def buy(self, user_index):
        user = self.users[user_index]
        attempt = services.seckill_attempt(user_id=user.pk, sale_id=self.sale.pk, path=path_for(user.pk, self.sale.pk))
        if attempt.code is Code.SUCCESS:
            self.queued_users.add(user.pk)

    @precondition(lambda self: self.pending)
    @rule(index=st.integers(0, 10))
    def deliver(self, index):
        message = self.pending.pop(index % len(self.pending))
        services.seckill_order_write(**message)
        self.delivered.append(message)
        if message["request_id"] in self.orphans:
            self.orphans.discard(message["request_id"])
            self.drift_possible = True

    @precondition(lambda self: self.delivered)
    @rule(index=st.integers(0, 10))
    def redeliver(self, index):
        services.seckill_order_write(**self.delivered[index % len(self.delivered)])

    @rule(user_index=st.integers(0, SHOPPERS - 1))
    def pay(self, user_index):
        order = self._unpaid(user_index)
        if order is not None:
            pay(order)

    @rule(user_index=st.integers(0, SHOPPERS - 1))
    def cancel(self, user_index):
        order = self._unpaid(user_index)
        if order is not None:
            orders.order_cancel_by_user(order=order)
            services.sold_out_clear()  # the one-second mark would lapse; the machine does not wait

    @rule()
    def expire(self):
        Order.objects.filter(sale=self.sale, status=OrderStatus.UNPAID).update(
            pay_deadline=timezone.now() - timedelta(seconds=1)
        )
        orders.orders_expire_unpaid()
        services.sold_out_clear()

    @rule()
    def redis_loses_the_sale(self):
        client().delete(*[key(self.sale.pk) for key in (keys.stock, keys.buyers, keys.reservations, keys.window)])
        services._windows.clear()
        services.sold_out_clear()
        self.drift_possible = True
        self.orphans |= {message["request_id"] for message in self.pending}

    @precondition(lambda self: self.rebuild_requested and not self.orphans)
    @rule()
    def rebuild_after_the_queue_went_round(self):
        """tasks.sale_rebuild runs only after every message published before the loss."""
        services.stock_warm(sale_id=self.sale.pk)
        client().delete(keys.rebuild_lock(self.sale.pk))
        self.rebuild_requested = False
        self.drift_possible = False

    @rule()
    def reconcile(self):
        services.sale_reconcile(sale_id=self.sale.pk, repair=True, stale_after=0)
        services.sold_out_clear()
        self.drift_possible = bool(self.orphans)

    @invariant()
    def never_oversold_and_units_conserved(self):
        db_stock = SeckillGoods.objects.get(pk=self.sale.pk).stock_count
        live = Order.objects.filter(sale=self.sale).exclude(status=OrderStatus.CANCELLED).count()
        assert db_stock >= 0
        assert live + db_stock == STOCK

    @invariant()
    def one_live_order_per_user(self):
        doubles = SeckillOrder.objects.filter(sale=self.sale, live=True).values("user").annotate(n=Count("id"))
        assert all(row["n"] == 1 for row in doubles)

    @invariant()
    def redis_agrees_with_the_database(self, force=False):
        stock = client().get(keys.stock(self.sale.pk))
        if stock is None or (self.drift_possible and not force):
            return
        assert int(stock) >= 0
        written = set(SeckillOrder.objects.filter(sale=self.sale).values_list("request_id", flat=True))
        in_flight = [rid for rid in client().hkeys(keys.reservations(self.sale.pk)) if rid.decode() not in written]
        db_stock = SeckillGoods.objects.get(pk=self.sale.pk).stock_count
        assert int(stock) == db_stock - len(in_flight)


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_lifecycle_state_machine(settings):
    from hypothesis.stateful import run_state_machine_as_test

    # The machine's few shoppers buy, cancel and buy again far faster than a person could:
    # the per-sale limits (seckill/tests/test_limits.py) are not what it explores.
    settings.SECKILL_CAPTCHAS_PER_MINUTE = settings.SECKILL_PATHS_PER_MINUTE = 10**6

    run_state_machine_as_test(
        Lifecycle,
        settings=hypothesis_settings(
            max_examples=60, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
        ),
    )
