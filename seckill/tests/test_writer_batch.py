"""The order writer against real Redis and PostgreSQL: the reservations are the outbox, one
flush message per sale while one is pending, a batch of orders per transaction, one by one for
a batch the database refuses, and claims that make every settlement exclusive."""

import threading

import pytest
from django.db import connection
from django.db.models import Sum
from kombu.exceptions import OperationalError as BrokerError

from orders.models import Order, SeckillOrder
from orders.services import orders_create_from_seckill_batch
from sales.codes import SaleCode
from sales.models import Sale, StockAudit, StockChange
from sales.sale_state import keys
from seckill.services import writer
from seckill.services.gate import seckill_attempt
from seckill.services.reconcile import sale_reconcile
from seckill_site.codes import Code, EnvelopeCode
from seckill_site.redis import client
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_users
from testutils.shoppers import path_for, reserve_directly


def gate(user, sale) -> EnvelopeCode:
    path = path_for(user.pk, sale.pk)
    return seckill_attempt(user_id=user.pk, sale_id=sale.pk, path=path).code


def reservations(sale) -> dict[str, int]:
    return {
        rid.decode(): int(v.decode().split(":")[0]) for rid, v in client().hgetall(keys.reservations(sale.pk)).items()
    }


def assert_settled(sale, *, units: int, stock: int) -> None:
    """The sale's orders, both stocks, the audit log and every shopper's answer agree."""
    orders = Order.objects.filter(sale=sale)
    assert orders.count() == units
    assert orders.values("user_id").distinct().count() == units
    assert Sale.objects.get(pk=sale.pk).stock_count == stock
    assert int(client().get(keys.stock(sale.pk))) == stock
    assert client().hlen(keys.reservations(sale.pk)) == 0
    purchases = StockAudit.objects.filter(sale=sale, reason=StockChange.PURCHASE)
    assert purchases.aggregate(total=Sum("delta"))["total"] == -units
    for order in orders:
        assert client().get(keys.result(sale.pk, order.user_id)) == str(order.pk).encode()


