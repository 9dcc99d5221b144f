"""The rules of the shop's money, against the dummy provider (orders.payments.providers.dummy):
an order is paid once, a declined attempt leaves it payable, the amount must be the order's,
refunds are of paid orders and once, and an expired or cancelled order takes no money. Real
PostgreSQL and Redis; only the provider is in-process."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core import signing
from django.test import Client, RequestFactory
from django.utils import timezone

from orders.models import (
    Order,
    OrderEventKind,
    OrderStatus,
    Payment,
    PaymentFailure,
    PaymentNotice,
    PaymentStatus,
    Refund,
    RefundKind,
    RefundStatus,
)
from orders.payments import closing
from orders.payments.http import notify_path
from orders.payments.providers import (
    GatewayDown,
    Notice,
    NoticeRefused,
    ProviderRefused,
    TradeState,
    provider,
    providers_enabled,
)
from orders.payments.providers.dummy import SALT as DUMMY_SALT
from orders.payments.providers.dummy import TOKEN_DECLINED, TOKEN_PAYS, TOKEN_PENDING
from orders.payments.refunds import order_refund, refund_send
from orders.payments.services import (
    PaymentUnavailable,
    notice_receive,
    payment_card_confirm,
    payment_start,
    payment_sync,
)
from orders.services import OrderStateError
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user

pytestmark = pytest.mark.django_db


def an_order(**sale_fields) -> Order:
    return buy(sale=make_sale(**sale_fields), user=make_user())


def start(order: Order) -> Payment:
    payment, _checkout = payment_start(
        order=order,
        provider_name="dummy",
        address=make_address(order.user),
        return_url="http://shop.test/return",
        notify_url="http://shop.test/notify",
    )
    return payment


def post_notice(body: bytes):
    return Client().post(notify_path("dummy"), body, content_type="text/plain")


def notice_of(dummy, payment: Payment) -> Notice:
    """The dummy's notification about `payment`, as its Provider.notice reads it."""
    request = RequestFactory().post("/", dummy.notification(payment.trade_no), content_type="text/plain")
    return provider("dummy").notice(request)


def state(order: Order, payment: Payment) -> tuple[str, str]:
    order.refresh_from_db()
    payment.refresh_from_db()
    return order.status, payment.status


def paid_events(order: Order) -> int:
    return order.events.filter(kind=OrderEventKind.PAID).count()


def test_the_dummy_is_registered_only_where_a_test_asks(dummy, settings):
    assert "dummy" in providers_enabled() and provider("dummy").name == "dummy"
    settings.PAYMENT_PROVIDERS = {name: path for name, path in settings.PAYMENT_PROVIDERS.items() if name != "dummy"}
    assert "dummy" not in providers_enabled()
    assert Client().post("/payments/dummy/notify", b"x", content_type="text/plain").status_code == 404


