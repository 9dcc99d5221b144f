"""A sale's shared answers while PostgreSQL has no leader (a failover): the item page, the
anonymous detail poll and the page's state render from what Redis holds, so a sell-out in
Redis, which purges the edge's copies, is shown rather than answered with a 503."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from goods.tests.factories import make_goods, make_sale
from seckill.tests.shoppers import reserve_directly
from seckill_site.redis import keys
from users.tests.factories import make_user

pytestmark = pytest.mark.django_db


def _views(client, sale_id: int):
    return (
        client.get(f"/goods/detail/{sale_id}"),
        client.get(f"/goods/getDetails/{sale_id}"),
        client.get("/seckill/state", {"goodsId": sale_id}),
    )


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
