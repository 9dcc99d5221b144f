"""The gate's layers one at a time, against real Redis and PostgreSQL (single-threaded)."""

import time

import pytest
from kombu.exceptions import OperationalError as BrokerError

from orders.models import Order
from sales import sale_state
from sales.codes import SaleCode
from sales.models import Sale
from sales.sale_state import draw, keys, limits, marks, reservation, stock
from seckill.services import gate as gate_service
from seckill.services import paths, reconcile, writer
from seckill_site.codes import Code
from seckill_site.redis import client
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.shoppers import path_for

pytestmark = pytest.mark.django_db


def redis_state(sale_id: int, user_id: int) -> dict:
    return {
        "stock": client().get(keys.stock(sale_id)),
        "buyers": client().smembers(keys.buyers(sale_id)),
        "reservations": client().hgetall(keys.reservations(sale_id)),
        "result": client().get(keys.result(sale_id, user_id)),
        "flush pending": client().exists(keys.flush(sale_id)),
    }


def attempt(user, sale):
    return gate(user_id=user.pk, sale_id=sale.pk, path=path_for(user.pk, sale.pk)).code


def gate(**kwargs) -> gate_service.Attempt:
    return gate_service.seckill_attempt(**kwargs)


def flush(sale) -> writer.FlushReport:
    return writer.sale_flush(sale_id=sale.pk)


def test_a_publish_failure_leaves_redis_exactly_as_before(monkeypatch):
    from celery_app import app

    sale, user = make_sale(stock=3), make_user()
    path = path_for(user.pk, sale.pk)
    before = redis_state(sale.pk, user.pk)

    def broker_down(*args, **kwargs):
        raise BrokerError("connection refused")

    monkeypatch.setattr(app, "send_task", broker_down)
    result = gate(user_id=user.pk, sale_id=sale.pk, path=path)

    assert result.code is SaleCode.TRY_AGAIN
    assert redis_state(sale.pk, user.pk) == before
    assert before["stock"] == b"3"


def test_queued_then_written_then_result(flushes):
    sale, user = make_sale(stock=2), make_user()
    assert attempt(user, sale) is Code.SUCCESS
    assert client().get(keys.result(sale.pk, user.pk)) == b"0"
    assert flushes == [sale.pk]
    assert flush(sale).created == 1
    order = Order.objects.get(user=user)
    assert order.price == sale.seckill_price and order.status == "unpaid"
    assert int(client().get(keys.result(sale.pk, user.pk))) == order.pk
    assert client().hlen(keys.reservations(sale.pk)) == 0
    assert Sale.objects.get(pk=sale.pk).stock_count == 1
    # Redelivery of the same flush: nothing left to claim, no second order.
    assert flush(sale).batches == 0
    assert Order.objects.count() == 1


def test_already_bought_and_sold_out(flushes):
    sale = make_sale(stock=2)
    first, second, third = make_user(), make_user(), make_user()
    assert attempt(first, sale) is Code.SUCCESS
    assert attempt(first, sale) is SaleCode.ALREADY_BOUGHT
    assert attempt(second, sale) is Code.SUCCESS  # the last unit: this process marks the sale sold out
    assert attempt(third, sale) is SaleCode.SOLD_OUT
    sale_state.sold_out_clear()
    assert attempt(third, sale) is SaleCode.SOLD_OUT  # the Lua script says so too
    assert client().get(keys.stock(sale.pk)) == b"0"


def test_sold_out_mark_answers_without_any_network_call_and_expires(flushes, monkeypatch):
    # A mark of a minute while the path is drawn (a captcha and a Redis call, over a second on a
    # loaded machine); the expiry is checked below with the production length.
    lasts = marks.SOLD_OUT_MARK_SECONDS
    monkeypatch.setattr(marks, "SOLD_OUT_MARK_SECONDS", 60.0)
    sale = make_sale(stock=0)
    user = make_user()
    assert attempt(user, sale) is SaleCode.SOLD_OUT  # the script said so; this process remembers
    path = path_for(user.pk, sale.pk)

    def no_network(*args, **kwargs):
        raise AssertionError("the sold-out mark must answer without Redis")

    with monkeypatch.context() as offline:
        for module in (marks, reservation, draw, limits, stock):
            offline.setattr(module, "client", no_network)
            offline.setattr(module, "script", no_network, raising=False)
        answer = gate_service.seckill_attempt(user_id=user.pk, sale_id=sale.pk, path=path)
    assert answer.code is SaleCode.SOLD_OUT
    assert not client().exists(keys.gate_rate(sale.pk, user.pk))  # not even the rate limit was counted
    # Stock comes back (a cancellation, a warm): the mark lapses within a second, and the
    # path the sold-out answer did not consume still buys.
    monkeypatch.setattr(marks, "SOLD_OUT_MARK_SECONDS", lasts)
    sale_state.sold_out_mark(sale.pk)
    client().set(keys.stock(sale.pk), 1)
    time.sleep(lasts + 0.05)
    assert gate(user_id=user.pk, sale_id=sale.pk, path=path).code is Code.SUCCESS


