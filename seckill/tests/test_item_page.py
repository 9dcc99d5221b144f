"""The item page (seckill.views.item_page at /goods/detail/<id>), the same for everybody, and
/seckill/state, which the page asks for as it loads and then every few seconds: the shopper's
state comes from the server."""

import pytest

from goods.sale_state import keys
from goods.tests.factories import make_goods, make_sale
from orders.tests.factories import buy, pay
from seckill import selectors
from seckill.services.writer import sale_flush
from seckill.tests.shoppers import reserve_directly
from seckill_site.redis import client as redis
from users.tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_a_logged_out_visitor_is_offered_log_in_to_buy_that_returns_to_the_sale(client):
    sale = make_sale(goods=make_goods(name="Page Phone"))
    page = client.get(f"/goods/detail/{sale.pk}").content.decode()
    assert "Page Phone" in page and 'id="buy"' not in page
    assert f'href="/user/index?next=/goods/detail/{sale.pk}"' in page
    login = client.get(f"/user/index?next=/goods/detail/{sale.pk}").content.decode()
    assert f'name="next" value="/goods/detail/{sale.pk}"' in login


def _panel(client, sale) -> str:
    return client.get("/seckill/state", {"goodsId": sale.pk}).json()["data"]["panel"]


def test_states_from_not_bought_to_paid(client):
    sale, me = make_sale(stock=5), make_user()
    client.force_login(me)
    assert selectors.shopper_sale_state(user_id=me.pk, sale_id=sale.pk) == {"state": "none"}
    assert 'id="buy"' in _panel(client, sale)

    _left, _request = reserve_directly(me.pk, sale.pk)  # the gate took it; no order yet
    assert selectors.shopper_sale_state(user_id=me.pk, sale_id=sale.pk)["state"] == "queued"
    state = client.get("/seckill/state", {"goodsId": sale.pk}).json()["data"]
    assert state["shopper"] == {"state": "queued"} and 'id="buy"' not in state["panel"]

    sale_flush(sale_id=sale.pk)  # my order is written
    client.logout()
    client.force_login(other := make_user())
    order = buy(sale=sale, user=other)
    state = selectors.shopper_sale_state(user_id=other.pk, sale_id=sale.pk)
    assert state["state"] == "ordered" and state["orderNo"] == order.order_no
    panel = _panel(client, sale)
    assert f'href="/orders/{order.order_no}"' in panel and "Pay now" in panel and 'id="buy"' not in panel
    data = client.get("/seckill/state", {"goodsId": sale.pk}).json()["data"]
    assert data["shopper"]["state"] == "ordered" and data["shopper"]["payDeadline"] > 0
    assert "Pay now" in data["panel"] and "payDeadlineAt" not in data["shopper"]

    pay(order)
    assert selectors.shopper_sale_state(user_id=other.pk, sale_id=sale.pk)["state"] == "paid"
    assert "View your order" in _panel(client, sale)
    # The page itself is everybody's all along: the logged-out visitor's bytes.
    mine = client.get(f"/goods/detail/{sale.pk}").content
    client.logout()
    assert mine == client.get(f"/goods/detail/{sale.pk}").content and b"View your order" not in mine


def test_failed_is_only_what_redis_remembers(client):
    sale, me = make_sale(), make_user()
    client.force_login(me)
    redis().set(keys.result(sale.pk, me.pk), -1)
    assert selectors.shopper_sale_state(user_id=me.pk, sale_id=sale.pk) == {"state": "failed"}
    assert "sold out before your order was written" in _panel(client, sale)
    redis().delete(keys.result(sale.pk, me.pk))
    assert selectors.shopper_sale_state(user_id=me.pk, sale_id=sale.pk) == {"state": "none"}


def test_state_answers_bad_input_with_4xx(client):
    assert client.get("/seckill/state").status_code == 400
    assert client.get("/seckill/state", {"goodsId": "abc"}).status_code == 400
    assert client.get("/seckill/state", {"goodsId": "999999"}).status_code == 404
    anonymous = client.get("/seckill/state", {"goodsId": make_sale().pk}).json()["data"]
    assert anonymous["shopper"] is None and "Log in to buy" in anonymous["panel"]


def test_the_page_shows_the_window_in_the_shops_zone_with_its_name(client, settings):
    sale = make_sale(starts_in=3600)
    page = client.get(f"/goods/detail/{sale.pk}").content.decode()
    assert "UTC+08:00" in page and 'title="Asia/Shanghai"' in page
    assert client.get("/goods/detail/abc").status_code == 404


def test_goods_does_not_serve_the_item_page_itself():
    from goods import urls

    assert all("detail/" not in str(pattern.pattern) for pattern in urls.urlpatterns)
