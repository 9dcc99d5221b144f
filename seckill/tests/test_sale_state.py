"""The item page's two refreshes (seckill.item.views): /seckill/saleState/<id>, the sale as data, the
same bytes for every visitor and an edge's to keep for a second; and /seckill/shopperState, where
one shopper stands. Neither renders a template: the page carries every panel's words."""

from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.test.signals import template_rendered

from sales import cache_keys
from sales.codes import SaleCode
from sales.reminders import services as reminders
from sales.sale_state import keys
from seckill.services import draw as draw_service
from seckill.services.writer import sale_flush
from seckill_site.codes import Code
from seckill_site.redis import client as redis
from seckill_site.redis import now as redis_now
from seckill_site.templatetags.times import when
from testutils.draws import attempt, opening_over
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_ahead_sale, make_sale
from testutils.factories.users import make_user, texted_code
from testutils.shoppers import reserve_directly

pytestmark = pytest.mark.django_db


@contextmanager
def no_template_rendered():
    rendered = []

    def seen(sender, template, **kwargs):
        rendered.append(template.name)

    template_rendered.connect(seen)
    try:
        yield
    finally:
        template_rendered.disconnect(seen)
    assert rendered == []


def _sale_state(client, sale_id, **headers):
    with no_template_rendered():
        return client.get(f"/seckill/saleState/{sale_id}", **headers)


def _shopper(client, sale_id, *, nav=False):
    with no_template_rendered():
        response = client.get("/seckill/shopperState", {"goodsId": sale_id, **({"nav": "1"} if nav else {})})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]
    return response.json()["data"]


def test_the_sale_state_is_everybodys_data_with_the_window_as_instants(client):
    sale = make_sale(stock=5, starts_in=3600, lasts=600)
    response = _sale_state(client, sale.pk)
    assert response.status_code == 200
    assert response["Cache-Control"] == "public, max-age=1, s-maxage=1, stale-while-revalidate=0"
    assert response["xkey"] == f"sale-{sale.pk}"
    assert not response.cookies and "Cookie" not in response.get("Vary", "")
    assert "Accept-Language" not in response.get("Vary", "")
    body = response.json()
    assert (body["code"], body["msg"]) == (0, "success")
    data = body["data"]
    assert data["seckillStatus"] == 0 and data["stockCount"] == 5 and data["claimed"] == 0
    assert data["startsAt"] == sale.start_at.timestamp() and data["endsAt"] == sale.end_at.timestamp()
    assert abs(data["now"] - redis_now()) < 5
    assert data["entries"] is None and data["draw"] is None


def test_the_sale_state_is_the_same_for_a_shopper_in_any_language(client):
    sale = make_sale(stock=3)
    anybody = _sale_state(client, sale.pk).json()["data"]
    client.force_login(make_user())
    client.cookies["django_language"] = "zh-hans"
    response = _sale_state(client, sale.pk, HTTP_ACCEPT_LANGUAGE="zh-hans")
    mine = response.json()["data"]
    assert not response.cookies and "Cookie" not in response.get("Vary", "")
    assert {k: v for k, v in mine.items() if k != "now"} == {k: v for k, v in anybody.items() if k != "now"}
    assert mine["seckillStatus"] == 1 and mine["stockCount"] == 3


@pytest.mark.parametrize("bad", ["abc", "0", "-1", "1.5", "99999999999999999999999", "１２", "%20"])
def test_the_sale_state_answers_a_bad_id_with_404(client, bad):
    response = _sale_state(client, bad)
    assert response.status_code == 404 and response.json()["code"] == Code.NOT_FOUND.code
    assert "public" not in response.get("Cache-Control", "")


def test_the_sale_state_of_an_unknown_sale_is_404_and_takes_no_query(client):
    assert _sale_state(client, 999999).status_code == 404
    assert client.get("/seckill/saleState/").status_code == 404
    assert client.post(f"/seckill/saleState/{make_sale().pk}").status_code == 405


def test_a_draw_sale_shows_its_entries_and_its_draw_as_data(client, flushes):
    sale = make_ahead_sale(stock=1)
    data = _sale_state(client, sale.pk).json()["data"]
    entries = data["entries"]
    assert entries["state"] == "open" and entries["ahead"] is True
    assert entries["opensAt"] == sale.entries_from.timestamp() and entries["closesAt"] == sale.draw_at.timestamp()
    assert data["draw"]["drawn"] is False and len(data["draw"]["seedSha256"]) == 64 and "seed" not in data["draw"]
    me = make_user()
    assert attempt(me, sale).code is SaleCode.ENTERED
    opening_over(sale)
    draw_service.sale_draw(sale_id=sale.pk)
    cache.delete(cache_keys.draw_summary(sale.pk))  # as DRAW_SUMMARY_SECONDS later
    draw = _sale_state(client, sale.pk).json()["data"]["draw"]
    assert draw["drawn"] is True and draw["winnerIds"] == [me.pk] and draw["winnerCount"] == 1
    assert draw["units"] == 1 and draw["entrants"] == 1 and len(draw["seed"]) > 0


