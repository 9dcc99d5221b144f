import io
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command
from django.db import connection

from goods.models import SeckillGoods
from goods.tests.factories import make_sale
from orders.models import Order, SeckillOrder
from orders.services import order_create_from_seckill
from orders.tests.factories import buy
from seckill import services
from seckill.tests.shoppers import reserve_directly
from seckill_site.redis import client, keys
from users.tests.factories import make_user, make_users


def strand(sale, user, age: float = 600) -> str:
    """A unit Redis handed out whose message was lost: the reserve script, and nothing else."""
    left, request_id = reserve_directly(user.pk, sale.pk, age=age)
    assert left >= 0
    return request_id


def agree(sale) -> bool:
    return int(client().get(keys.stock(sale.pk))) == SeckillGoods.objects.get(pk=sale.pk).stock_count


@pytest.mark.django_db
class TestReconcile:
    def test_a_clean_sale_is_left_alone(self):
        sale = make_sale(stock=5)
        buy(sale=sale, user=make_user())
        report = services.sale_reconcile(sale_id=sale.pk, repair=True)
        assert report.clean and report.after is None

    def test_finds_exactly_the_stranded_reservations_and_turns_them_into_orders(self):
        sale = make_sale(stock=10)
        for user in make_users(3):
            buy(sale=sale, user=user)
        stranded = {strand(sale, user): user for user in make_users(2)}
        fresh = strand(sale, make_user(), age=0)  # in flight right now: not stale
        report = services.sale_reconcile(sale_id=sale.pk, repair=False)
        assert set(report.stale_reservations) == set(stranded) and not report.finished
        assert Order.objects.count() == 3  # a report changes nothing
        report = services.sale_reconcile(sale_id=sale.pk, repair=True)
        assert report.finished == dict.fromkeys(stranded, "created")
        for request_id, user in stranded.items():
            order = SeckillOrder.objects.get(request_id=request_id).order
            assert order.user == user and int(client().get(keys.result(sale.pk, user.pk))) == order.pk
        assert list(client().hkeys(keys.reservations(sale.pk))) == [fresh.encode()]
        assert SeckillGoods.objects.get(pk=sale.pk).stock_count == 5
        assert int(client().get(keys.stock(sale.pk))) == 4  # 5 in the database, 1 still in flight
        # Its message arrives late after all: no second order.
        services.seckill_order_write(
            sale_id=sale.pk, user_id=stranded[next(iter(stranded))].pk, request_id=next(iter(stranded))
        )
        assert Order.objects.count() == 5

    def test_repairs_a_drifted_counter_and_buyer_set(self):
        sale = make_sale(stock=10)
        buyers = make_users(2)
        for user in buyers:
            buy(sale=sale, user=user)
        client().set(keys.stock(sale.pk), 42)
        client().delete(keys.buyers(sale.pk))
        report = services.sale_reconcile(sale_id=sale.pk, repair=True)
        assert report.before.previous_stock == 42 and report.before.stock == 8 and report.before.buyers_differ
        assert agree(sale)
        assert client().smembers(keys.buyers(sale.pk)) == {str(u.pk).encode() for u in buyers}
        assert services.sale_reconcile(sale_id=sale.pk, repair=True).clean  # idempotent

    def test_warm_does_not_count_a_written_order_twice(self):
        """An order committed whose reservation is not yet removed (the writer is between the
        two steps): the database stock already has it, so Redis must not subtract it again."""
        sale, user = make_sale(stock=5), make_user()
        request_id = strand(sale, user, age=0)
        order_create_from_seckill(sale_id=sale.pk, user_id=user.pk, request_id=request_id)  # step 1 only
        report = services.stock_warm(sale_id=sale.pk)
        assert report.stock == 4 and report.previous_stock == 4

    def test_command_reports_and_repairs(self):
        sale = make_sale(stock=3)
        strand(sale, make_user())
        out = io.StringIO()
        call_command("seckill_reconcile", "--sale", sale.pk, stdout=out)
        assert "stale reservations 1" in out.getvalue() and "run with --repair" in out.getvalue()
        out = io.StringIO()
        call_command("seckill_reconcile", "--repair", stdout=out)
        assert ": created" in out.getvalue()
        assert Order.objects.count() == 1 and agree(sale)


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_concurrent_reconcilers_finish_each_stranded_unit_once():
    sale = make_sale(stock=30)
    for user in make_users(20):
        strand(sale, user)
    barrier = threading.Barrier(3)

    def run(_):
        barrier.wait()
        try:
            return services.sale_reconcile(sale_id=sale.pk, repair=True)
        finally:
            connection.close()

    with ThreadPoolExecutor(3) as pool:
        reports = list(pool.map(run, range(3)))
    assert Order.objects.count() == 20
    assert SeckillGoods.objects.get(pk=sale.pk).stock_count == 10 and agree(sale)
    assert client().hlen(keys.reservations(sale.pk)) == 0
    assert sum(len(r.finished) for r in reports) == 20  # the reconcile lock let one run at a time