class TestPaidOnce:
    def test_a_paid_notification_pays_the_order_and_a_repeat_changes_nothing(self, dummy):
        order = an_order()
        payment = start(order)
        dummy.pay(payment.trade_no)
        body = dummy.notification(payment.trade_no)
        answer = post_notice(body)
        assert (answer.status_code, answer.content) == (200, b"ok")
        assert state(order, payment) == (OrderStatus.PAID, PaymentStatus.SUCCEEDED)
        paid_at = order.paid_at
        # The same notification again, then a late one of the same trade (a new event).
        assert post_notice(body).status_code == 200
        assert post_notice(dummy.notification(payment.trade_no)).status_code == 200
        assert state(order, payment) == (OrderStatus.PAID, PaymentStatus.SUCCEEDED)
        order.refresh_from_db()
        assert order.paid_at == paid_at and paid_events(order) == 1
        assert list(PaymentNotice.objects.filter(payment=payment).order_by("pk").values_list("outcome", flat=True)) == [
            "paid",
            "already",
        ]
        assert not Refund.objects.filter(payment__order=order).exists()

    def test_the_query_sweep_finds_a_paid_trade_once(self, dummy):
        order = an_order()
        payment = start(order)
        assert payment_sync(payment=payment) == TradeState.OPEN  # the buyer has not paid yet
        assert state(order, payment) == (OrderStatus.UNPAID, PaymentStatus.OPEN)
        dummy.pay(payment.trade_no)
        assert payment_sync(payment=payment) == TradeState.PAID
        assert payment_sync(payment=payment) == TradeState.PAID
        assert notice_receive(provider_name="dummy", notice=notice_of(dummy, payment)) == ("already")
        assert state(order, payment) == (OrderStatus.PAID, PaymentStatus.SUCCEEDED)
        assert paid_events(order) == 1

    def test_a_second_attempt_paid_too_is_refunded_not_kept(self, dummy):
        order = an_order()
        first, second = start(order), start(order)
        for payment in (first, second):
            dummy.pay(payment.trade_no)
            assert post_notice(dummy.notification(payment.trade_no)).status_code == 200
        assert state(order, first) == (OrderStatus.PAID, PaymentStatus.SUCCEEDED)
        assert state(order, second) == (OrderStatus.PAID, PaymentStatus.REFUNDING)
        refund = Refund.objects.get(payment=second)
        assert (refund.kind, refund.amount) == (RefundKind.DUPLICATE, second.amount)
        assert refund_send(refund_id=refund.pk)
        assert (dummy.refunds(first.trade_no), dummy.refunds(second.trade_no)) == (0, 1)
        assert state(order, second) == (OrderStatus.PAID, PaymentStatus.REFUNDED)


class TestDeclined:
    def test_a_declined_card_leaves_the_order_payable_by_a_new_attempt(self, dummy):
        order = an_order()
        payment = start(order)
        with pytest.raises(PaymentUnavailable, match="declined"):
            payment_card_confirm(payment=payment, token=TOKEN_DECLINED)
        assert state(order, payment) == (OrderStatus.UNPAID, PaymentStatus.OPEN)
        assert Payment.objects.get(pk=payment.pk).failure == PaymentFailure.DECLINED
        # The failed attempt is never tried again: the next card goes on a new one behind it.
        paid, secret = payment_card_confirm(payment=payment, token=TOKEN_PAYS)
        assert (paid.status, secret) == (PaymentStatus.SUCCEEDED, "") and paid.pk != payment.pk
        assert state(order, paid) == (OrderStatus.PAID, PaymentStatus.SUCCEEDED)
        assert state(order, payment) == (OrderStatus.PAID, PaymentStatus.OPEN)  # closed by the sweep

    def test_a_card_waiting_for_the_shopper_leaves_the_order_unpaid_until_paid(self, dummy):
        order = an_order()
        payment = start(order)
        waiting, secret = payment_card_confirm(payment=payment, token=TOKEN_PENDING)
        assert waiting.status == PaymentStatus.OPEN and secret
        assert payment_sync(payment=payment) == TradeState.OPEN
        assert state(order, payment) == (OrderStatus.UNPAID, PaymentStatus.OPEN)
        dummy.pay(payment.trade_no)
        assert post_notice(dummy.notification(payment.trade_no)).status_code == 200
        assert state(order, payment) == (OrderStatus.PAID, PaymentStatus.SUCCEEDED)

    def test_a_notification_that_the_trade_is_not_paid_changes_nothing(self, dummy):
        order = an_order()
        payment = start(order)
        assert post_notice(dummy.notification(payment.trade_no, kind="declined")).status_code == 200
        assert PaymentNotice.objects.get(payment=payment).outcome == "noted"
        assert state(order, payment) == (OrderStatus.UNPAID, PaymentStatus.OPEN)
        # A new attempt of the same order can still pay it.
        again = start(order)
        dummy.pay(again.trade_no)
        assert post_notice(dummy.notification(again.trade_no)).status_code == 200
        assert state(order, again) == (OrderStatus.PAID, PaymentStatus.SUCCEEDED)

    def test_an_unreachable_provider_opens_nothing_payable(self, dummy):
        order = an_order()
        dummy.down = True
        with pytest.raises(PaymentUnavailable, match="nothing was charged"):
            start(order)
        assert list(order.payments.values_list("status", flat=True)) == [PaymentStatus.CLOSED]
        dummy.down = False
        payment = start(order)
        assert state(order, payment) == (OrderStatus.UNPAID, PaymentStatus.OPEN)