def test_sold_out_is_answered_before_the_path_and_teaches_the_process(flushes):
    sale = make_sale(stock=0)
    assert gate(user_id=make_user().pk, sale_id=sale.pk, path="made-up").code is SaleCode.SOLD_OUT
    assert sale_state.sold_out_known(sale.pk)


def test_rate_limit_counts_only_requests_that_could_buy(flushes):
    on_sale, sold_out, later = make_sale(stock=1), make_sale(stock=0), make_sale(starts_in=300)
    user, other = make_user(), make_user()
    assert attempt(other, sold_out) is SaleCode.SOLD_OUT
    for _ in range(keys.GATE_RATE_COUNT + 2):  # public answers, however many, count nothing
        assert gate(user_id=user.pk, sale_id=sold_out.pk, path="x").code is SaleCode.SOLD_OUT
        assert gate(user_id=user.pk, sale_id=later.pk, path="x").code is SaleCode.NOT_STARTED
    for sale in (sold_out, later):
        assert not client().exists(keys.gate_rate(sale.pk, user.pk))

    for _ in range(keys.GATE_RATE_COUNT):  # wrong paths: each counted
        assert gate(user_id=user.pk, sale_id=on_sale.pk, path="guess").code is SaleCode.PATH_INVALID
    path = path_for(user.pk, on_sale.pk)
    limited = gate(user_id=user.pk, sale_id=on_sale.pk, path=path)
    assert limited.code is Code.TOO_MANY_REQUESTS and 0 < limited.retry_after <= keys.GATE_RATE_SECONDS
    assert client().get(keys.stock(on_sale.pk)) == b"1" and flushes == []  # nothing taken, path kept

    client().delete(keys.gate_rate(on_sale.pk, user.pk))  # the window passed
    assert gate(user_id=user.pk, sale_id=on_sale.pk, path=path).code is Code.SUCCESS


def test_a_rate_counter_that_lost_its_ttl_still_lets_the_shopper_in_later(flushes):
    sale, user = make_sale(stock=1), make_user()
    client().set(keys.gate_rate(sale.pk, user.pk), 99)  # no TTL: e.g. an EXPIRE lost in a failover
    limited = gate(user_id=user.pk, sale_id=sale.pk, path="x")
    assert limited.code is Code.TOO_MANY_REQUESTS
    assert 0 < client().ttl(keys.gate_rate(sale.pk, user.pk)) <= keys.GATE_RATE_SECONDS


def test_the_script_checks_the_window_when_this_process_cache_is_stale(flushes):
    """The per-process window is a shortcut; reserve.lua has the last word (a merchant moved the sale)."""
    sale, user = make_sale(stock=3), make_user()
    assert attempt(make_user(), sale) is Code.SUCCESS  # this process now caches the window as open
    later = time.time() + 300
    client().hset(keys.window(sale.pk), mapping={"start": later, "end": later + 60})
    path = path_for(user.pk, sale.pk)
    assert gate(user_id=user.pk, sale_id=sale.pk, path=path).code is SaleCode.NOT_STARTED
    assert client().get(keys.stock(sale.pk)) == b"2"
    client().hset(keys.window(sale.pk), mapping={"start": later - 7200, "end": later - 3600})
    assert gate(user_id=user.pk, sale_id=sale.pk, path=path).code is SaleCode.ENDED
    # Public answers leave the path: once the sale is on again, the same path buys, once.
    client().hset(keys.window(sale.pk), mapping={"start": later - 7200, "end": later})
    assert gate(user_id=user.pk, sale_id=sale.pk, path=path).code is Code.SUCCESS
    assert gate(user_id=user.pk, sale_id=sale.pk, path=path).code is SaleCode.PATH_INVALID


def test_an_unknown_sale_is_an_invalid_path_and_queues_no_rebuild(published):
    assert gate(user_id=make_user().pk, sale_id=10**15, path="0" * 32).code is SaleCode.PATH_INVALID
    assert published == []


def test_not_started_and_ended(flushes):
    user = make_user()
    assert attempt(user, make_sale(starts_in=300)) is SaleCode.NOT_STARTED
    assert attempt(user, make_sale(starts_in=-7200, lasts=3600)) is SaleCode.ENDED


def test_redis_lost_the_sale_keys_answers_busy_and_rebuilds(published):
    sale, user = make_sale(stock=5), make_user()
    client().delete(keys.stock(sale.pk), keys.window(sale.pk))
    sale_state.process_marks_clear()
    path = path_for(user.pk, sale.pk)
    assert gate(user_id=user.pk, sale_id=sale.pk, path=path).code is Code.SERVER_BUSY
    assert attempt(make_user(), sale) is Code.SERVER_BUSY
    assert published == [("seckill.sale_rebuild", {"sale_id": sale.pk})]  # one rebuild for many refusals (lock)
    reconcile.stock_warm(**published[0][1])
    assert gate(user_id=user.pk, sale_id=sale.pk, path=path).code is Code.SUCCESS  # "busy" left the path


