"""Concurrency proofs: real HTTP requests at gunicorn (two worker processes), real Redis and
PostgreSQL, and a real Celery worker process writing the orders."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from lab.invariants import sale_check
from orders.models import Order, SeckillOrder
from sales import sale_state
from sales.models import Sale
from sales.sale_state import keys
from seckill_site.redis import client
from testutils.factories.sales import make_sale
from testutils.factories.users import make_users
from testutils.shoppers import path_for, reserve_directly, shopper

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def wait_for_drain(sale_id: int, timeout: float = 60.0) -> float:
    """Seconds until no reservation of the sale is left (the queue has drained)."""
    started = time.monotonic()
    while client().hlen(keys.reservations(sale_id)):
        if time.monotonic() - started > timeout:
            raise AssertionError(f"reservations still pending after {timeout}s")
        time.sleep(0.05)
    return time.monotonic() - started


def test_burst_sells_exactly_the_stock(gunicorn_server, celery_worker):
    stock, buyers = 50, 300
    sale = make_sale(stock=stock)
    shoppers = [shopper(user) for user in make_users(buyers)]
    paths = {s.user_id: path_for(s.user_id, sale.pk) for s in shoppers}

    def buy(s):
        response = s.post(f"{gunicorn_server}/seckill/{paths[s.user_id]}/doSeckill", {"goodsId": sale.pk})
        return s.user_id, response.status_code, response.json()

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=100) as pool:
        answers = list(pool.map(buy, shoppers))
    burst_seconds = time.monotonic() - started
    drain_seconds = wait_for_drain(sale.pk)

    assert {status for _, status, _ in answers} == {200}, answers
    queued = {user_id for user_id, _, body in answers if body["code"] == 0}
    sold_out = [user_id for user_id, _, body in answers if body["msg"] == "sold out"]
    assert len(queued) == stock
    assert len(sold_out) == buyers - stock

    orders = Order.objects.filter(sale=sale)
    assert set(orders.values_list("user_id", flat=True)) == queued  # every queued shopper got an order
    check = sale_check(sale_id=sale.pk, units=stock, queued=queued)  # the lab's invariants
    assert check.problems() == [], check
    assert (check.orders, check.db_stock, check.redis_stock, check.told_failed) == (stock, 0, 0, 0)
    print(f"\nburst: {buyers} requests in {burst_seconds:.2f}s, {stock} orders, drained {drain_seconds:.2f}s later")


def test_one_shopper_firing_twenty_requests_gets_one_order(gunicorn_server, celery_worker):
    sale = make_sale(stock=10)
    [user] = make_users(1)
    s = shopper(user)
    path = path_for(user.pk, sale.pk)

    def buy(_):
        return s.post(f"{gunicorn_server}/seckill/{path}/doSeckill", {"goodsId": sale.pk}).json()

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(buy, range(20)))
    wait_for_drain(sale.pk)

    assert sum(answer["code"] == 0 for answer in answers) == 1
    assert SeckillOrder.objects.filter(user=user, sale=sale).count() == 1
    assert Sale.objects.get(pk=sale.pk).stock_count == 9
    assert int(client().get(keys.stock(sale.pk))) == 9


def test_same_user_racing_the_lua_gate_with_one_path_gets_one_unit():
    """Below HTTP: twenty concurrent reserve scripts for one user with their one path, each a
    request of its own. The path is taken inside the script, so exactly one gets through."""
    sale = make_sale(stock=10)
    [user] = make_users(1)
    path = path_for(user.pk, sale.pk)

    def reserve(n):
        reserved = sale_state.reserve(
            sale_id=sale.pk, user_id=user.pk, path=path, request_id=f"req-{n}", trace="", flush_mark_ms=5000
        )
        return reserved.left if reserved.refusal is None else int(reserved.refusal)

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(reserve, range(20)))
    # The first five through the rate limit race for the path: one takes it, four find it
    # gone; the other fifteen are over the limit and never reach the path.
    assert results.count(9) == 1 and results.count(-4) == 4 and results.count(-7) == 15, results
    assert int(client().get(keys.stock(sale.pk))) == 9
    client().delete(keys.gate_rate(sale.pk, user.pk))  # the rate limit's window passed
    assert reserve_directly(user.pk, sale.pk)[0] == -1  # a new path: already bought


def test_the_same_flush_message_twice_creates_one_order(celery_worker):
    from seckill.tasks import order_flush

    sale = make_sale(stock=5)
    [user] = make_users(1)
    reserved, _ = reserve_directly(user.pk, sale.pk, request_id="req-dup")
    assert reserved == 4
    for _ in range(2):  # one task id: a redelivered message
        order_flush.apply_async(kwargs={"sale_id": sale.pk}, task_id="flush-dup")
    wait_for_drain(sale.pk)
    time.sleep(1)  # let the second message finish too

    assert Order.objects.filter(sale=sale).count() == 1
    assert Sale.objects.get(pk=sale.pk).stock_count == 4
    order = Order.objects.get(sale=sale)
    assert int(client().get(keys.result(sale.pk, user.pk))) == order.pk


def test_a_message_that_fails_for_good_is_dead_lettered_not_dropped(celery_worker, settings):
    """On RabbitMQ a task that fails (here: a message whose arguments the task does not take)
    is rejected and lands in the queue's dead-letter queue for an operator to read."""
    from celery_app import app
    from seckill_site.broker import dead_letter_queue, is_amqp

    if not is_amqp(settings.CELERY_BROKER_URL):
        pytest.skip("dead-lettering is RabbitMQ's (this run's broker is Redis)")
    dead = dead_letter_queue(settings.CELERY_TASK_DEFAULT_QUEUE)
    with app.connection_for_write() as connection:
        dead(connection.default_channel).purge()
    # By name: apply_async would check the arguments here; the worker's task raises TypeError.
    app.send_task("seckill.order_flush", kwargs={"sale": "not a sale id"}, task_id="req-poison")
    deadline = time.monotonic() + 30
    while True:
        with app.connection_for_write() as connection:
            message = dead(connection.default_channel).get(no_ack=True)
        if message is not None:
            break
        assert time.monotonic() < deadline, "the failed message never reached the dead-letter queue"
        time.sleep(0.2)
    assert message.headers["id"] == "req-poison"
