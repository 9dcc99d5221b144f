"""Draw sales that take entries ahead of the opening (docs/draw.md, "Entries ahead"), against
real Redis and PostgreSQL: entries from `entries_open_at` until the draw at the start, refused
before and after with their own words, the draw recomputable, and the merchant's rules."""

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from orders.models import SeckillOrder
from sales import sale_state
from sales.codes import SaleCode
from sales.models import Admission, Sale, SaleDraw
from sales.sale_state import keys
from sales.services import sale_update
from seckill import selectors, steps
from seckill.services import draw as draw_service
from seckill.services import writer
from seckill_site.redis import client
from testutils.draws import attempt, opening_over, recomputed, redis_invariants
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_ahead_sale, make_sale
from testutils.factories.users import make_user, make_users
from testutils.shoppers import path_for, shopper


@pytest.mark.django_db
def test_entries_are_taken_before_the_opening_once_each_and_take_no_stock(flushes):
    sale = make_ahead_sale(stock=2)
    users = make_users(3)
    for user in users:
        entered = attempt(user, sale)
        assert entered.code is SaleCode.ENTERED and entered.draw_at == int(sale.start_at.timestamp())
    assert attempt(users[0], sale).code is SaleCode.ENTERED  # again: the same answer, no second entry
    assert sale_state.entrants(sale.pk) == sorted(u.pk for u in users)
    assert redis_invariants(sale) == {"stock": 2, "reserved": 0, "buyers": 0}
    assert selectors.seckill_result(user_id=users[0].pk, sale_id=sale.pk) == sale_state.RESULT_ENTERED
    assert flushes == []


@pytest.mark.django_db
def test_before_entries_open_an_entry_is_refused_as_not_started_and_keeps_its_path(flushes):
    sale = make_ahead_sale(stock=2, opens_in=30)
    user = make_user()
    path = path_for(user.pk, sale.pk)  # the captcha and the path are there before entries open
    answer = steps.buy(user_id=user.pk, sale_id=sale.pk, path=path)
    assert answer.code is SaleCode.NOT_STARTED and sale_state.entrants(sale.pk) == []
    # Judged by Redis's clock too: with this process's copy forgotten, enter.lua refuses it.
    sale_state.process_marks_clear()
    assert sale_state.enter(sale_id=sale.pk, user_id=user.pk, path=path).refusal is sale_state.Refusal.NOT_STARTED


@pytest.mark.django_db
def test_a_first_come_first_served_sale_still_sells_nothing_before_its_start(flushes):
    sale = make_sale(stock=2, starts_in=60)
    assert attempt(make_user(), sale).code is SaleCode.NOT_STARTED
    assert redis_invariants(sale) == {"stock": 2, "reserved": 0, "buyers": 0}


@pytest.mark.django_db
def test_the_draw_at_the_opening_includes_the_pre_registered_and_is_recomputable(flushes):
    sale = make_ahead_sale(stock=3)
    users = make_users(8)
    for user in users:
        assert attempt(user, sale).code is SaleCode.ENTERED
    assert draw_service.sale_draw(sale_id=sale.pk).state == "not_due"  # not before the opening
    opening_over(sale)

    report = draw_service.sale_draw(sale_id=sale.pk)
    assert (report.state, report.entrants, report.winners) == ("drawn", 8, 3)
    draw = SaleDraw.objects.get(sale=sale)
    assert draw.entrant_ids == sorted(u.pk for u in users) and draw.winner_ids == recomputed(sale)
    assert writer.sale_flush(sale_id=sale.pk).created == 3
    assert sorted(SeckillOrder.objects.filter(sale=sale).values_list("user_id", flat=True)) == sorted(draw.winner_ids)
    # Each entrant's number is their place in the published list: anyone can check it.
    for user in users:
        entry = selectors.draw_entry(sale_id=sale.pk, user_id=user.pk)
        assert draw.entrant_ids[entry["number"] - 1] == user.pk
        assert (entry["entrants"], entry["won"]) == (8, user.pk in draw.winner_ids)
    assert selectors.draw_entry(sale_id=sale.pk, user_id=make_user().pk) is None  # never entered


@pytest.mark.django_db
def test_after_the_entries_closed_a_latecomer_is_told_entries_closed_not_sold_out(flushes):
    sale = make_ahead_sale(stock=1)
    first, late = make_users(2)
    assert attempt(first, sale).code is SaleCode.ENTERED
    opening_over(sale)
    late_path = path_for(late.pk, sale.pk)
    # The latecomer's buy makes the draw (nobody has), which takes the one unit.
    answer = steps.buy(user_id=late.pk, sale_id=sale.pk, path=late_path)
    assert answer.code is SaleCode.ENTRIES_CLOSED and answer.code.code == 500509
    assert answer.code.msg == "entries to this draw have closed, and no units are left"
    assert SaleDraw.objects.get(sale=sale).winner_ids == [first.pk]
    assert steps.buy(user_id=late.pk, sale_id=sale.pk, path=path_for(late.pk, sale.pk)).code is SaleCode.ENTRIES_CLOSED
    # An entry straight at Redis is refused too: the shard is closed.
    assert sale_state.enter(sale_id=sale.pk, user_id=late.pk, path="x").refusal is sale_state.Refusal.IN_DRAW


