"""A web worker killed between the provider's success and the shop's commit: nothing half
written, and the money found again (Alipay's resend, or the query sweep)."""

import os
import signal
import time

import psutil
import psycopg2
import pytest

from conftest import _test_database_url
from goods.tests.factories import make_sale
from orders.models import Order, OrderStatus, PaymentNotice
from orders.payments.providers import TradeState
from orders.payments.reconcile import money_check
from orders.payments.services import payment_start, payment_sync
from orders.tests.factories import buy
from orders.tests.providers import alipay_buyer_pays, alipay_cashier_open
from tools.net import wait_until
from users.tests.factories import make_address, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting_client_port(cursor) -> int | None:
    """The client port of a backend waiting for a row lock (the notify's capture)."""
    cursor.execute(
        "SELECT client_port FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
    )
    row = cursor.fetchone()
    return row[0] if row else None


def _process_on(port: int) -> int:
    for connection in psutil.net_connections(kind="tcp"):
        if connection.laddr and connection.laddr.port == port and connection.pid:
            return connection.pid
    raise AssertionError(f"no process holds local port {port}")


def test_a_worker_killed_mid_capture_leaves_nothing_and_the_payment_is_found_again(gunicorn_server):
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    payment, checkout = payment_start(
        order=order,
        provider_name="alipay",
        address=make_address(me),
        return_url=f"{gunicorn_server}/orders/{order.order_no}/paying",
        notify_url=f"{gunicorn_server}/payments/alipay/notify",  # straight to the web workers
    )
    alipay_cashier_open(checkout.redirect_url)
    url = _test_database_url().replace("postgres://", "postgresql://", 1)
    lock, watcher = psycopg2.connect(url), psycopg2.connect(url)
    # Its own connection, autocommit: pg_stat_activity stays as it was within one transaction.
    watcher.autocommit = True
    try:
        held = lock.cursor()
        # The order's row, as another writer holds it: the notify's capture waits on it, after
        # its notice row is written and before anything commits.
        held.execute("SELECT id FROM orders_order WHERE id = %s FOR UPDATE", [order.pk])
        alipay_buyer_pays(payment.trade_no)
        watch = watcher.cursor()
        assert wait_until(lambda: _waiting_client_port(watch), 15), "the notify never reached the capture"
        worker = _process_on(_waiting_client_port(watch))
        os.kill(worker, signal.SIGKILL)
        assert wait_until(lambda: not psutil.pid_exists(worker) or psutil.Process(worker).status() == "zombie", 10)
        time.sleep(0.5)  # PostgreSQL notices the dead client and rolls its transaction back
    finally:
        lock.rollback()
        lock.close()
        watcher.close()
    assert Order.objects.get(pk=order.pk).status == OrderStatus.UNPAID
    # Alipay was answered with a reset, not "success": it sends again (2.4 s on the stand-in's
    # schedule) to a live worker, which pays the order.
    assert wait_until(lambda: Order.objects.get(pk=order.pk).status == OrderStatus.PAID, 30)
    assert PaymentNotice.objects.filter(payment=payment).count() == 1
    assert payment_sync(payment=payment) == TradeState.PAID  # the sweep finds it paid already
    assert money_check() == []
