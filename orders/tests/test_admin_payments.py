"""The merchant's admin over an order's money: its payments and refunds on the order's page, the
refund page, cancelling unpaid orders through their providers, the payments list, and
reconciliation's findings, each scoped to the merchant's own orders."""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.messages import get_messages
from django.test import Client

from orders.models import Order, OrderStatus, Payment, PaymentMismatch, PaymentStatus, Refund, RefundKind
from orders.payments.providers import GatewayDown
from orders.payments.refunds import order_refund
from sales.models import Sale
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_merchant, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(client):
    merchant = make_merchant(nickname="Mia")
    sale = make_sale(goods=make_goods(owner=merchant, name="Kettle"), stock=10, seckill_price=Decimal("9.90"))
    rival = make_merchant(nickname="Rex")
    rival_sale = make_sale(goods=make_goods(owner=rival, name="Toaster"), stock=10)
    client.force_login(merchant)
    return {"merchant": merchant, "sale": sale, "rival": rival, "rival_sale": rival_sale}


def _change_url(order: Order) -> str:
    return f"/admin/orders/order/{order.pk}/change/"


def _refund_url(order: Order) -> str:
    return f"/admin/orders/order/{order.pk}/refund/"


PAYMENTS_TABLE = 'class="inline-heading">Payments</h2>'
REFUNDS_TABLE = 'class="inline-heading">Refunds</h2>'


def _messages(response) -> list[str]:
    """The messages waiting after `response` (those of earlier requests not shown yet too)."""
    return [str(message) for message in get_messages(response.wsgi_request)]


def _open_payment(order: Order) -> Payment:
    """An attempt to pay `order` at Alipay, the shopper sent to its cashier and not back yet."""
    from orders.payments.services import payment_start

    payment, _checkout = payment_start(
        order=order,
        provider_name="alipay",
        address=make_address(order.user),
        return_url="http://shop.test/return",
        notify_url="http://shop.test/notify",
    )
    return payment


# --- the order's page -------------------------------------------------------------------------


def test_the_orders_page_shows_its_payments_and_refund(client, shop, published, django_capture_on_commit_callbacks):
    order = pay(buy(sale=shop["sale"], user=make_user()))
    payment = order.payments.get()
    page = client.get(_change_url(order)).content.decode()
    assert PAYMENTS_TABLE in page and REFUNDS_TABLE not in page  # no refund yet: no empty table
    assert payment.trade_no in page and payment.provider_ref in page and "Alipay" in page
    assert '<td class="field-amount_display">¥9.90</td>' in page
    assert f'href="{_refund_url(order)}"' in page and "Refund this order" in page
    assert 'name="_save"' not in page  # still read only

    with django_capture_on_commit_callbacks(execute=True):
        order_refund(order=order, reason="Broken in the box", actor_id=shop["merchant"].pk)
    page = client.get(_change_url(order)).content.decode()
    assert REFUNDS_TABLE in page and "Broken in the box" in page and "By the merchant" in page
    assert "Mia" in page and "Pending" in page  # the provider has not confirmed it yet (recorded, not sent)
    assert "Being refunded" in page  # the payment
    assert "Refund this order" not in page  # refunded already
    assert 'class="sale-status refunded"' in client.get("/admin/orders/order/").content.decode()


def test_an_unpaid_orders_page_has_no_money_tables_and_no_refund(client, shop):
    order = buy(sale=shop["sale"], user=make_user())
    page = client.get(_change_url(order)).content.decode()
    assert PAYMENTS_TABLE not in page and REFUNDS_TABLE not in page and "Refund this order" not in page

    _open_payment(order)
    page = client.get(_change_url(order)).content.decode()
    assert PAYMENTS_TABLE in page and "Waiting for the provider" in page and "Refund this order" not in page


def test_an_unconfirmed_close_is_marked(client, shop):
    order = buy(sale=shop["sale"], user=make_user())
    payment = _open_payment(order)
    Payment.objects.filter(pk=payment.pk).update(
        status=PaymentStatus.CLOSED, closed_at=payment.created_at, close_confirmed=False
    )
    page = client.get(_change_url(order)).content.decode()
    assert "unconfirmed" in page


# --- the refund page --------------------------------------------------------------------------


