"""The per-sale cache under a stampede: real threads, real PostgreSQL and Redis."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache import cache
from django.db import OperationalError, connection

from goods.models import Goods
from sales import cache_keys as keys
from sales import selectors
from sales.models import Sale
from seckill_site.redis import client as redis
from seckill_site.redis import lock
from testutils.factories.sales import make_sale

READERS = 64


class SaleReads:
    """Counts the queries on the sale table from every thread that installs it: each thread
    has its own database connection, so each one wraps its own."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        self._guard = threading.Lock()

    def __call__(self, execute, sql, params, many, context):
        if Sale._meta.db_table in sql:
            with self._guard:
                self.queries.append(sql)
        return execute(sql, params, many, context)


def read_together(sale_id: int, reads: SaleReads) -> list:
    """READERS threads call sale_get at the same moment; their answers."""
    start = threading.Barrier(READERS)

    def reader(_):
        try:
            with connection.execute_wrapper(reads):
                start.wait()
                return selectors.sale_get(sale_id=sale_id)
        finally:
            connection.close()  # this thread's own connection, if it opened one

    with ThreadPoolExecutor(READERS) as pool:
        return list(pool.map(reader, range(READERS)))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("expiry", ["entry gone", "entry past its freshness"])
def test_a_hot_sale_expiring_under_64_readers_is_read_from_postgresql_once(expiry, monkeypatch):
    sale = make_sale()
    reads = SaleReads()
    with connection.execute_wrapper(reads):
        assert selectors.sale_get(sale_id=sale.pk).sale_id == sale.pk
    assert len(reads.queries) == 1  # the counter sees the selector's read
    reads.queries.clear()
    # Waiters wait as long as it takes here: the test is about how many rebuild, not how fast
    # this busy machine schedules 64 threads.
    monkeypatch.setattr(selectors, "SALE_CACHE_WAIT_SECONDS", 30.0)
    if expiry == "entry gone":
        cache.delete(keys.sale_cache(sale.pk))  # what its TTL running out does
    else:
        later = selectors.redis_now() + 10 * 60  # the entry is still in Redis, but old
        monkeypatch.setattr(selectors, "redis_now", lambda: later)
    rows = read_together(sale.pk, reads)
    assert [row.sale_id for row in rows] == [sale.pk] * READERS
    went = len(reads.queries)
    assert went == 1, f"{went} of {READERS} readers went to PostgreSQL"
    assert redis().get(keys.sale_cache_lock(sale.pk)) is None  # the rebuilder let go


@pytest.mark.django_db
def test_a_reader_that_gave_up_waiting_leaves_the_holders_lock(monkeypatch):
    sale = make_sale()
    monkeypatch.setattr(selectors, "SALE_CACHE_WAIT_SECONDS", 0.1)
    key = keys.sale_cache_lock(sale.pk)
    with lock(key, ttl=30) as token:  # a slow rebuilder elsewhere
        assert selectors.sale_get(sale_id=sale.pk).sale_id == sale.pk  # read it itself
        assert redis().get(key) == token.encode()


@pytest.mark.django_db
def test_an_unknown_sale_is_remembered_by_whoever_rebuilds():
    reads = SaleReads()
    with connection.execute_wrapper(reads):
        assert selectors.sale_get(sale_id=987654) is None
        assert selectors.sale_get(sale_id=987654) is None
    assert len(reads.queries) == 1


@pytest.mark.django_db
def test_a_copy_past_its_stale_window_is_served_only_while_postgresql_fails(monkeypatch):
    sale = make_sale()
    assert selectors.sale_get(sale_id=sale.pk).goods_name == sale.goods.name
    Goods.objects.filter(pk=sale.goods_id).update(name="Renamed")  # no drop: only the clock tells
    now = selectors.redis_now()
    clock = [now + 10 * 60]
    monkeypatch.setattr(selectors, "redis_now", lambda: clock[0])
    assert selectors.sale_get(sale_id=sale.pk).goods_name == "Renamed"  # read again, not the kept copy

    def refused(execute, sql, params, many, context):
        raise OperationalError("no leader")

    clock[0] += 10 * 60
    with connection.execute_wrapper(refused):
        assert selectors.sale_get(sale_id=sale.pk).goods_name == "Renamed"  # the kept copy
        assert selectors.sale_get(sale_id=sale.pk).goods_name == "Renamed"  # fresh for a moment


@pytest.mark.django_db
def test_a_reader_waiting_in_vain_on_a_holder_serves_the_kept_copy(monkeypatch):
    sale = make_sale()
    assert selectors.sale_get(sale_id=sale.pk).sale_id == sale.pk
    later = selectors.redis_now() + 10 * 60
    monkeypatch.setattr(selectors, "redis_now", lambda: later)
    monkeypatch.setattr(selectors, "SALE_CACHE_WAIT_SECONDS", 0.1)
    reads = SaleReads()
    with lock(keys.sale_cache_lock(sale.pk), ttl=30), connection.execute_wrapper(reads):  # a holder stuck
        assert selectors.sale_get(sale_id=sale.pk).sale_id == sale.pk
    assert reads.queries == []
