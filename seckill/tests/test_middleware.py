"""A buy request for a sale this process knows is sold out is answered before the session,
CSRF or anything that needs Redis: here Redis is unreachable and the answer still comes."""

import pytest
from django.test import override_settings

from sales import sale_state
from testutils.stores import DEAD_REDIS

pytestmark = pytest.mark.django_db

BUYS = ["/seckill/some-path/doSeckill", "/api/v1/sales/{sale}/buy/some-path"]


@pytest.mark.parametrize("url", BUYS)
def test_a_known_sold_out_sale_is_answered_without_session_or_redis(client, url):
    sale_state.sold_out_mark(42)
    client.cookies["sessionid"] = "x" * 32  # loading it would need Redis
    with override_settings(CACHES=DEAD_REDIS):
        response = client.post(url.format(sale=42), {"goodsId": 42}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 200
    assert response.json() == {"code": 500500, "msg": "商品已经秒杀完毕", "data": None}


@pytest.mark.parametrize("url", BUYS)
def test_other_sales_go_through_the_whole_stack(client, url):
    sale_state.sold_out_mark(42)
    response = client.post(url.format(sale=43), {"goodsId": 43}, HTTP_ACCEPT="application/json")
    assert response.status_code in (401, 403)  # not logged in (or no CSRF token): the usual checks ran