def test_a_merchant_refunds_a_paid_order_through_the_page(client, shop, published, django_capture_on_commit_callbacks):
    order = pay(buy(sale=shop["sale"], user=make_user()))
    form = client.get(_refund_url(order))
    assert form.status_code == 200
    page = form.content.decode()
    assert '<div class="readonly">¥9.90</div>' in page and 'name="reason"' in page and "csrfmiddlewaretoken" in page
    assert "in full, through Alipay." in page  # the provider's label, from its class

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(_refund_url(order), {"reason": "  Out of stock after all  "})
    assert response.status_code == 302 and response["Location"] == _change_url(order)
    assert any("is refunded" in message for message in _messages(response))

    order.refresh_from_db()
    assert order.status == OrderStatus.REFUNDED
    refund = Refund.objects.get(payment__order=order)
    assert (refund.actor, refund.reason, refund.kind) == (
        shop["merchant"],
        "Out of stock after all",
        RefundKind.MERCHANT,
    )
    assert refund.payment.status == PaymentStatus.REFUNDING
    assert published == [("orders.refund_send", {"refund_id": refund.pk})]  # sent after the commit
    entry = LogEntry.objects.get(object_id=str(order.pk), content_type__model="order")
    assert entry.user == shop["merchant"] and entry.action_flag == CHANGE
    assert "Out of stock after all" in entry.change_message and refund.request_no in entry.change_message

    # A second go finds it refunded already: nothing more is sent.
    response = client.get(_refund_url(order))
    assert response.status_code == 302
    assert _messages(response)[-1] == "Only a paid order can be refunded; this one is refunded."
    assert Refund.objects.count() == 1 and len(published) == 1


@pytest.mark.parametrize("reason", ["", "   "])
def test_a_refund_without_a_reason_is_refused(client, shop, published, django_capture_on_commit_callbacks, reason):
    order = pay(buy(sale=shop["sale"], user=make_user()))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(_refund_url(order), {"reason": reason})
    assert response.status_code == 200  # the form again, saying what is missing
    assert "Say why the order is refunded." in response.content.decode()
    order.refresh_from_db()
    assert order.status == OrderStatus.PAID and order.payments.get().status == PaymentStatus.SUCCEEDED
    assert not Refund.objects.exists() and not LogEntry.objects.exists() and published == []


def test_the_refund_needs_the_pages_csrf_token(shop, published):
    order = pay(buy(sale=shop["sale"], user=make_user()))
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(shop["merchant"])
    assert strict.post(_refund_url(order), {"reason": "Forged"}).status_code == 403
    order.refresh_from_db()
    assert order.status == OrderStatus.PAID and not Refund.objects.exists()


def test_another_merchants_order_is_not_found(client, shop, published):
    theirs = pay(buy(sale=shop["rival_sale"], user=make_user()))
    assert client.get(_refund_url(theirs)).status_code == 404
    assert client.post(_refund_url(theirs), {"reason": "mine now"}).status_code == 404
    assert client.get(_refund_url(Order(pk=10**9))).status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == OrderStatus.PAID and not Refund.objects.exists()

    # Staff outside the Merchants group see no orders at all.
    client.force_login(make_user(is_staff=True))
    assert client.get(_refund_url(theirs)).status_code == 404


def test_the_refund_page_refuses_an_unpaid_order(client, shop, published):
    order = buy(sale=shop["sale"], user=make_user())
    for response in (client.get(_refund_url(order)), client.post(_refund_url(order), {"reason": "why not"})):
        assert response.status_code == 302 and response["Location"] == _change_url(order)
        assert _messages(response)[-1] == "Only a paid order can be refunded; this one is unpaid."
    order.refresh_from_db()
    assert order.status == OrderStatus.UNPAID and not Refund.objects.exists() and published == []


