"""Shipping, delivery and refund requests: each move once, from the one state it leaves, with
its line in the audit trail; racing moves on one order, in real threads on real PostgreSQL,
leave exactly one of them done."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from orders.fulfilment.services import (
    order_deliver,
    order_ship,
    refund_request_approve,
    refund_request_decline,
    refund_request_open,
    tracking_no_clean,
)
from orders.models import (
    Order,
    OrderEvent,
    OrderStatus,
    PaymentStatus,
    RefundRequest,
    RefundRequestStatus,
    Shipment,
)
from orders.payments.closing import order_cancel_by_shopper
from orders.payments.reconcile import money_check
from orders.payments.refunds import order_refund
from orders.services import OrderStateError
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, make_users


def _paid(sale=None) -> Order:
    return pay(buy(sale=sale or make_sale(), user=make_user()))


def _trail(order: Order) -> list[str]:
    return list(OrderEvent.objects.filter(order=order).values_list("kind", flat=True))


@pytest.mark.django_db
class TestMoves:
    def test_an_order_ships_then_is_delivered_and_the_trail_says_who(self):
        order = _paid()
        merchant = order.goods.owner
        shipment = order_ship(order_id=order.pk, carrier="sf", tracking_no=" sf 1234 5678 ", actor_id=merchant.pk)
        assert (shipment.carrier, shipment.tracking_no) == ("sf", "SF12345678")
        assert Order.objects.get(pk=order.pk).status == OrderStatus.SHIPPED
        order_deliver(order_id=order.pk, actor_id=order.user_id)
        assert Order.objects.get(pk=order.pk).status == OrderStatus.DELIVERED
        assert Shipment.objects.get(pk=order.pk).delivered_at is not None
        assert _trail(order) == ["paid", "shipped", "delivered"]
        events = OrderEvent.objects.filter(order=order)
        assert [event.actor_id for event in events] == [None, merchant.pk, order.user_id]
        assert money_check() == []  # a shipped or delivered order keeps its one payment

    def test_each_move_is_refused_from_any_other_state_and_changes_nothing(self):
        unpaid = buy(sale=make_sale(), user=make_user())
        with pytest.raises(OrderStateError, match="Only a paid order can be shipped"):
            order_ship(order_id=unpaid.pk, carrier="sf", tracking_no="SF1", actor_id=None)
        with pytest.raises(OrderStateError, match="Only a shipped order"):
            order_deliver(order_id=unpaid.pk, actor_id=None)
        with pytest.raises(OrderStateError, match="Only a paid order can be refunded"):
            refund_request_open(order_id=unpaid.pk, reason="changed my mind", actor_id=unpaid.user_id)
        order = _paid()
        order_ship(order_id=order.pk, carrier="zto", tracking_no="7301", actor_id=None)
        with pytest.raises(OrderStateError, match="Only a paid order can be shipped"):
            order_ship(order_id=order.pk, carrier="sf", tracking_no="SF2", actor_id=None)
        with pytest.raises(OrderStateError, match="has shipped"):
            refund_request_open(order_id=order.pk, reason="too late", actor_id=order.user_id)
        with pytest.raises(OrderStateError, match="already paid"):
            order_cancel_by_shopper(order=Order.objects.get(pk=order.pk))
        assert Shipment.objects.get(pk=order.pk).tracking_no == "7301"
        assert _trail(unpaid) == [] and _trail(order) == ["paid", "shipped"]

    @pytest.mark.parametrize(
        ("carrier", "tracking_no", "words"),
        [
            ("dhl", "123", "Choose the carrier"),
            ("", "123", "Choose the carrier"),
            ("sf", "   ", "tracking number"),
            ("sf", "SF 123; DROP", "letters, digits"),
            ("sf", "x" * 41, "at most 40"),
            ("sf", "运单123", "letters, digits"),
            ("sf", "12\x00", "letters, digits"),
        ],
    )
    def test_a_bad_parcel_is_refused(self, carrier, tracking_no, words):
        order = _paid()
        with pytest.raises(OrderStateError, match=words):
            order_ship(order_id=order.pk, carrier=carrier, tracking_no=tracking_no, actor_id=None)
        assert Order.objects.get(pk=order.pk).status == OrderStatus.PAID and not Shipment.objects.exists()

    def test_tracking_numbers_keep_what_carriers_print(self):
        assert tracking_no_clean("jd0012 3456-78") == "JD00123456-78"

    def test_a_refund_request_declined_lets_the_order_ship(self):
        order = _paid()
        request = refund_request_open(order_id=order.pk, reason="  wrong size  ", actor_id=order.user_id)
        assert request.reason == "wrong size"
        with pytest.raises(OrderStateError, match="already asked"):
            refund_request_open(order_id=order.pk, reason="again", actor_id=order.user_id)
        with pytest.raises(OrderStateError, match="approve or decline it before shipping"):
            order_ship(order_id=order.pk, carrier="sf", tracking_no="SF1", actor_id=None)
        with pytest.raises(OrderStateError, match="why the refund is declined"):
            refund_request_decline(order_id=order.pk, request_id=request.pk, answer=" ", actor_id=None)
        refund_request_decline(
            order_id=order.pk, request_id=request.pk, answer="It is the size you chose", actor_id=None
        )
        with pytest.raises(OrderStateError, match="answered already"):
            refund_request_approve(order_id=order.pk, request_id=request.pk, actor_id=None)
        order_ship(order_id=order.pk, carrier="sf", tracking_no="SF1", actor_id=None)
        assert _trail(order) == ["paid", "refund requested", "refund declined", "shipped"]

    def test_a_refund_request_approved_refunds_through_the_provider(self):
        order = _paid()
        request = refund_request_open(order_id=order.pk, reason="ordered twice", actor_id=order.user_id)
        refund_request_approve(order_id=order.pk, request_id=request.pk, actor_id=order.goods.owner_id)
        assert Order.objects.get(pk=order.pk).status == OrderStatus.REFUNDED
        request.refresh_from_db()
        assert request.status == RefundRequestStatus.APPROVED and request.decided_by_id == order.goods.owner_id
        assert order.payments.get().status == PaymentStatus.REFUNDING
        assert _trail(order) == ["paid", "refund requested", "refunded"]
        assert money_check() == []

    def test_a_request_from_another_order_is_not_answered_here(self):
        first, second = _paid(), _paid()
        request = refund_request_open(order_id=first.pk, reason="no longer needed", actor_id=first.user_id)
        with pytest.raises(OrderStateError, match="answered already"):
            refund_request_approve(order_id=second.pk, request_id=request.pk, actor_id=None)
        assert Order.objects.get(pk=second.pk).status == OrderStatus.PAID

    def test_the_merchant_refunds_a_parcel_sent_back(self):
        order = _paid()
        order_ship(order_id=order.pk, carrier="yto", tracking_no="YT1", actor_id=None)
        order_refund(order=order, reason="returned unopened", actor_id=None)
        assert Order.objects.get(pk=order.pk).status == OrderStatus.REFUNDED
        assert _trail(order) == ["paid", "shipped", "refunded"]
        assert money_check() == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_racing_moves_on_one_order_leave_exactly_one_done():
    """For each order, in real threads: the merchant ships it twice, the shopper asks for a
    refund, and the merchant refunds it outright. Exactly one of the two ships lands; the
    request lands only before a ship; the trail has one line per move that happened."""
    races = 12
    sale = make_sale(stock=races)
    orders = [pay(buy(sale=sale, user=user)) for user in make_users(races)]

    def attempt(move):
        try:
            move()
            return True
        except OrderStateError:
            return False
        finally:
            connection.close()

    def race(order):
        barrier = threading.Barrier(4)

        def ship(tracking_no):
            barrier.wait()
            return attempt(lambda: order_ship(order_id=order.pk, carrier="sf", tracking_no=tracking_no, actor_id=None))

        def ask():
            barrier.wait()
            return attempt(lambda: refund_request_open(order_id=order.pk, reason="changed my mind", actor_id=None))

        def refund():
            barrier.wait()
            return attempt(lambda: order_refund(order=Order.objects.get(pk=order.pk), reason="out", actor_id=None))

        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(ship, "A1"), pool.submit(ship, "B2"), pool.submit(ask), pool.submit(refund)]
            return [future.result() for future in futures]

    outcomes = [race(order) for order in orders]
    for order, (ship_a, ship_b, asked, refunded) in zip(orders, outcomes, strict=True):
        assert not (ship_a and ship_b), "shipped twice"
        assert refunded, "a paid, shipped or delivered order is always refundable by its merchant"
        trail = _trail(order)
        assert trail.count("shipped") == ship_a + ship_b and trail.count("refund requested") == asked
        assert trail[-1] == "refunded" and trail.count("refunded") == 1
        if asked:
            assert RefundRequest.objects.get(order=order).status == RefundRequestStatus.APPROVED
            assert trail.index("refund requested") < trail.index("refunded")
            assert "shipped" not in trail  # the request stopped shipping until the refund answered it
    assert set(Order.objects.values_list("status", flat=True)) == {OrderStatus.REFUNDED}
    assert money_check() == []
