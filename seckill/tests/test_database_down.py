"""A sale's shared answers while PostgreSQL has no leader (a failover): the item page, the
anonymous detail poll and the sale's public state render from what Redis holds, so a sell-out in
Redis, which purges the edge's copies, is shown rather than answered with a 503."""

import time

import pytest
from django.core.cache import cache
from django.db import OperationalError, connection
from django.test.utils import CaptureQueriesContext

from sales import cache_keys as keys
from sales import selectors as sale_selectors
from sales.models import Admission
from sales.services import draw_seed_ensure, sale_open
from seckill import selectors as seckill_selectors
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.shoppers import reserve_directly

pytestmark = pytest.mark.django_db


class DatabaseDown:
    """Fails every query as a database with no leader does; the statements it refused."""

    def __init__(self) -> None:
        self.refused: list[str] = []

    def __call__(self, execute, sql, params, many, context):
        self.refused.append(sql)
        raise OperationalError("the database system is in recovery mode")


def _views(client, sale_id: int):
    return (
        client.get(f"/goods/detail/{sale_id}"),
        client.get(f"/goods/getDetails/{sale_id}"),
        client.get(f"/seckill/saleState/{sale_id}"),
    )


@pytest.mark.parametrize("age", [45, 10 * 60], ids=["copy past its freshness", "copy past its stale window"])
def test_a_sale_selling_out_in_redis_during_a_failover_is_shown_sold_out(client, monkeypatch, age):
    sale = make_sale(goods=make_goods(name="Failover Phone"), stock=1)
    assert all(answer.status_code == 200 for answer in _views(client, sale.pk))  # the copies are warm
    left, _request = reserve_directly(make_user().pk, sale.pk)  # the last unit goes, in Redis alone
    assert left == 0
    later = sale_selectors.redis_now() + age  # the sale's Redis copy is that old by now
    monkeypatch.setattr(sale_selectors, "redis_now", lambda: later)

    down = DatabaseDown()
    with connection.execute_wrapper(down):
        page, details, state = _views(client, sale.pk)
    assert len(down.refused) == 1  # one reader asked, then stored the kept copy for the others
    assert page.status_code == 200 and "Failover Phone" in page.content.decode()
    assert details.status_code == 200 and details.json()["data"]["goods"]["stockCount"] == 0
    assert state.status_code == 200 and state.json()["data"]["stockCount"] == 0


def test_a_draw_sale_s_page_keeps_its_draw_during_a_failover(client, monkeypatch):
    sale = make_sale(starts_in=-1, warm=False, admission=Admission.DRAW, draw_window_s=60)
    draw_seed_ensure(sale=sale)
    sale_open(sale_id=sale.pk)
    seed_hash = client.get(f"/goods/detail/{sale.pk}").content.decode().split('id="seed-hash" translate="no">')[1][:64]
    time.sleep(seckill_selectors.DRAW_SUMMARY_SECONDS + 0.1)  # what Redis holds outlives that
    later = sale_selectors.redis_now() + 45  # both copies past their freshness
    monkeypatch.setattr(sale_selectors, "redis_now", lambda: later)
    monkeypatch.setattr(seckill_selectors, "redis_now", lambda: later)

    with connection.execute_wrapper(DatabaseDown()):
        page, _details, state = _views(client, sale.pk)
    assert page.status_code == 200 and seed_hash in page.content.decode()
    assert state.status_code == 200 and state.json()["data"]["draw"]["seedSha256"] == seed_hash


def test_warm_copies_answer_a_sale_s_shared_views_without_postgresql(client):
    sale = make_sale(goods=make_goods(name="Warm Phone"), stock=1)
    assert all(answer.status_code == 200 for answer in _views(client, sale.pk))
    reserve_directly(make_user().pk, sale.pk)
    cache.delete(keys.draw_summary(sale.pk))  # its few seconds ran out
    with CaptureQueriesContext(connection) as queries:
        page, details, state = _views(client, sale.pk)
    assert [query["sql"] for query in queries] == []
    assert page.status_code == 200 and "Warm Phone" in page.content.decode()
    assert details.json()["data"]["goods"]["stockCount"] == 0 and state.json()["data"]["stockCount"] == 0


def test_the_list_renders_from_its_kept_rows_during_a_failover(client, settings):
    sale = make_sale(goods=make_goods(name="Listed Phone"), stock=1)
    assert client.get("/goods/goodsList").status_code == 200
    reserve_directly(make_user().pk, sale.pk)
    cache.delete_many([keys.goods_list_html(code) for code, _name in settings.LANGUAGES])  # their TTL ran out

    with connection.execute_wrapper(DatabaseDown()):
        listed = client.get("/goods/goodsList")
    page = listed.content.decode()
    assert listed.status_code == 200 and "Listed Phone" in page and "sold-out" in page  # the live stock