class TestAmount:
    def test_an_attempt_asks_for_the_orders_price(self, dummy):
        order = an_order(seckill_price=Decimal("12.34"))
        payment = start(order)
        assert payment.amount == order.price * order.quantity == Decimal("12.34")
        assert dummy.trade(payment.trade_no).amount == payment.amount

    @pytest.mark.parametrize("said", [{"amount": Decimal("0.01")}, {"currency": "USD"}])
    def test_a_notification_of_another_amount_is_refused(self, dummy, said):
        order = an_order()
        payment = start(order)
        dummy.pay(payment.trade_no)
        answer = post_notice(dummy.notification(payment.trade_no, **said))
        assert answer.status_code == 400
        assert answer.content.decode() == f"refused: {next(iter(said))}"
        assert state(order, payment) == (OrderStatus.UNPAID, PaymentStatus.OPEN)
        assert not PaymentNotice.objects.exists()

    def test_a_trade_paid_at_another_amount_is_not_taken_by_the_sweep(self, dummy):
        order = an_order()
        payment = start(order)
        dummy.pay(payment.trade_no, amount=payment.amount - Decimal("1.00"))
        assert payment_sync(payment=payment) is None
        with pytest.raises(NoticeRefused, match="amount"):
            notice_receive(provider_name="dummy", notice=notice_of(dummy, payment))
        assert state(order, payment) == (OrderStatus.UNPAID, PaymentStatus.OPEN)

    def test_a_forged_notification_is_refused(self, dummy):
        order = an_order()
        payment = start(order)
        dummy.pay(payment.trade_no)
        said = signing.loads(dummy.notification(payment.trade_no).decode(), salt=DUMMY_SALT)
        forged = signing.dumps(said, salt=DUMMY_SALT, key="not the shop's key").encode()
        answer = post_notice(forged)
        assert (answer.status_code, answer.content) == (400, b"refused: signature")
        assert state(order, payment) == (OrderStatus.UNPAID, PaymentStatus.OPEN)


class TestRefunds:
    def test_an_unpaid_order_is_not_refunded(self, dummy):
        order = an_order()
        start(order)
        with pytest.raises(OrderStateError, match="Only a paid order"):
            order_refund(order=order, reason="asked", actor_id=None)
        assert not Refund.objects.exists()

    def test_a_paid_order_is_refunded_once(self, dummy):
        order = an_order()
        payment = start(order)
        payment_card_confirm(payment=payment, token=TOKEN_PAYS)
        refund = order_refund(order=order, reason="asked", actor_id=None)
        assert (refund.amount, refund.kind) == (payment.amount, RefundKind.MERCHANT)
        assert state(order, payment) == (OrderStatus.REFUNDED, PaymentStatus.REFUNDING)
        assert refund_send(refund_id=refund.pk)
        assert state(order, payment) == (OrderStatus.REFUNDED, PaymentStatus.REFUNDED)
        # Again: refused by the shop, and a resend of the same refund refunds nothing more.
        with pytest.raises(OrderStateError, match="Only a paid order"):
            order_refund(order=order, reason="again", actor_id=None)
        Refund.objects.filter(pk=refund.pk).update(status=RefundStatus.PENDING)  # as if its answer was lost
        assert refund_send(refund_id=refund.pk)
        assert dummy.refunds(payment.trade_no) == 1
        assert Refund.objects.filter(payment__order=order).count() == 1
        # The provider's notification of the refund, twice, changes nothing more.
        for _ in range(2):
            assert post_notice(dummy.notification(payment.trade_no, kind="refunded")).status_code == 200
        assert state(order, payment) == (OrderStatus.REFUNDED, PaymentStatus.REFUNDED)

    def test_a_refund_the_provider_cannot_reach_stays_pending(self, dummy):
        order = an_order()
        payment = start(order)
        payment_card_confirm(payment=payment, token=TOKEN_PAYS)
        refund = order_refund(order=order, reason="asked", actor_id=None)
        dummy.down = True
        with pytest.raises(GatewayDown):
            refund_send(refund_id=refund.pk)
        refund.refresh_from_db()
        assert refund.status == RefundStatus.PENDING and refund.last_error
        dummy.down = False
        assert refund_send(refund_id=refund.pk)
        assert dummy.refunds(payment.trade_no) == 1


