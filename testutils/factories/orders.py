"""Orders for tests: rows, or bought and paid through the real pipeline's pieces."""

import uuid
from datetime import timedelta

from django.utils import timezone

from orders.models import Order, SeckillOrder, goods_name_snapshot
from orders.services import order_number_next
from sales.models import Sale
from seckill_site.translated import texts_of
from testutils.factories.users import make_user
from users.models import User


def make_order(*, sale: Sale, user: User | None = None, **fields) -> Order:
    user = user or make_user()
    order = Order.objects.create(
        order_no=order_number_next(),
        user=user,
        goods=sale.goods,
        sale=sale,
        **goods_name_snapshot(texts_of(sale.goods, "name")),
        price=sale.seckill_price,
        pay_deadline=timezone.now() + timedelta(minutes=15),
        **fields,
    )
    SeckillOrder.objects.create(user=user, sale=sale, order=order, request_id=uuid.uuid4().hex)
    return order


def buy(*, sale: Sale, user: User) -> Order:
    """Buy through the real pipeline pieces, minus the broker: the reserve script, then the
    order writer's flush, so Redis and the database agree as after a real purchase. The sale
    must hold no other reservation (the flush would write it too)."""
    from sales import sale_state
    from seckill.services.writer import sale_flush
    from testutils.shoppers import reserve_directly

    assert not sale_state.reservations_count([sale.pk])[sale.pk], "the flush would write other reservations too"
    left, request_id = reserve_directly(user.pk, sale.pk)
    assert left >= 0, f"reserve refused: {left}"
    sale_flush(sale_id=sale.pk)
    return Order.objects.get(seckill__request_id=request_id)


def pay(order: Order, address=None) -> Order:
    """Pay as a shopper does: to Alipay's cashier from the order page, shipping to `address` or
    their default one (made when they have none), then the provider's word that it was paid."""
    from orders.payments.providers import Trade, TradeState
    from orders.payments.services import payment_captured, payment_start
    from testutils.factories.users import make_address
    from users.addresses.selectors import address_default

    address = address or address_default(user=order.user) or make_address(order.user)
    payment, _checkout = payment_start(
        order=order,
        provider_name="alipay",
        address=address,
        return_url="http://shop.test/return",
        notify_url="http://shop.test/notify",
    )
    payment_captured(payment=payment, trade=Trade(TradeState.PAID, provider_ref=f"2026{payment.trade_no}"))
    order.refresh_from_db()
    return order


def ship(order: Order) -> Order:
    """Ship a paid order as the merchant's desk does (SF, a number of its own)."""
    from orders.fulfilment.services import order_ship

    order_ship(order_id=order.pk, carrier="sf", tracking_no=f"SF{order.pk}", actor_id=None)
    order.refresh_from_db()
    return order


def shipped(sale: Sale | None = None, user: User | None = None) -> Order:
    """An order bought, paid and shipped: one a return may be asked for."""
    from testutils.factories.sales import make_sale

    return ship(pay(buy(sale=sale or make_sale(), user=user or make_user())))


def return_approved(order: Order):
    """The shopper asks to send `order` back and the merchant approves: its ReturnRequest."""
    from orders.fulfilment.returns import return_request_approve, return_request_open

    request = return_request_open(order_id=order.pk, reason="damaged", actor_id=order.user_id)
    return_request_approve(order_id=order.pk, request_id=request.pk, return_address="Mia, 1 Dock Rd", actor_id=None)
    return request
