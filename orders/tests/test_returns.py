"""After-sales (orders.fulfilment.returns): a shipped or delivered order sent back for a refund,
each move once and from the one state it leaves, with its line in the trail; the return window;
shipped orders completing by themselves unless a return holds them, with the sweep racing a
return request in real threads."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from orders.fulfilment.returns import (
    order_complete_overdue,
    orders_complete_overdue,
    return_parcel_received,
    return_parcel_sent,
    return_request_approve,
    return_request_decline,
    return_request_open,
    return_request_withdraw,
)
from orders.fulfilment.services import order_deliver
from orders.models import (
    Order,
    OrderEvent,
    OrderStatus,
    PaymentStatus,
    ReturnRequest,
    ReturnRequestStatus,
    Shipment,
)
from orders.payments.reconcile import money_check
from orders.payments.refunds import order_refund
from orders.services import OrderStateError
from sales.models import Sale
from testutils.factories.orders import buy, pay, return_approved, shipped
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, make_users

JSON = {"HTTP_ACCEPT": "application/json"}


def _trail(order: Order) -> list[str]:
    return list(OrderEvent.objects.filter(order=order).values_list("kind", flat=True))


def _shipped_days_ago(order: Order, days: float) -> None:
    Shipment.objects.filter(order=order).update(shipped_at=timezone.now() - timedelta(days=days))


@pytest.mark.django_db
class TestMoves:
    def test_a_parcel_sent_back_and_received_refunds_the_order_through_its_provider(self):
        order = shipped()
        sale_stock = Sale.objects.get(pk=order.sale_id).stock_count
        request = return_approved(order)
        return_parcel_sent(order_id=order.pk, carrier="yto", tracking_no="yt 123-45", actor_id=order.user_id)
        request.refresh_from_db()
        assert (request.status, request.carrier, request.tracking_no) == ("sent", "yto", "YT123-45")
        return_parcel_received(order_id=order.pk, request_id=request.pk, actor_id=None)
        request.refresh_from_db()
        assert request.status == ReturnRequestStatus.REFUNDED and request.refunded_at
        assert Order.objects.get(pk=order.pk).status == OrderStatus.REFUNDED
        assert order.payments.get().status == PaymentStatus.REFUNDING
        assert _trail(order) == [
            "paid",
            "shipped",
            "return requested",
            "return approved",
            "return sent",
            "return received",
            "refunded",
        ]
        # Sold and shipped: the unit does not go back on sale.
        assert Sale.objects.get(pk=order.sale_id).stock_count == sale_stock
        assert money_check() == []

    def test_a_delivered_order_goes_back_within_its_window_only(self, settings):
        settings.RETURN_WINDOW_DAYS = 7
        order = shipped()
        order_deliver(order_id=order.pk, actor_id=None)
        Shipment.objects.filter(order=order).update(delivered_at=timezone.now() - timedelta(days=6))
        asked = return_request_open(order_id=order.pk, reason="too big", actor_id=None)
        return_request_withdraw(order_id=order.pk, actor_id=None)
        assert ReturnRequest.objects.get(pk=asked.pk).status == "withdrawn"
        Shipment.objects.filter(order=order).update(delivered_at=timezone.now() - timedelta(days=8))
        with pytest.raises(OrderStateError, match="7 days after delivery"):
            return_request_open(order_id=order.pk, reason="too big", actor_id=None)
        assert ReturnRequest.objects.filter(order=order).count() == 1

    def test_each_move_is_refused_from_any_other_state_and_changes_nothing(self):
        paid = pay(buy(sale=make_sale(), user=make_user()))
        with pytest.raises(OrderStateError):
            return_request_open(order_id=paid.pk, reason="x", actor_id=None)
        order = shipped()
        with pytest.raises(OrderStateError):
            return_request_open(order_id=order.pk, reason="  ", actor_id=None)
        request = return_request_open(order_id=order.pk, reason="x", actor_id=None)
        with pytest.raises(OrderStateError, match="under way"):
            return_request_open(order_id=order.pk, reason="again", actor_id=None)
        with pytest.raises(OrderStateError):  # not approved yet
            return_parcel_sent(order_id=order.pk, carrier="sf", tracking_no="SF9", actor_id=None)
        with pytest.raises(OrderStateError):
            return_parcel_received(order_id=order.pk, request_id=request.pk, actor_id=None)
        with pytest.raises(OrderStateError):
            return_request_approve(order_id=order.pk, request_id=request.pk, return_address=" ", actor_id=None)
        return_request_decline(order_id=order.pk, request_id=request.pk, answer="Worn", actor_id=None)
        with pytest.raises(OrderStateError):
            return_request_approve(order_id=order.pk, request_id=request.pk, return_address="A", actor_id=None)
        with pytest.raises(OrderStateError):
            return_request_withdraw(order_id=order.pk, actor_id=None)
        assert Order.objects.get(pk=order.pk).status == OrderStatus.SHIPPED
        assert _trail(order) == ["paid", "shipped", "return requested", "return declined"]
        # After a decline the shopper may ask again.
        again = return_request_open(order_id=order.pk, reason="still broken", actor_id=None)
        return_request_approve(order_id=order.pk, request_id=again.pk, return_address="A", actor_id=None)
        with pytest.raises(OrderStateError):  # a bad parcel changes nothing
            return_parcel_sent(order_id=order.pk, carrier="sf", tracking_no="顺丰", actor_id=None)
        with pytest.raises(OrderStateError):
            return_parcel_sent(order_id=order.pk, carrier="pigeon", tracking_no="SF1", actor_id=None)
        return_parcel_sent(order_id=order.pk, carrier="sf", tracking_no="SF9", actor_id=None)
        with pytest.raises(OrderStateError):  # the parcel is on its way: too late to withdraw
            return_request_withdraw(order_id=order.pk, actor_id=None)
        assert ReturnRequest.objects.get(pk=again.pk).status == ReturnRequestStatus.SENT

    def test_a_merchant_refunding_outright_ends_the_return_under_way(self):
        order = shipped()
        return_approved(order)
        order_refund(order=order, reason="kept it", actor_id=None)
        assert ReturnRequest.objects.get(order=order).status == ReturnRequestStatus.REFUNDED


@pytest.mark.django_db
class TestAutoComplete:
    def test_a_shipped_order_completes_after_the_days_set_unless_a_return_holds_it(self, settings):
        settings.ORDER_AUTO_COMPLETE_DAYS = 10
        due, fresh, held = shipped(), shipped(), shipped()
        _shipped_days_ago(due, 10.1)
        _shipped_days_ago(fresh, 9.9)
        _shipped_days_ago(held, 30)
        request = return_request_open(order_id=held.pk, reason="broken", actor_id=None)
        assert orders_complete_overdue() == 1
        assert orders_complete_overdue() == 0
        statuses = dict(Order.objects.values_list("pk", "status"))
        assert (statuses[due.pk], statuses[fresh.pk], statuses[held.pk]) == ("delivered", "shipped", "shipped")
        assert _trail(due)[-1] == "completed" and OrderEvent.objects.get(order=due, kind="completed").actor is None
        assert Shipment.objects.get(order=due).delivered_at
        # Declined: the held order completes on the next sweep, and may still go back for a week.
        return_request_decline(order_id=held.pk, request_id=request.pk, answer="used", actor_id=None)
        assert orders_complete_overdue() == 1
        return_request_open(order_id=held.pk, reason="really broken", actor_id=None)

    def test_the_sweep_goes_on_past_an_order_that_fails(self, settings, monkeypatch):
        from orders.fulfilment import returns

        first, second = shipped(), shipped()
        _shipped_days_ago(first, 20)
        _shipped_days_ago(second, 19)
        real = returns.order_complete_overdue

        def flaky(*, order_id, now=None):
            if order_id == first.pk:
                raise ValueError("one bad order")
            return real(order_id=order_id, now=now)

        monkeypatch.setattr(returns, "order_complete_overdue", flaky)
        assert orders_complete_overdue() == 1
        assert Order.objects.get(pk=second.pk).status == OrderStatus.DELIVERED


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_the_sweep_racing_a_return_request_is_decided_under_the_row_lock():
    """For each overdue order, in real threads: the sweep completes it while the shopper asks
    to send it back. Either the request holds the order shipped, or the completion came first
    and the request lands on the delivered order, in its window; never a completion after a
    return was asked."""
    races = 12
    sale = make_sale(stock=races)
    orders = [shipped(sale=sale, user=user) for user in make_users(races)]
    for order in orders:
        _shipped_days_ago(order, 11)

    def race(order):
        barrier = threading.Barrier(2)

        def complete():
            barrier.wait()
            try:
                return order_complete_overdue(order_id=order.pk)
            finally:
                connection.close()

        def ask():
            barrier.wait()
            try:
                return_request_open(order_id=order.pk, reason="broken", actor_id=None)
                return True
            finally:
                connection.close()

        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(complete), pool.submit(ask)]
            return [future.result() for future in futures]

    outcomes = [race(order) for order in orders]
    for order, (completed, asked) in zip(orders, outcomes, strict=True):
        assert asked, "a return is always open to a shipped or freshly delivered order"
        trail = _trail(order)
        status = Order.objects.get(pk=order.pk).status
        if completed:
            assert status == OrderStatus.DELIVERED
            assert trail.index("completed") < trail.index("return requested")
        else:
            assert status == OrderStatus.SHIPPED and "completed" not in trail
    assert ReturnRequest.objects.filter(status="open").count() == races
    assert orders_complete_overdue() == 0  # every order not completed is held by its return