@pytest.mark.django_db
class TestFlush:
    def test_only_the_buy_that_finds_no_flush_pending_publishes_one(self, flushes):
        sale = make_sale(stock=10)
        users = make_users(6)
        assert [gate(user, sale) for user in users] == [Code.SUCCESS] * 6
        assert flushes == [sale.pk]  # one message for six buys
        assert client().exists(keys.flush(sale.pk))

        report = writer.sale_flush(sale_id=sale.pk)

        assert (report.batches, report.created, report.one_by_one) == (1, 6, {})
        assert_settled(sale, units=6, stock=4)
        assert not client().exists(keys.flush(sale.pk))  # drained: the mark went with it
        assert gate(make_users(1)[0], sale) is Code.SUCCESS
        assert flushes == [sale.pk, sale.pk]  # so the next buy publishes again

    def test_a_batch_costs_the_same_queries_for_three_orders_or_forty(self, flushes, django_assert_max_num_queries):
        for count in (3, 40):
            sale = make_sale(stock=count)
            for user in make_users(count):
                assert gate(user, sale) is Code.SUCCESS
            connection.queries_log.clear()
            # the writer lock, already written?, live orders?, UPDATE, order numbers, two
            # INSERTs, the audit row, savepoint/commit: no query per order
            with django_assert_max_num_queries(12):
                report = writer.sale_flush(sale_id=sale.pk)
            assert report.created == count
            assert_settled(sale, units=count, stock=0)

    def test_batches_are_at_most_the_configured_size(self, flushes, settings):
        settings.SECKILL_WRITER_BATCH_SIZE = 7
        sale = make_sale(stock=20)
        for user in make_users(20):
            reserve_directly(user.pk, sale.pk)
        sizes = []
        report = writer.sale_flush(sale_id=sale.pk, on_batch=lambda done: sizes.append(len(done.reservations)))
        assert sorted(sizes, reverse=True) == [7, 7, 6] and report.created == 20
        assert_settled(sale, units=20, stock=0)

    def test_a_buy_during_the_flush_is_written_by_the_same_flush(self, flushes, monkeypatch):
        sale = make_sale(stock=5)
        first, late = make_users(2)
        assert gate(first, sale) is Code.SUCCESS
        write = writer.orders_create_from_seckill_batch

        def buy_while_the_batch_is_written(**kwargs):
            if not Order.objects.filter(user=late).exists() and late.pk not in reservations(sale).values():
                assert gate(late, sale) is Code.SUCCESS
            return write(**kwargs)

        monkeypatch.setattr(writer, "orders_create_from_seckill_batch", buy_while_the_batch_is_written)
        report = writer.sale_flush(sale_id=sale.pk)

        assert flushes == [sale.pk]  # the late buy found the flush pending and published nothing
        assert (report.batches, report.created) == (2, 2)
        assert_settled(sale, units=2, stock=3)

    def test_a_flush_delivered_twice_writes_each_order_once(self, flushes):
        sale = make_sale(stock=5)
        for user in make_users(3):
            reserve_directly(user.pk, sale.pk)
        # The worker committed the batch and died before telling Redis: the message comes back.
        written = orders_create_from_seckill_batch(sale_id=sale.pk, reservations=reservations(sale))
        assert len(written) == 3

        report = writer.sale_flush(sale_id=sale.pk)

        # The unique request ids refuse the batch; one by one, each finds its order.
        assert (report.created, report.one_by_one) == (0, {"already written": 3})
        assert_settled(sale, units=3, stock=2)
        assert writer.sale_flush(sale_id=sale.pk).batches == 0  # and a third time finds nothing

    def test_a_batch_with_a_shopper_who_already_holds_an_order_is_written_one_by_one(self, flushes):
        sale = make_sale(stock=5)
        holder, other = make_users(2)
        held = buy(sale=sale, user=holder)
        client().srem(keys.buyers(sale.pk), holder.pk)  # as if Redis had lost its buyer set
        reserve_directly(holder.pk, sale.pk)
        reserve_directly(other.pk, sale.pk)

        report = writer.sale_flush(sale_id=sale.pk)

        assert report.one_by_one == {"created": 1, "duplicate": 1}
        assert set(Order.objects.filter(sale=sale).values_list("user_id", flat=True)) == {holder.pk, other.pk}
        assert client().get(keys.result(sale.pk, holder.pk)) == str(held.pk).encode()
        assert Sale.objects.get(pk=sale.pk).stock_count == 3
        assert int(client().get(keys.stock(sale.pk))) == 3  # the duplicate's unit went back
        assert client().hlen(keys.reservations(sale.pk)) == 0

    def test_a_batch_larger_than_the_database_stock_lets_the_database_decide_each(self, flushes):
        sale = make_sale(stock=3)
        users = make_users(3)
        for user in users:
            reserve_directly(user.pk, sale.pk)
        Sale.objects.filter(pk=sale.pk).update(stock_count=1)  # Redis ran ahead of the database

        report = writer.sale_flush(sale_id=sale.pk)

        assert report.one_by_one == {"created": 1, "sold out": 2}
        assert Order.objects.filter(sale=sale).count() == 1
        assert Sale.objects.get(pk=sale.pk).stock_count == 0
        answers = sorted(client().get(keys.result(sale.pk, user.pk)) for user in users)
        assert answers.count(b"-1") == 2
        assert client().hlen(keys.reservations(sale.pk)) == 0

    def test_a_flush_the_broker_took_despite_a_failed_publish_writes_nothing(self, monkeypatch):
        """The gate saw the publish fail, gave the unit back and told the shopper to try again;
        the broker had the message after all."""
        from celery_app import app

        sale = make_sale(stock=2)
        [user] = make_users(1)
        delivered = []

        def published_then_failed(name, kwargs=None, **options):
            delivered.append(kwargs)
            raise BrokerError("connection reset by peer")

        monkeypatch.setattr(app, "send_task", published_then_failed)
        assert gate(user, sale) is SaleCode.TRY_AGAIN
        assert not client().exists(keys.flush(sale.pk))  # the next buy publishes

        assert writer.sale_flush(**delivered[0]).batches == 0
        assert not Order.objects.filter(sale=sale).exists()
        assert int(client().get(keys.stock(sale.pk))) == 2

    def test_a_batch_order_is_the_order_the_one_by_one_writer_makes(self, flushes):
        """The batch writes its rows in SQL of its own: every column must come out as the
        ORM's writer makes it, so a new field cannot be left out of the batch unnoticed."""
        from orders.services import order_create_from_seckill

        sale = make_sale(stock=5)
        single_user, batch_user = make_users(2)
        _left, request_id = reserve_directly(single_user.pk, sale.pk)
        order_create_from_seckill(sale_id=sale.pk, user_id=single_user.pk, request_id=request_id)  # one by one
        single = Order.objects.get(user=single_user)
        writer.sale_flush(sale_id=sale.pk)  # its reservation: "already written"
        reserve_directly(batch_user.pk, sale.pk)
        writer.sale_flush(sale_id=sale.pk)
        batched = Order.objects.get(sale=sale, user=batch_user)

        differ = {"id", "order_no", "user", "created_at", "pay_deadline"}
        for field in Order._meta.concrete_fields:
            if field.name not in differ:
                assert getattr(batched, field.attname) == getattr(single, field.attname), field.name
        assert abs(batched.pay_deadline - batched.created_at - (single.pay_deadline - single.created_at)).seconds < 2
        assert len(batched.order_no) == len(single.order_no) and batched.order_no[:8] == single.order_no[:8]
        single_link, batch_link = single.seckill, batched.seckill
        for field in SeckillOrder._meta.concrete_fields:
            if field.name not in {"id", "user", "order", "request_id", "created_at"}:
                assert getattr(batch_link, field.attname) == getattr(single_link, field.attname), field.name

    def test_the_sweep_publishes_a_flush_once_a_lost_flush_mark_lapsed(self, flushes):
        idle, sale = make_sale(stock=3), make_sale(stock=3)
        [user] = make_users(1)
        reserve_directly(user.pk, sale.pk)  # set the flush mark; its message was never published
        assert flushes == []
        assert writer.flushes_lapsed_publish() == []  # the mark still stands for a flush on its way

        client().delete(keys.flush(sale.pk))  # it lapsed
        assert writer.flushes_lapsed_publish() == [sale.pk]
        assert flushes == [sale.pk] and client().exists(keys.flush(sale.pk))
        assert writer.flushes_lapsed_publish() == []  # one flush on its way is enough

        writer.sale_flush(sale_id=sale.pk)
        assert_settled(sale, units=1, stock=2)
        assert writer.flushes_lapsed_publish() == [] and idle.pk not in flushes

    def test_the_reconciler_still_writes_reservations_no_flush_picked_up(self, flushes):
        sale = make_sale(stock=4)
        [user] = make_users(1)
        _left, request_id = reserve_directly(user.pk, sale.pk, age=600)  # its flush was lost
        report = sale_reconcile(sale_id=sale.pk, repair=True)
        assert report.finished == {request_id: "written"}
        assert_settled(sale, units=1, stock=3)