class TestClosedOrders:
    def test_an_expired_order_cannot_be_paid(self, dummy):
        order = an_order()
        payment = start(order)
        Order.objects.filter(pk=order.pk).update(pay_deadline=timezone.now() - timedelta(seconds=1))
        order.refresh_from_db()
        with pytest.raises(OrderStateError, match="ran out"):
            start(order)
        with pytest.raises(OrderStateError, match="ran out"):
            payment_card_confirm(payment=Payment.objects.get(pk=payment.pk), token=TOKEN_PAYS)
        assert state(order, payment) == (OrderStatus.UNPAID, PaymentStatus.OPEN)
        assert dummy.trade(payment.trade_no).state == TradeState.OPEN  # no money moved

    def test_a_cancelled_order_cannot_be_paid(self, dummy):
        order = an_order()
        payment = start(order)
        closing.order_cancel_by_shopper(order=order)
        assert state(order, payment) == (OrderStatus.CANCELLED, PaymentStatus.CLOSED)
        # Closed at the provider first, so its cashier takes no money any more.
        assert dummy.trade(payment.trade_no).state == TradeState.CLOSED
        with pytest.raises(ProviderRefused, match="closed"):
            dummy.pay(payment.trade_no)
        with pytest.raises(OrderStateError, match="cancelled"):
            start(order)
        with pytest.raises(OrderStateError, match="cancelled"):
            payment_card_confirm(payment=Payment.objects.get(pk=payment.pk), token=TOKEN_PAYS)
        assert state(order, payment) == (OrderStatus.CANCELLED, PaymentStatus.CLOSED)

    def test_money_that_reaches_a_closed_order_is_refunded(self, dummy):
        order = an_order()
        payment = start(order)
        dummy.down = True  # the close cannot reach the provider; the sale's hold is over
        assert closing.order_close(order=order, reason="expired", force=True)
        assert state(order, payment) == (OrderStatus.CANCELLED, PaymentStatus.CLOSED)
        dummy.down = False
        dummy.pay(payment.trade_no)  # the trade was never closed there: the buyer paid it
        assert post_notice(dummy.notification(payment.trade_no)).status_code == 200
        assert state(order, payment) == (OrderStatus.CANCELLED, PaymentStatus.REFUNDING)
        refund = Refund.objects.get(payment=payment)
        assert (refund.kind, refund.amount) == (RefundKind.LATE, payment.amount)
        assert refund_send(refund_id=refund.pk)
        assert state(order, payment) == (OrderStatus.CANCELLED, PaymentStatus.REFUNDED)
        assert dummy.refunds(payment.trade_no) == 1 and paid_events(order) == 0

    def test_a_cancel_after_the_buyer_paid_keeps_the_money(self, dummy):
        order = an_order()
        payment = start(order)
        dummy.pay(payment.trade_no)  # paid, but its notification is still on its way
        # The close finds the trade paid: the order is paid, never cancelled under the money.
        with pytest.raises(OrderStateError, match="already paid"):
            closing.order_cancel_by_shopper(order=order)
        assert state(order, payment) == (OrderStatus.PAID, PaymentStatus.SUCCEEDED)
        assert post_notice(dummy.notification(payment.trade_no)).status_code == 200
        assert state(order, payment) == (OrderStatus.PAID, PaymentStatus.SUCCEEDED)
        assert paid_events(order) == 1
