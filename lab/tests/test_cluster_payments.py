"""The cluster rows' payers (lab/cluster/payments.py), against one live shop instead of the
cluster: a web server (gunicorn) and the session's Celery worker on the test database, and an
Alipay stand-in of their own started as the topology starts it. The web server reaches
PostgreSQL, and the stand-in reaches the shop's notify address, each through a fault proxy,
so a test can take either away as a failover would.

The payments check alone needs only the database."""

import time

import pytest
from django.conf import settings

from lab.cluster.payments import AlipayStandIn, Payers, Paying, PaymentFigures, notifies_read, payments_check
from lab.faultproxy import FaultProxy, database_proxy, database_url
from lab.shopper import Shopper, press, session_create
from orders.models import Order, OrderStatus, Payment, PaymentNotice, PaymentStatus
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, make_users
from testutils.processes import gunicorn_running
from testutils.shoppers import path_for
from tools.net import free_port, wait_until
from tools.processes import Processes

# --- the check, on the database alone ----------------------------------------------------------


def _acknowledged(order: Order) -> Paying:
    payment = order.payments.get()
    return Paying(Shopper(order.user_id), 0.0, order_no=order.order_no, trade_no=payment.trade_no, notified_at=1.0)


@pytest.mark.django_db
def test_an_acknowledged_payment_kept_is_found_and_one_deleted_is_lost():
    sale = make_sale(stock=3)
    kept, gone = (pay(buy(sale=sale, user=make_user())) for _ in range(2))
    acknowledged = [_acknowledged(kept), _acknowledged(gone)]
    orders = [kept.pk, gone.pk]
    assert payments_check(acknowledged, orders=orders).ok

    Payment.objects.filter(order=gone).delete()
    check = payments_check(acknowledged, orders=orders)
    assert check.lost == [f"{gone.order_no}/{acknowledged[1].trade_no}: no such payment"]
    assert [problem.split(" (")[0] for problem in check.money] == ["paid order without exactly one kept payment"]


def test_the_stand_ins_record_gives_the_acknowledgement_and_the_retries():
    paying = Paying(Shopper(1), 0.0, trade_no="T1")
    other = Paying(Shopper(2), 0.0, trade_no="T2")

    def delivery(at: str, status: int | None, delivered: bool = False) -> dict:
        return {"at": at, "scheduled": True, "status": status, "answer": "", "delivered": delivered}

    def trade(trade_no: str, *deliveries: dict, refund: dict | None = None) -> dict:
        notifies = [{"params": {"trade_status": "TRADE_SUCCESS"}, "deliveries": list(deliveries)}]
        if refund is not None:
            notifies.append({"params": {"trade_status": "TRADE_CLOSED", "refund_fee": "1.00"}, "deliveries": [refund]})
        return {"out_trade_no": trade_no, "notifications": notifies}

    first, second, third = "2026-01-01 08:00:00", "2026-01-01 08:00:02", "2026-01-01 08:00:09"
    trades = [
        trade("T1", delivery(first, None), delivery(second, 503), delivery(third, 200, True),
              refund=delivery("2026-01-01 09:00:00", 200, True)),
        trade("T2", delivery(second, 503)),
        trade("not ours", delivery(first, None)),
    ]  # fmt: skip
    figures = PaymentFigures()
    notifies_read(trades, [paying, other], figures)
    # 2026-01-01 08:00:09 in Beijing is 00:00:09 UTC, on the monotonic clock of this process.
    assert paying.acknowledged_at == pytest.approx(1767225609 - (time.time() - time.monotonic()), abs=1)
    assert other.acknowledged_at is None
    assert figures.notifies_retried == 1
    assert figures.notify_failures == {"no answer": 1, "503": 2}


# --- the payers, against a live shop ----------------------------------------------------------------


class Shop:
    def __init__(self, url: str, standin: AlipayStandIn, database: FaultProxy, notify: FaultProxy) -> None:
        self.url, self.standin, self.database, self.notify = url, standin, database, notify


