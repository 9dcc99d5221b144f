"""The item page (seckill.item.views.item_page at /goods/detail/<id>), the same for everybody, with
every panel a shopper may get for seckill.js to pick by /seckill/shopperState
(test_sale_state.py): the shopper's state comes from the server."""

import pytest

from sales.sale_state import keys
from seckill import selectors
from seckill.services.writer import sale_flush
from seckill_site.redis import client as redis
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.pages import panels
from testutils.shoppers import reserve_directly

pytestmark = pytest.mark.django_db


def test_a_logged_out_visitor_is_offered_log_in_to_buy_that_returns_to_the_sale(client):
    sale = make_sale(goods=make_goods(name="Page Phone"))
    page = client.get(f"/goods/detail/{sale.pk}").content.decode()
    shown = panels(page)["shown"]
    assert "Page Phone" in page and 'id="buy"' not in shown
    assert f'href="/user/index?next=/goods/detail/{sale.pk}"' in shown
    login = client.get(f"/user/index?next=/goods/detail/{sale.pk}").content.decode()
    assert f'name="next" value="/goods/detail/{sale.pk}"' in login


def test_the_page_carries_every_panel_with_slots_for_the_shoppers_figures(client):
    sale = make_sale(stock=5)
    found = panels(client.get(f"/goods/detail/{sale.pk}").content.decode())
    expected = {"anon", "anon:sold-out", "queued", "ordered", "paid"}
    expected |= {
        f"{state}:{action}" for state in ("none", "failed") for action in ("ended", "buy", "buy-soon", "sold-out")
    }
    assert set(found) - {"shown"} == expected  # no draw: no entrant's panels
    assert 'id="buy"' not in found["queued"] and "You are in the queue" in found["queued"]
    assert 'data-slot="price"' in found["ordered"] and 'data-slot="payDeadlineAt"' in found["ordered"]
    assert (
        "Pay now" in found["ordered"] and "data-order-href" in found["ordered"] and 'id="buy"' not in found["ordered"]
    )
    assert "View your order" in found["paid"]
    assert 'id="buy"' in found["none:buy"] and "disabled" not in found["none:buy"].split('id="buy"')[1][:40]
    assert "The button turns on when the sale starts" in found["none:buy-soon"]
    assert "the last unit went before your order was written" in found["failed:buy"]
    # Lost the last unit: one sentence says so and that units may come back, not two notes.
    lost = found["failed:sold-out"]
    assert "the last unit went before your order was written" in lost and "All units are taken" not in lost
    assert "All units are taken for now" in found["anon:sold-out"] and 'id="buy"' not in found["anon:sold-out"]
    assert 'id="buy"' not in found["none:ended"]


def test_states_from_not_bought_to_paid(client):
    sale, me = make_sale(stock=5), make_user()
    client.force_login(me)
    assert selectors.shopper_sale_state(user_id=me.pk, sale_id=sale.pk) == {"state": "none"}
    _left, _request = reserve_directly(me.pk, sale.pk)  # the gate took it; no order yet
    assert selectors.shopper_sale_state(user_id=me.pk, sale_id=sale.pk)["state"] == "queued"
    sale_flush(sale_id=sale.pk)  # my order is written
    client.logout()
    client.force_login(other := make_user())
    order = buy(sale=sale, user=other)
    state = selectors.shopper_sale_state(user_id=other.pk, sale_id=sale.pk)
    assert state["state"] == "ordered" and state["orderNo"] == order.order_no
    pay(order)
    assert selectors.shopper_sale_state(user_id=other.pk, sale_id=sale.pk)["state"] == "paid"
    # The page itself is everybody's all along: the logged-out visitor's bytes.
    mine = client.get(f"/goods/detail/{sale.pk}").content
    client.logout()
    assert mine == client.get(f"/goods/detail/{sale.pk}").content and order.order_no.encode() not in mine


def test_failed_is_only_what_redis_remembers(client):
    sale, me = make_sale(), make_user()
    client.force_login(me)
    redis().set(keys.result(sale.pk, me.pk), -1)
    assert selectors.shopper_sale_state(user_id=me.pk, sale_id=sale.pk) == {"state": "failed"}
    redis().delete(keys.result(sale.pk, me.pk))
    assert selectors.shopper_sale_state(user_id=me.pk, sale_id=sale.pk) == {"state": "none"}


def test_the_page_shows_the_window_in_the_shops_zone_with_its_name(client, settings):
    sale = make_sale(starts_in=3600)
    page = client.get(f"/goods/detail/{sale.pk}").content.decode()
    assert "UTC+08:00" in page and 'title="Asia/Shanghai"' in page
    assert client.get("/goods/detail/abc").status_code == 404


def test_goods_does_not_serve_the_item_page_itself():
    from sales import urls

    assert all("detail/" not in str(pattern.pattern) for pattern in urls.urlpatterns)
