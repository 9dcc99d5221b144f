import io
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command
from django.db import connection

from orders.models import Order, SeckillOrder
from orders.services import order_create_from_seckill
from sales import sale_state
from sales.models import Sale
from sales.sale_state import keys
from seckill.services import reconcile as services
from seckill.services.writer import sale_flush
from seckill_site.redis import client
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, make_users
from testutils.shoppers import reserve_directly


def strand(sale, user, age: float = 600) -> str:
    """A unit Redis handed out whose message was lost: the reserve script, and nothing else."""
    left, request_id = reserve_directly(user.pk, sale.pk, age=age)
    assert left >= 0
    return request_id


def agree(sale) -> bool:
    return int(client().get(keys.stock(sale.pk))) == Sale.objects.get(pk=sale.pk).stock_count


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
        assert report.finished == dict.fromkeys(stranded, "written")
        for request_id, user in stranded.items():
            order = SeckillOrder.objects.get(request_id=request_id).order
            assert order.user == user and int(client().get(keys.result(sale.pk, user.pk))) == order.pk
        assert list(client().hkeys(keys.reservations(sale.pk))) == [fresh.encode()]
        assert Sale.objects.get(pk=sale.pk).stock_count == 5
        assert int(client().get(keys.stock(sale.pk))) == 4  # 5 in the database, 1 still in flight
        # Its flush arrives late after all: it writes the one in flight, and no second order.
        sale_flush(sale_id=sale.pk)
        assert Order.objects.count() == 6

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
        assert ": written" in out.getvalue()
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
    assert Sale.objects.get(pk=sale.pk).stock_count == 10 and agree(sale)
    assert client().hlen(keys.reservations(sale.pk)) == 0
    assert sum(len(r.finished) for r in reports) == 20  # the reconcile lock let one run at a time


@pytest.mark.django_db
def test_warm_loads_every_lua_script_on_every_primary():
    from seckill_site.redis import script, script_names

    out = io.StringIO()
    call_command("seckill_warm", stdout=out)
    names = script_names()
    assert "reserve" in names and "settle" in names and "unlock" in names
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
            order_create_from_seckill(sale_id=sale.pk, user_id=first.pk, request_id=written_meanwhile)
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

    assert Sale.objects.get(pk=sale.pk).stock_count == 4
    assert int(client().get(keys.stock(sale.pk))) == 3  # 4 in the database, 1 in flight
    assert {int(user) for user in client().smembers(keys.buyers(sale.pk))} == {first.pk, second.pk}


@pytest.mark.django_db(transaction=True)
def test_a_cancellation_the_reconciler_already_loaded_returns_its_unit_once(monkeypatch):
    """A reconcile between a cancellation's commit and its Redis return loads the returned
    unit from the database; the return must not add it a second time."""
    sale = make_sale(stock=3)
    user = make_user()
    order = buy(sale=sale, user=user)
    from orders import services as orders

    real_return = sale_state.unit_return

    def reconcile_first(**kwargs):
        services.stock_warm(sale_id=sale.pk)
        return real_return(**kwargs)

    monkeypatch.setattr(sale_state, "unit_return", reconcile_first)
    assert orders.order_cancel(order_id=order.pk, reason=orders.REASON_SHOPPER)
    assert Sale.objects.get(pk=sale.pk).stock_count == 3
    assert int(client().get(keys.stock(sale.pk))) == 3
    assert not client().sismember(keys.buyers(sale.pk), user.pk)


@pytest.mark.django_db(transaction=True)
def test_a_unit_comes_back_once_when_its_return_a_reconcile_and_a_rebuy_overlap(monkeypatch):
    """The cancellation committed; before its Redis step ran, a reconcile loaded the returned
    unit from the database and the shopper bought again. The late return used to see the
    shopper back in the buyer set and add the unit a second time."""
    from orders import services as orders

    sale = make_sale(stock=3)
    user = make_user()
    order = buy(sale=sale, user=user)
    late = sale_state.unit_return

    def reconcile_and_rebuy_first(**kwargs):
        services.sale_reconcile(sale_id=sale.pk, repair=True)
        reserve_directly(user.pk, sale.pk)
        return late(**kwargs)

    monkeypatch.setattr(sale_state, "unit_return", reconcile_and_rebuy_first)
    assert orders.order_cancel(order_id=order.pk, reason=orders.REASON_SHOPPER)
    sale_flush(sale_id=sale.pk)

    assert Sale.objects.get(pk=sale.pk).stock_count == 2
    assert int(client().get(keys.stock(sale.pk))) == 2
    assert Order.objects.filter(user=user, status="unpaid").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_sale_that_fails_to_reconcile_does_not_stop_the_others(monkeypatch):
    from seckill import tasks

    failing, healthy = make_sale(stock=5), make_sale(stock=5)
    stranded = strand(healthy, make_user())
    real = services._sale_snapshot

    def broken_for_one(sale_id):
        if sale_id == failing.pk:
            raise RuntimeError("a sale the reconciler cannot read")
        return real(sale_id)

    monkeypatch.setattr(services, "_sale_snapshot", broken_for_one)
    reports = {report.sale_id: report for report in services.sales_reconcile(repair=True)}

    assert "a sale the reconciler cannot read" in reports[failing.pk].error
    assert reports[healthy.pk].finished == {stranded: "written"}
    assert tasks.reconcile_sales() == 0  # the task counts the failure and goes on


@pytest.mark.django_db(transaction=True)
def test_a_long_ended_sale_is_swept_and_reconciled_until_nothing_of_it_is_in_flight(flushes):
    from seckill.selectors import sales_to_reconcile
    from seckill.services.writer import flushes_lapsed_publish

    sale = make_sale(stock=3, starts_in=-3 * 86400, lasts=3600)  # ended two days ago
    user = make_user()
    live = make_sale(stock=3)
    request_id = strand(live, user)  # a reservation made while it ran, whose flush was lost
    value = client().hget(keys.reservations(live.pk), request_id)
    client().hdel(keys.reservations(live.pk), request_id)
    client().hset(keys.reservations(sale.pk), request_id, value)
    assert sale.pk in sales_to_reconcile()
    assert flushes_lapsed_publish() == [sale.pk]

    reports = {report.sale_id: report for report in services.sales_reconcile(repair=True)}

    assert reports[sale.pk].finished == {request_id: "written"}
    assert client().hlen(keys.reservations(sale.pk)) == 0
    assert sale.pk not in sales_to_reconcile()  # nothing of it in flight: left alone again