@pytest.fixture(scope="module")
def live_shop(django_db_setup, celery_worker, tmp_path_factory):
    """The web server on the test database through one proxy, the Alipay stand-in sending its
    notifies through another (PAYMENT_PUBLIC_URL), and the session's worker writing orders."""
    state = tmp_path_factory.mktemp("alipay")
    processes = Processes(state / "logs")
    standin = AlipayStandIn("127.0.0.1", state, port=free_port(), host=None)
    database, notify = database_proxy(settings.DATABASES["default"]).start(), FaultProxy(0).start()
    try:
        standin.start(processes)
        env = standin.node_env(f"http://127.0.0.1:{notify.port}")
        with gunicorn_running(DATABASE_URL=database_url(settings.DATABASES["default"], database), **env) as url:
            notify.upstream = ("127.0.0.1", int(url.rsplit(":", 1)[1]))
            yield Shop(url, standin, database, notify)
    finally:
        processes.halt_all(timeout=10)
        database.stop()
        notify.stop()


@pytest.fixture
def shop(live_shop):
    yield live_shop
    live_shop.database.set_mode("pass")
    live_shop.notify.set_mode("pass")


def _buy_all(shop: Shop, payers: Payers, sale_id: int, count: int) -> None:
    """`count` new shoppers each press "buy" once; the payers follow those told "queued"."""
    for user in make_users(count):
        shopper = Shopper(user.pk, session_create(user))
        payers.answered(shopper, press(shop.url, shopper, sale_id, path_for(user.pk, sale_id)))


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
@pytest.mark.processes
def test_payers_pay_each_order_and_the_shop_acknowledges_every_payment(shop):
    sale = make_sale(stock=3)
    payers = Payers(shop.url, sale.pk, shop.standin.url, threads=2).start()
    _buy_all(shop, payers, sale.pk, 4)  # one sold out: not followed
    figures = payers.finish(timeout=60)

    assert (figures.offered, figures.ordered, figures.started, figures.paid) == (3, 3, 3, 3), figures.note()
    assert (figures.acknowledged, figures.unacknowledged, figures.busy) == (3, 0, 0), figures.note()
    assert all(p.notified_at is not None and p.seen_paid_at is not None for p in payers.acknowledged())
    assert set(Order.objects.filter(sale=sale).values_list("status", flat=True)) == {OrderStatus.PAID}
    check = payers.check()
    assert check.ok and check.acknowledged == 3, check

    # The notify's transaction undone after the shop acknowledged it, as a failover to a standby
    # that never had it would leave it: the money adds up, and only the payers' record knows.
    lost = payers.acknowledged()[0]
    PaymentNotice.objects.filter(payment__trade_no=lost.trade_no).delete()
    Payment.objects.filter(trade_no=lost.trade_no).update(status=PaymentStatus.OPEN, succeeded_at=None)
    Order.objects.filter(order_no=lost.order_no).update(status=OrderStatus.UNPAID, paid_at=None)
    check = payers.check()
    assert check.lost == [f"{lost.order_no}/{lost.trade_no}: payment open, order {lost.order_no} unpaid"]
    assert not check.money and not check.ok


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
@pytest.mark.processes
def test_payers_wait_out_the_database_and_alipay_retries_its_notify(shop):
    """Alipay's notify finds no shop, then a shop without its database (503); the shopper's
    order page answers 503 meanwhile. Once both are back, Alipay's next try is acknowledged."""
    sale = make_sale(stock=2)
    shop.notify.set_mode("cut")
    payers = Payers(shop.url, sale.pk, shop.standin.url, threads=2).start()
    _buy_all(shop, payers, sale.pk, 2)
    paid = lambda: len([p for p in payers.payments.values() if p.paid_at is not None]) == 2  # noqa: E731
    assert wait_until(paid, 30), {p.shopper.user_id: p.step for p in payers.payments.values()}
    shop.database.set_mode("cut")
    shop.notify.set_mode("pass")
    time.sleep(4)  # Alipay's second try (2.4 s after the first, at scale 0.01) meets the 503
    shop.database.set_mode("pass")
    figures = payers.finish(timeout=60)

    assert (figures.paid, figures.acknowledged, figures.unacknowledged) == (2, 2, 0), figures.note()
    assert figures.notifies_retried == 2 and figures.notify_failures["no answer"] >= 2, figures.note()
    assert figures.busy >= 1 and figures.busy_payments >= 1, figures.note()
    check = payers.check()
    assert check.ok and check.acknowledged == 2, check