def test_the_shopper_state_from_logged_out_to_paid(client):
    sale = make_sale(stock=5)
    anonymous = _shopper(client, sale.pk)
    assert anonymous["shopper"] is None and anonymous["csrfToken"] is None
    me = make_user()
    client.force_login(me)
    data = _shopper(client, sale.pk)
    assert data["shopper"] == {"state": "none"} and data["csrfToken"] and data["now"] > 0
    reserve_directly(me.pk, sale.pk)
    assert _shopper(client, sale.pk)["shopper"] == {"state": "queued"}
    sale_flush(sale_id=sale.pk)
    client.logout()
    client.force_login(other := make_user())
    order = buy(sale=sale, user=other)
    shopper = _shopper(client, sale.pk)["shopper"]
    assert shopper["state"] == "ordered" and shopper["orderNo"] == order.order_no
    assert shopper["price"] == str(order.price) and shopper["payDeadline"] == order.pay_deadline.timestamp()
    # The deadline as the panel words it: the time of day in the shop's zone (UTC+08:00).
    assert shopper["payDeadlineAt"] == when(order.pay_deadline)  # the time of day, or with its date
    pay(order)
    assert _shopper(client, sale.pk)["shopper"]["state"] == "paid"


def test_the_shopper_state_remembers_a_failure_only_from_redis(client):
    sale, me = make_sale(), make_user()
    client.force_login(me)
    redis().set(keys.result(sale.pk, me.pk), -1)
    assert _shopper(client, sale.pk)["shopper"] == {"state": "failed"}


def test_the_shopper_state_reads_nothing_before_the_opening(client, django_assert_num_queries):
    sale = make_sale(starts_in=3600)
    client.force_login(make_user())
    client.get("/seckill/shopperState", {"goodsId": sale.pk})  # the session and the sale are cached
    # The session's user (a deactivated one is logged out) and whether the reminder is on (the
    # page shows its box before the opening, and /reminders/<id> is not asked), no more.
    with django_assert_num_queries(2):
        assert _shopper(client, sale.pk)["shopper"] == {"state": "none"}


def _me(client):
    return client.get("/user/me").json()["data"]


@pytest.mark.parametrize("staff", [False, True])
def test_the_shopper_state_carries_the_navs_answer(client, staff):
    sale = make_sale(starts_in=3600)
    client.force_login(make_user(is_staff=staff))
    me, data = _me(client), _shopper(client, sale.pk, nav=True)
    assert me["isStaff"] is staff
    assert set(me) <= set(data) and set(me) == {"nickname", "isStaff", "csrfToken"}
    # Every key as /user/me says it; the CSRF token is masked afresh in each answer.
    assert {key: data[key] for key in me if key != "csrfToken"} == {key: me[key] for key in me if key != "csrfToken"}
    assert data["shopper"] == {"state": "none"} and data["csrfToken"]


def test_the_shopper_state_carries_the_navs_answer_when_logged_out(client):
    sale = make_sale(starts_in=3600)
    assert _me(client) is None
    expected = {"shopper": None, "now": pytest.approx(redis_now(), abs=5), "csrfToken": None, "reminder": None}
    assert _shopper(client, sale.pk, nav=True) == expected


def test_the_shopper_state_carries_the_welcome_left_for_the_nav_once(client):
    sale = make_sale(starts_in=3600)
    password = "good-pass-9"
    form = {"mobile": "13111113333", "nickname": "New", "password": password, "password_again": password}
    assert client.post("/user/register", {**form, "code": texted_code("13111113333")}).status_code == 302
    # The page's later asks (after a buy, a deadline) carry no nav and leave the messages be.
    assert "messages" not in _shopper(client, sale.pk) and "nickname" not in _shopper(client, sale.pk)
    data = _shopper(client, sale.pk, nav=True)
    assert data["nickname"] == "New" and [note["level"] for note in data["messages"]] == ["success"]
    assert "messages" not in _shopper(client, sale.pk, nav=True)  # shown once


def test_the_shopper_state_says_whether_the_reminder_is_on_while_the_box_shows(client):
    soon, on = make_sale(starts_in=3600), make_sale(stock=5)
    me = make_user()
    client.force_login(me)
    assert _shopper(client, soon.pk)["reminder"] == {"on": False}
    reminders.sale_reminder_set(user=me, sale_id=soon.pk, on=True)
    assert _shopper(client, soon.pk)["reminder"] == {"on": True}
    assert client.get(f"/reminders/{soon.pk}").json()["data"] == {"on": True}
    # On with units left, the box is hidden: the crowd's answer reads no reminder.
    assert _shopper(client, on.pk)["reminder"] is None


def test_a_draw_entrant_gets_the_draw_time_then_their_entry(client, flushes):
    sale = make_ahead_sale(stock=1)
    me = make_user()
    client.force_login(me)
    assert _shopper(client, sale.pk)["shopper"] == {"state": "none", "userId": me.pk}
    assert attempt(me, sale).code is SaleCode.ENTERED
    shopper = _shopper(client, sale.pk)["shopper"]
    assert shopper["state"] == "entered" and shopper["drawAt"] == sale.draw_at.timestamp()
    assert shopper["drawAtTime"] == when(datetime.fromtimestamp(shopper["drawAt"], tz=UTC))
    assert shopper["userId"] == me.pk
    opening_over(sale)
    draw_service.sale_draw(sale_id=sale.pk)
    shopper = _shopper(client, sale.pk)["shopper"]
    assert shopper["drawEntry"] == {"number": 1, "entrants": 1, "won": True}


def test_the_shopper_state_answers_bad_input_with_4xx(client):
    assert client.get("/seckill/shopperState").status_code == 400
    assert client.get("/seckill/shopperState", {"goodsId": "abc"}).status_code == 400
    assert client.get("/seckill/shopperState", {"goodsId": "0"}).status_code == 400
    assert client.get("/seckill/shopperState", {"goodsId": "9" * 30}).status_code == 400
    assert client.get("/seckill/shopperState", {"goodsId": "999999"}).status_code == 404
    assert client.post("/seckill/shopperState", {"goodsId": "1"}).status_code in (403, 405)
