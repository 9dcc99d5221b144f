"""A web worker killed between the provider's success and the shop's commit: nothing half
written, and the money found again (Alipay's resend, or the query sweep)."""

import os
import signal
import time

import psutil
import psycopg2
import pytest
from django.db import connection

from orders.models import Order, OrderStatus, PaymentNotice
from orders.payments.providers import TradeState
from orders.payments.reconcile import money_check
from orders.payments.services import payment_start, payment_sync
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import alipay_buyer_pays, alipay_cashier_open
from tools.net import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def _connect():
    """A connection of its own to the test database (a TCP host or a Unix socket directory)."""
    db = connection.settings_dict
    return psycopg2.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"] or None, host=db["HOST"] or None,
        port=db["PORT"] or None,
    )  # fmt: skip


def _someone_waits_for_a_row_lock(cursor) -> bool:
    """A backend waits for a row lock: the notify's capture, held by the test."""
    cursor.execute("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")
    return cursor.fetchone() is not None


def _web_workers(url: str) -> list[psutil.Process]:
    """The server's worker processes: the children of the gunicorn listening on `url`'s port.
    (Which one took the notify is not knowable over a Unix socket to PostgreSQL; all die.)"""
    bind = url.removeprefix("http://")
    masters = [
        process
        for process in psutil.process_iter(["cmdline"])
        if "gunicorn" in " ".join(process.info["cmdline"] or ()) and bind in (process.info["cmdline"] or ())
        and "gunicorn" not in " ".join(process.parent().cmdline() if process.parent() else ())
    ]  # fmt: skip
    return [child for master in masters for child in master.children()]


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
    lock, watcher = _connect(), _connect()
    # Its own connection, autocommit: pg_stat_activity stays as it was within one transaction.
    watcher.autocommit = True
    try:
        held = lock.cursor()
        # The order's row, as another writer holds it: the notify's capture waits on it, after
        # its notice row is written and before anything commits.
        held.execute("SELECT id FROM orders_order WHERE id = %s FOR UPDATE", [order.pk])
        alipay_buyer_pays(payment.trade_no)
        watch = watcher.cursor()
        assert wait_until(lambda: _someone_waits_for_a_row_lock(watch), 15), "the notify never reached the capture"
        workers = _web_workers(gunicorn_server)
        assert workers, "no gunicorn workers found"
        for worker in workers:
            os.kill(worker.pid, signal.SIGKILL)
        assert wait_until(lambda: not any(w.is_running() and w.status() != "zombie" for w in workers), 10)
        time.sleep(0.5)  # PostgreSQL notices the dead clients and rolls their transactions back
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