@pytest.mark.django_db
def test_the_item_page_offers_enter_the_draw_before_the_start_and_then_the_entry_number(client, flushes):
    from testutils.pages import panels

    sale = make_ahead_sale(stock=1)
    me = make_user()
    client.force_login(me)
    data = client.get(f"/seckill/saleState/{sale.pk}").json()["data"]
    assert data["seckillStatus"] == 0 and data["entries"]["state"] == "open"
    page = client.get(f"/goods/detail/{sale.pk}").content.decode()
    found = panels(page)
    assert "Enter the draw" in found["none:entries-open"] and "disabled" not in found["none:entries-open"]
    assert "Entries are taken from" in page and 'id="draw-result"' in page
    assert attempt(me, sale).code is SaleCode.ENTERED
    shopper = client.get("/seckill/shopperState", {"goodsId": sale.pk}).json()["data"]["shopper"]
    assert shopper["state"] == "entered" and shopper["userId"] == me.pk
    assert "Your shopper id is" in page and 'data-entry-variant="id"' in page
    opening_over(sale)
    draw_service.sale_draw(sale_id=sale.pk)
    shopper = client.get("/seckill/shopperState", {"goodsId": sale.pk}).json()["data"]["shopper"]
    assert shopper["drawEntry"] == {"number": 1, "entrants": 1, "won": True}
    assert "You won the draw" in page  # the headline of the page's "won" entry
    client.logout()
    other = make_user()
    client.force_login(other)
    assert client.get("/seckill/shopperState", {"goodsId": sale.pk}).json()["data"]["shopper"]["state"] == "none"
    assert "Entries closed" in found["none:entries-closed"] and "Buy now" not in found["none:entries-closed"]


@pytest.mark.django_db
def test_before_entries_open_the_page_says_when_and_keeps_the_button_off(client, flushes):
    from testutils.pages import panels

    sale = make_ahead_sale(stock=1, opens_in=600, starts_in=3600)
    client.force_login(make_user())
    data = client.get(f"/seckill/saleState/{sale.pk}").json()["data"]
    assert data["entries"]["state"] == "soon" and 590 <= data["entries"]["opensAt"] - data["now"] <= 600
    soon = panels(client.get(f"/goods/detail/{sale.pk}").content.decode())["none:entries-soon"]
    assert "Enter the draw" in soon and "disabled" in soon
    assert "The button turns on when entries open" in soon


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_many_shoppers_entering_at_once_over_http_are_each_entered_once(gunicorn_server, flushes):
    """Real requests to two web processes ahead of the opening: every shopper fires four buys at
    once with their one path; each is entered once, and no unit is taken."""
    sale = make_ahead_sale(stock=5)
    shoppers = [shopper(user) for user in make_users(40)]
    paths = {s.user_id: path_for(s.user_id, sale.pk) for s in shoppers}

    def buy(s):
        response = s.post(f"{gunicorn_server}/seckill/{paths[s.user_id]}/doSeckill", {"goodsId": sale.pk})
        return s.user_id, response.status_code, response.json()["code"]

    with ThreadPoolExecutor(max_workers=32) as pool:
        answers = list(pool.map(buy, [s for s in shoppers for _ in range(4)]))

    entered = {user_id for user_id, status, code in answers if status == 200 and code == SaleCode.ENTERED.code}
    assert entered == set(paths), answers
    # The rest of each shopper's four: entered already (the same answer) or the path used up.
    assert {code for _, _, code in answers} <= {SaleCode.ENTERED.code, SaleCode.PATH_INVALID.code}
    assert sale_state.entrants(sale.pk) == sorted(paths)
    assert client().scard(keys.entrants(sale.pk)) == 40
    assert redis_invariants(sale) == {"stock": 5, "reserved": 0, "buyers": 0}


# --- the merchant's rules -------------------------------------------------------------------------