def test_database_sold_out_tells_the_user_and_frees_the_buyer(flushes):
    sale, user = make_sale(stock=1), make_user()
    Sale.objects.filter(pk=sale.pk).update(stock_count=0)  # Redis now runs ahead of the database
    assert attempt(user, sale) is Code.SUCCESS
    assert flush(sale).one_by_one == {"sold out": 1}
    assert client().get(keys.result(sale.pk, user.pk)) == b"-1"
    assert not client().sismember(keys.buyers(sale.pk), user.pk)
    assert client().hlen(keys.reservations(sale.pk)) == 0
    assert not Order.objects.exists()


def test_duplicate_after_redis_lost_the_buyer_set_returns_the_unit(flushes):
    sale, user = make_sale(stock=5), make_user()
    assert attempt(user, sale) is Code.SUCCESS
    flush(sale)
    client().delete(keys.buyers(sale.pk))  # e.g. a partial Redis loss
    assert attempt(user, sale) is Code.SUCCESS
    assert flush(sale).one_by_one == {"duplicate": 1}
    assert Order.objects.filter(user=user).count() == 1
    assert Sale.objects.get(pk=sale.pk).stock_count == 4
    assert client().get(keys.stock(sale.pk)) == b"4"
    assert client().sismember(keys.buyers(sale.pk), user.pk)


def test_warm_keeps_units_in_flight(flushes):
    sale, user = make_sale(stock=5), make_user()
    assert attempt(user, sale) is Code.SUCCESS  # reserved, not yet written
    report = reconcile.stock_warm(sale_id=sale.pk)
    assert report.stock == 4 and report.buyers == 1
    assert report.previous_stock == 4


def test_captcha_is_single_use_and_must_be_right():
    sale, user = make_sale(), make_user()
    paths.captcha_create(user_id=user.pk, sale_id=sale.pk)
    answer = int(client().get(keys.captcha(sale.pk, user.pk)))
    assert paths.path_create(user_id=user.pk, sale_id=sale.pk, answer=answer + 1) is None
    # The wrong try consumed it: the right answer no longer works either.
    assert paths.path_create(user_id=user.pk, sale_id=sale.pk, answer=answer) is None
    paths.captcha_create(user_id=user.pk, sale_id=sale.pk)
    answer = int(client().get(keys.captcha(sale.pk, user.pk)))
    assert paths.path_create(user_id=user.pk, sale_id=sale.pk, answer=answer)
    assert paths.path_create(user_id=user.pk, sale_id=sale.pk, answer=answer) is None  # reused


def test_expired_captcha_is_refused():
    sale, user = make_sale(), make_user()
    paths.captcha_create(user_id=user.pk, sale_id=sale.pk)
    answer = int(client().get(keys.captcha(sale.pk, user.pk)))
    client().pexpire(keys.captcha(sale.pk, user.pk), 1)
    time.sleep(0.01)
    assert paths.path_create(user_id=user.pk, sale_id=sale.pk, answer=answer) is None


def test_path_is_one_time_and_bound_to_user_and_sale(flushes):
    sale, other_sale = make_sale(stock=5), make_sale(stock=5)
    user, other_user = make_user(), make_user()
    path = path_for(user.pk, sale.pk)
    assert gate(user_id=other_user.pk, sale_id=sale.pk, path=path).code is SaleCode.PATH_INVALID
    assert gate(user_id=user.pk, sale_id=other_sale.pk, path=path).code is SaleCode.PATH_INVALID
    assert gate(user_id=user.pk, sale_id=sale.pk, path="0" * 32).code is SaleCode.PATH_INVALID
    assert gate(user_id=user.pk, sale_id=sale.pk, path=path).code is Code.SUCCESS
    assert gate(user_id=user.pk, sale_id=sale.pk, path=path).code is SaleCode.PATH_INVALID
    expired = path_for(other_user.pk, sale.pk)
    client().pexpire(keys.path(sale.pk, other_user.pk), 1)
    time.sleep(0.01)
    assert gate(user_id=other_user.pk, sale_id=sale.pk, path=expired).code is SaleCode.PATH_INVALID


def test_a_flush_the_broker_took_despite_a_failed_publish_writes_nothing(monkeypatch):
    """The connection dropped after the broker accepted the flush: the gate saw a failure,
    gave the unit back and told the shopper to try again. The flush runs anyway."""
    from celery_app import app

    sale, user = make_sale(stock=2), make_user()
    delivered = []

    def published_then_failed(name, kwargs=None, **options):
        delivered.append(kwargs)
        raise BrokerError("connection reset by peer")

    monkeypatch.setattr(app, "send_task", published_then_failed)
    assert attempt(user, sale) is SaleCode.TRY_AGAIN
    assert client().get(keys.stock(sale.pk)) == b"2"
    assert not client().exists(keys.flush(sale.pk))  # the next buy publishes
    assert writer.sale_flush(**delivered[0]).batches == 0
    assert not Order.objects.exists() and Sale.objects.get(pk=sale.pk).stock_count == 2