@pytest.mark.django_db
def test_warm_loads_every_lua_script_on_every_primary():
    from seckill_site.redis import LUA_DIR, script

    out = io.StringIO()
    call_command("seckill_warm", stdout=out)
    names = sorted(path.stem for path in LUA_DIR.glob("*.lua"))
    assert f"Lua scripts loaded: {', '.join(names)}" in out.getvalue()
    assert all(client().script_exists(*[script(name).sha for name in names]))


@pytest.mark.django_db(transaction=True)
def test_an_order_written_while_the_reconciler_reads_is_counted_once(monkeypatch):
    """An order writer that commits and finishes its reservation between the reconciler's
    database read and its Redis write used to leave the unit counted twice: Redis stock one
    too high and the buyer dropped from the set (seen in `make bench ARGS=--cluster`, two
    units of a 3,000-unit drain). The reconciler now holds the sale's stock lock across both,
    so the writer waits for it."""
    sale = make_sale(stock=5)
    first, second = make_users(2)
    _left, written_meanwhile = reserve_directly(first.pk, sale.pk)
    reserve_directly(second.pk, sale.pk)  # stays in flight
    real_snapshot = services._sale_snapshot
    landed = threading.Event()

    def write_meanwhile():
        try:
            services.seckill_order_write(sale_id=sale.pk, user_id=first.pk, request_id=written_meanwhile)
            landed.set()
        finally:
            connection.close()

    def snapshot_then_a_write(sale_id):
        snapshot = real_snapshot(sale_id)
        threading.Thread(target=write_meanwhile).start()
        landed.wait(1.0)  # without the lock the write lands here; with it, it waits
        return snapshot

    monkeypatch.setattr(services, "_sale_snapshot", snapshot_then_a_write)
    services.stock_warm(sale_id=sale.pk)
    assert landed.wait(10)

    assert SeckillGoods.objects.get(pk=sale.pk).stock_count == 4
    assert int(client().get(keys.stock(sale.pk))) == 3  # 4 in the database, 1 in flight
    assert {int(user) for user in client().smembers(keys.buyers(sale.pk))} == {first.pk, second.pk}


@pytest.mark.django_db(transaction=True)
def test_a_cancellation_the_reconciler_already_loaded_returns_its_unit_once():
    """A reconcile between a cancellation's commit and its Redis release loads the returned
    unit from the database; the release must not add it a second time."""
    sale = make_sale(stock=3)
    user = make_user()
    order = buy(sale=sale, user=user)
    from orders import services as orders

    real_release = orders._unit_returned_to_redis

    def reconcile_first(**kwargs):
        services.stock_warm(sale_id=sale.pk)
        real_release(**kwargs)

    orders._unit_returned_to_redis = reconcile_first
    try:
        assert orders.order_cancel(order_id=order.pk, reason=orders.REASON_SHOPPER)
    finally:
        orders._unit_returned_to_redis = real_release
    assert SeckillGoods.objects.get(pk=sale.pk).stock_count == 3
    assert int(client().get(keys.stock(sale.pk))) == 3
    assert not client().sismember(keys.buyers(sale.pk), user.pk)