@pytest.mark.django_db(transaction=True)
def test_flushes_racing_on_one_sale_write_each_order_once(settings):
    """Three flushes of one sale at once (a redelivery and lapsed marks), each on its own
    database connection: they take turns on the sale's writer lock; nothing is written twice."""
    settings.SECKILL_WRITER_BATCH_SIZE = 25
    sale = make_sale(stock=120)
    for user in make_users(100):
        reserve_directly(user.pk, sale.pk)
    reports, errors = [], []

    def flush():
        try:
            reports.append(writer.sale_flush(sale_id=sale.pk))
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=flush) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert errors == []
    assert sum(report.created for report in reports) == 100
    assert SeckillOrder.objects.filter(sale=sale).count() == 100
    assert_settled(sale, units=100, stock=20)


@pytest.mark.django_db(transaction=True)
class TestExclusiveSettlements:
    """The defects that lived where the gate, the writer and the cancellation met: each
    settlement of a reservation now happens once, by whoever holds its claim."""

    def test_a_reservation_of_a_deleted_account_is_refused_and_never_stalls_the_sale(self, flushes):
        sale = make_sale(stock=5)
        doomed, later = make_users(2)
        assert gate(doomed, sale) is Code.SUCCESS
        doomed_id = doomed.pk
        doomed.delete()  # a merchant removes a scalper's account mid-sale
        assert gate(later, sale) is Code.SUCCESS

        report = writer.sale_flush(sale_id=sale.pk)  # raised IntegrityError for good before

        assert report.one_by_one == {"refused": 1, "created": 1}
        assert Order.objects.filter(sale=sale, user=later).exists()
        assert int(client().get(keys.stock(sale.pk))) == Sale.objects.get(pk=sale.pk).stock_count == 4
        assert client().get(keys.result(sale.pk, doomed_id)) == b"-1"
        assert not client().sismember(keys.buyers(sale.pk), doomed_id)
        assert client().hlen(keys.reservations(sale.pk)) == 0

    def test_a_give_back_after_a_running_flush_wrote_the_order_answers_queued(self, monkeypatch):
        """The publish failed, but a flush already running had taken the reservation: the
        shopper holds an order, so "try again" would be a lie (and the unit counted twice)."""
        from celery_app import app

        sale = make_sale(stock=3)
        [user] = make_users(1)

        def flushed_then_failed(name, kwargs=None, **options):
            writer.sale_flush(sale_id=kwargs["sale_id"])
            raise BrokerError("connection reset by peer")

        monkeypatch.setattr(app, "send_task", flushed_then_failed)
        assert gate(user, sale) is Code.SUCCESS
        order = Order.objects.get(user=user, sale=sale)
        assert client().get(keys.result(sale.pk, user.pk)) == str(order.pk).encode()
        assert int(client().get(keys.stock(sale.pk))) == Sale.objects.get(pk=sale.pk).stock_count == 2

    def test_a_give_back_while_a_flush_holds_the_reservation_changes_nothing(self, flushes, monkeypatch):
        from sales import sale_state

        sale = make_sale(stock=3)
        [user] = make_users(1)
        _left, request_id = reserve_directly(user.pk, sale.pk)
        write = writer.orders_create_from_seckill_batch
        answers = []

        def give_back_first(**kwargs):
            answers.append(sale_state.give_back(sale_id=sale.pk, user_id=user.pk, request_id=request_id))
            return write(**kwargs)

        monkeypatch.setattr(writer, "orders_create_from_seckill_batch", give_back_first)
        writer.sale_flush(sale_id=sale.pk)

        assert answers == [sale_state.GiveBack.CLAIMED]
        assert int(client().get(keys.stock(sale.pk))) == Sale.objects.get(pk=sale.pk).stock_count == 2

    def test_the_give_back_leaves_a_flush_mark_a_running_flush_renewed(self, flushes):
        """A buy set the mark (its flush was due) and its publish failed; meanwhile a flush that
        was on its way anyway (a redelivery) took another reservation and renewed the mark. The
        give-back must not delete that flush's mark: later buys rely on it."""
        import time

        from sales import sale_state

        sale = make_sale(stock=5)
        earlier, buyer = make_users(2)
        reserve_directly(earlier.pk, sale.pk, age=600)
        client().delete(keys.flush(sale.pk))  # the earlier reservation's flush message is the redelivery
        _left, failed = reserve_directly(buyer.pk, sale.pk)
        assert client().get(keys.flush(sale.pk)) == failed.encode()  # this buy set the mark
        claimed = sale_state.claim(
            sale_id=sale.pk, token="redelivered", size=10, lease_ms=30_000, flush_mark_ms=5000,
            reserved_before=time.time() - 300,
        )  # fmt: skip
        assert [one.user_id for one in claimed.reservations] == [earlier.pk]

        given_back = sale_state.give_back(sale_id=sale.pk, user_id=buyer.pk, request_id=failed)

        assert given_back is sale_state.GiveBack.GIVEN_BACK
        assert client().get(keys.flush(sale.pk)) == b"redelivered"

    def test_a_late_settle_never_points_the_answer_at_a_cancelled_order(self, flushes):
        """A writer committed an order and stopped before settling it; the shopper cancelled and
        bought again. Its late settle (or a redelivery's) must not name the cancelled order."""
        from orders import services as orders
        from sales import sale_state

        sale = make_sale(stock=3)
        [user] = make_users(1)
        reserve_directly(user.pk, sale.pk)
        claimed = sale_state.claim(sale_id=sale.pk, token="stopped", size=10, lease_ms=0, flush_mark_ms=5000)
        settles, _created = writer._batch_write(sale.pk, claimed.reservations, writer.FlushReport())  # committed
        first = Order.objects.get(user=user)
        orders.order_cancel(order_id=first.pk, reason=orders.REASON_SHOPPER)
        reserve_directly(user.pk, sale.pk)
        writer.sale_flush(sale_id=sale.pk)  # the rebuy's order
        second = Order.objects.get(user=user, status="unpaid")

        sale_state.settle(sale_id=sale.pk, token="stopped", settles=settles, flush_mark_ms=5000)  # it resumes
        writer.sale_flush(sale_id=sale.pk, token="stopped")  # and its message comes back too

        assert client().get(keys.result(sale.pk, user.pk)) == str(second.pk).encode()
        assert int(client().get(keys.stock(sale.pk))) == Sale.objects.get(pk=sale.pk).stock_count == 2