def test_a_superuser_may_refund_any_order(client, shop, published, django_capture_on_commit_callbacks):
    order = pay(buy(sale=shop["rival_sale"], user=make_user()))
    admin_user = make_user(is_staff=True, is_superuser=True)
    client.force_login(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(_refund_url(order), {"reason": "Asked by the shopper"})
    assert Refund.objects.get(payment__order=order).actor == admin_user


# --- cancelling unpaid orders -----------------------------------------------------------------


def _cancel(client, orders, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return client.post(
            "/admin/orders/order/",
            {"action": "cancel_unpaid", "_selected_action": [order.pk for order in orders]},
            follow=True,
        )


def test_the_cancel_action_cancels_unpaid_orders(client, shop, django_capture_on_commit_callbacks):
    sale = shop["sale"]
    unpaid = buy(sale=sale, user=make_user())
    paying = buy(sale=sale, user=make_user())
    payment = _open_payment(paying)  # closed at the provider first, then cancelled
    paid = pay(buy(sale=sale, user=make_user()))
    theirs = buy(sale=shop["rival_sale"], user=make_user())
    response = _cancel(client, [unpaid, paying, paid, theirs], django_capture_on_commit_callbacks)
    page = response.content.decode()
    assert "Cancelled 2 orders." in page and "1 order was not unpaid and was left alone." in page
    statuses = dict(Order.objects.values_list("pk", "status"))
    assert statuses == {unpaid.pk: "cancelled", paying.pk: "cancelled", paid.pk: "paid", theirs.pk: "unpaid"}
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.CLOSED
    assert Sale.objects.get(pk=sale.pk).stock_count == 9  # two units back, the paid one sold


def test_an_order_whose_provider_cannot_be_reached_is_skipped(
    client, shop, monkeypatch, django_capture_on_commit_callbacks
):
    import orders.payments.closing

    class Unreachable:
        def close(self, payment):
            raise GatewayDown("alipay: connection refused")

    unpaid = buy(sale=shop["sale"], user=make_user())
    paying = buy(sale=shop["sale"], user=make_user())
    payment = _open_payment(paying)
    monkeypatch.setattr(orders.payments.closing, "provider", lambda name: Unreachable())
    page = _cancel(client, [unpaid, paying], django_capture_on_commit_callbacks).content.decode()
    assert "Cancelled 1 order." in page
    assert "1 order was not cancelled: its payment could not be stopped at the payment service" in page
    assert "left alone" not in page
    statuses = dict(Order.objects.values_list("pk", "status"))
    assert statuses == {unpaid.pk: "cancelled", paying.pk: "unpaid"}  # it keeps its unit
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.OPEN


# --- payments and mismatches, scoped ----------------------------------------------------------


def test_a_merchant_finds_their_payments_only(client, shop):
    mine = pay(buy(sale=shop["sale"], user=make_user())).payments.get()
    also_mine = _open_payment(buy(sale=shop["sale"], user=make_user()))
    theirs = pay(buy(sale=shop["rival_sale"], user=make_user())).payments.get()
    page = client.get("/admin/orders/payment/").content.decode()
    assert mine.trade_no in page and also_mine.trade_no in page and theirs.trade_no not in page
    found = client.get("/admin/orders/payment/", {"q": mine.trade_no}).content.decode()
    assert mine.trade_no in found and also_mine.trade_no not in found and "1 result" in found
    by_order = client.get("/admin/orders/payment/", {"q": mine.order.order_no}).content.decode()
    assert mine.trade_no in by_order
    assert client.get(f"/admin/orders/payment/{mine.pk}/change/").status_code == 200
    assert client.get(f"/admin/orders/payment/{theirs.pk}/change/").status_code == 302  # "not found", to the index
    assert client.get("/admin/orders/payment/add/").status_code == 403


def test_mismatches_are_scoped_to_the_merchants_payments(client, shop):
    mine = pay(buy(sale=shop["sale"], user=make_user())).payments.get()
    theirs = pay(buy(sale=shop["rival_sale"], user=make_user())).payments.get()
    day = date(2026, 1, 5)
    found = {
        name: PaymentMismatch.objects.create(
            day=day, provider=provider, kind=kind, trade_no=trade_no, detail={"shop": "9.90", "provider": "None"}
        )
        for name, provider, kind, trade_no in [
            ("mine", "alipay", "payment not at the provider", mine.trade_no),
            ("theirs", "alipay", "refund amount differs", theirs.trade_no),
            ("shop", "", "paid order whose unit went back on sale", mine.order.order_no),
        ]
    }
    page = client.get("/admin/orders/paymentmismatch/").content.decode()
    assert mine.trade_no in page and theirs.trade_no not in page and "Payment not at the provider" in page
    assert "Refund amount differs" not in page  # not even among the filter's kinds
    assert "1 payment mismatch" in page
    assert client.get(f"/admin/orders/paymentmismatch/{found['mine'].pk}/change/").status_code == 200
    assert client.get(f"/admin/orders/paymentmismatch/{found['theirs'].pk}/change/").status_code == 302
    assert client.get("/admin/orders/paymentmismatch/", {"provider": "-"}).content.decode().count(mine.trade_no) == 0

    # Resolving another merchant's finding by its id does nothing.
    response = client.post(
        "/admin/orders/paymentmismatch/",
        {"action": "mark_resolved", "_selected_action": [found["mine"].pk, found["theirs"].pk]},
        follow=True,
    )
    assert "Marked 1 mismatch resolved." in response.content.decode()
    resolved = {name: PaymentMismatch.objects.get(pk=row.pk).resolved_at is not None for name, row in found.items()}
    assert resolved == {"mine": True, "theirs": False, "shop": False}
    assert LogEntry.objects.get(content_type__model="paymentmismatch").object_id == str(found["mine"].pk)

    superuser = make_user(is_staff=True, is_superuser=True)
    client.force_login(superuser)
    page = client.get("/admin/orders/paymentmismatch/").content.decode()
    assert mine.trade_no in page and theirs.trade_no in page and mine.order.order_no in page
    only_shop = client.get("/admin/orders/paymentmismatch/", {"provider": "-"}).content.decode()
    assert mine.order.order_no in only_shop and theirs.trade_no not in only_shop


def test_staff_outside_the_merchants_see_no_money(client, shop):
    pay(buy(sale=shop["sale"], user=make_user()))
    client.force_login(make_user(is_staff=True))
    assert client.get("/admin/orders/payment/").status_code == 403
    assert client.get("/admin/orders/paymentmismatch/").status_code == 403