@pytest.mark.django_db
def test_entries_ahead_are_for_draw_sales_before_the_start_and_the_database_holds_it():
    now = timezone.now()
    base = {"goods": make_goods(), "seckill_price": 1, "stock_count": 1}
    window = {"start_at": now + timedelta(hours=1), "end_at": now + timedelta(hours=2)}
    with pytest.raises(ValidationError, match="Only a draw sale"):
        Sale(**base, **window, entries_open_at=now + timedelta(minutes=5)).full_clean()
    with pytest.raises(ValidationError, match="before the sale starts"):
        Sale(**base, **window, admission=Admission.DRAW, entries_open_at=now + timedelta(hours=1)).full_clean()
    with pytest.raises(ValidationError, match="0 seconds needs entries"):
        Sale(**base, **window, admission=Admission.DRAW, draw_window_s=0).full_clean()
    with pytest.raises(ValidationError, match="5 to 120"):
        Sale(**base, **window, admission=Admission.DRAW, draw_window_s=3).full_clean()
    sale = make_ahead_sale(stock=1, opens_in=600, starts_in=3600)
    for bad in ({"admission": Admission.FCFS}, {"entries_open_at": sale.start_at}, {"entries_open_at": None}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Sale.objects.filter(pk=sale.pk).update(**bad)


@pytest.mark.django_db
def test_entries_cannot_open_in_the_past_nor_move_once_open(published, django_capture_on_commit_callbacks):
    sale = make_ahead_sale(stock=1, opens_in=600, starts_in=3600)
    with pytest.raises(ValidationError, match="cannot open in the past"):
        sale_update(sale=sale, changes={"entries_open_at": timezone.now() - timedelta(seconds=1)})
    later = sale.entries_open_at + timedelta(minutes=5)
    with django_capture_on_commit_callbacks(execute=True):
        assert sale_update(sale=sale, changes={"entries_open_at": later}).entries_open_at == later
    assert float(client().hget(keys.window(sale.pk), "entries")) == later.timestamp()  # Redis follows

    opened = make_ahead_sale(stock=1)  # entries opened 30 s ago
    for changes, field in (
        ({"entries_open_at": opened.entries_open_at + timedelta(seconds=5)}, "entries_open_at"),
        ({"draw_window_s": 10}, "admission"),
        ({"start_at": opened.start_at + timedelta(minutes=5)}, "start_at"),
    ):
        with pytest.raises(ValidationError) as refused:
            sale_update(sale=opened, changes=changes)
        assert field in refused.value.message_dict


@pytest.mark.django_db
def test_the_merchant_api_sets_entries_ahead_and_refuses_bad_ones(published):
    from testutils.clients import api
    from testutils.factories.users import make_merchant
    from users.tokens import api_token_issue

    merchant = make_merchant()
    api_client = api(api_token_issue(user_id=merchant.pk))
    now = timezone.now()
    sale = {
        "goodsId": make_goods(owner=merchant).pk,
        "seckillPrice": "1.00",
        "stockCount": 3,
        "startAt": (now + timedelta(hours=1)).isoformat(),
        "endAt": (now + timedelta(hours=2)).isoformat(),
        "admission": "draw",
        "drawWindowS": 0,
        "entriesOpenAt": (now + timedelta(minutes=10)).isoformat(),
    }
    for bad in (
        {"entriesOpenAt": (now - timedelta(minutes=1)).isoformat()},  # in the past
        {"entriesOpenAt": (now + timedelta(hours=1, minutes=1)).isoformat()},  # after the start
        {"admission": "fcfs"},
        {"entriesOpenAt": None},  # a window of 0 needs them
        {"entriesOpenAt": "soon"},
    ):
        response = api_client.post("/api/v1/merchant/sales", {**sale, **bad}, format="json")
        assert response.status_code == 400, (bad, response.content)
    created = api_client.post("/api/v1/merchant/sales", sale, format="json")
    assert created.status_code == 201, created.content
    data = created.json()["data"]
    assert (data["drawWindowS"], data["entriesOpenAt"] is not None) == (0, True)
    Sale.objects.filter(pk=data["id"]).update(entries_open_at=now - timedelta(seconds=1))  # entries opened
    moved = {"entriesOpenAt": (now + timedelta(minutes=20)).isoformat()}
    response = api_client.patch(f"/api/v1/merchant/sales/{data['id']}", moved, format="json")
    assert response.status_code == 400 and "Entries have opened already" in response.content.decode()


@pytest.mark.django_db
def test_the_admin_form_sets_entries_ahead_and_refuses_them_in_the_past_or_after_the_start(client, published):
    from testutils.factories.users import make_merchant

    merchant = make_merchant()
    client.force_login(merchant)
    goods = make_goods(owner=merchant)
    form = {
        "goods": goods.pk,
        "seckill_price": "9.9",
        "stock_count": 6,
        "start_at_0": "2098-01-01",
        "start_at_1": "10:00:00",
        "end_at_0": "2099-01-01",
        "end_at_1": "11:00:00",
        "admission": "draw",
        "draw_window_s": 0,
    }
    for opens, refusal in (
        (("2020-01-01", "10:00:00"), b"Entries cannot open in the past."),
        (("2098-01-01", "10:00:00"), b"Entries must open before the sale starts."),
        (("", ""), b"A draw window of 0 seconds needs entries"),
    ):
        response = client.post(
            "/admin/sales/sale/add/", {**form, "entries_open_at_0": opens[0], "entries_open_at_1": opens[1]}
        )
        assert response.status_code == 200 and refusal in response.content, opens
        assert not Sale.objects.filter(goods=goods).exists()
    response = client.post(
        "/admin/sales/sale/add/", {**form, "entries_open_at_0": "2097-12-31", "entries_open_at_1": "10:00:00"}
    )
    assert response.status_code == 302
    sale = Sale.objects.get(goods=goods)
    assert (sale.draw_window_s, timezone.localtime(sale.entries_open_at).year) == (0, 2097)
    assert b"entries_open_at" in client.get(f"/admin/sales/sale/{sale.pk}/change/").content
