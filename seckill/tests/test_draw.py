"""Draw sales (docs/draw.md) against real Redis and PostgreSQL: entering, the draw made exactly
once however many drawers race, its winners reproducible from what is published, the orders."""

import hashlib
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from orders.models import SeckillOrder
from sales import draw_ranking, draw_seed, sale_state
from sales.codes import SaleCode
from sales.models import Admission, Sale, SaleDraw, SaleDrawOffer
from sales.sale_state import keys
from sales.services import draw_seed_ensure, sale_open
from seckill import selectors
from seckill.services import draw as draw_service
from seckill.services import writer
from seckill_site.codes import Code
from seckill_site.redis import client
from testutils.draws import attempt, enter_all, recomputed, redis_invariants, window_over
from testutils.factories.sales import make_draw_sale, make_sale
from testutils.factories.users import make_users
from testutils.processes import child_database_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_entering_takes_no_stock_and_counts_once(flushes):
    sale = make_draw_sale(stock=2)
    users = make_users(4)
    enter_all(users, sale)
    again = attempt(users[0], sale)  # a second try with a new path: the same answer, no second entry
    assert again.code is SaleCode.ENTERED and again.draw_at == pytest.approx(sale.draw_at.timestamp())
    assert sale_state.entrants(sale.pk) == sorted(u.pk for u in users)
    assert redis_invariants(sale) == {"stock": 2, "reserved": 0, "buyers": 0}
    assert selectors.seckill_result(user_id=users[0].pk, sale_id=sale.pk) == sale_state.RESULT_ENTERED
    assert flushes == []
    assert draw_service.sale_draw(sale_id=sale.pk).state == "not_due"  # the window is still open


@pytest.mark.django_db
def test_draw_makes_winners_orders_and_losers_not_drawn(flushes):
    sale = make_draw_sale(stock=3)
    users = make_users(8)
    enter_all(users, sale)
    window_over(sale)

    report = draw_service.sale_draw(sale_id=sale.pk)

    assert (report.state, report.entrants, report.winners, report.applied) == ("drawn", 8, 3, 3)
    draw = SaleDraw.objects.get(sale=sale)
    assert draw.winner_ids == recomputed(sale) and draw.entrant_ids == sorted(u.pk for u in users)
    assert redis_invariants(sale) == {"stock": 0, "reserved": 3, "buyers": 3}
    assert flushes == [sale.pk]
    assert writer.sale_flush(sale_id=sale.pk).created == 3
    orders = dict(SeckillOrder.objects.filter(sale=sale).values_list("user_id", "order_id"))
    assert sorted(orders) == sorted(draw.winner_ids)
    for user in users:
        answer = selectors.seckill_result(user_id=user.pk, sale_id=sale.pk)
        assert answer == (orders[user.pk] if user.pk in orders else sale_state.RESULT_NOT_DRAWN)
    assert Sale.objects.get(pk=sale.pk).stock_count == 0
    assert draw_service.sale_draw(sale_id=sale.pk).state == "done"  # a late trigger changes nothing
    loser = next(u for u in users if u.pk not in orders)
    assert attempt(loser, sale).code is SaleCode.ENTRIES_CLOSED  # sold out after the draw, said as "entries closed"


@pytest.mark.django_db
def test_stock_left_after_the_draw_is_sold_first_come_first_served_and_the_first_buy_draws(flushes):
    sale = make_draw_sale(stock=4)
    entrants = make_users(2)
    enter_all(entrants, sale)
    window_over(sale)
    late = make_users(3)

    # No trigger ran: the first buy after the window makes the draw, then buys.
    assert attempt(late[0], sale).code is Code.SUCCESS
    assert SaleDraw.objects.get(sale=sale).drawn_at is not None
    assert [attempt(user, sale).code for user in late[1:]] == [Code.SUCCESS, SaleCode.ENTRIES_CLOSED]
    assert redis_invariants(sale) == {"stock": 0, "reserved": 4, "buyers": 4}
    for user in entrants:  # every entrant won (fewer entrants than units)
        assert selectors.seckill_result(user_id=user.pk, sale_id=sale.pk) == sale_state.RESULT_QUEUED


@pytest.mark.django_db
def test_a_draw_that_crashed_midway_is_finished_without_a_double_win(flushes, monkeypatch):
    sale = make_draw_sale(stock=5)
    users = make_users(9)
    enter_all(users, sale)
    window_over(sale)
    monkeypatch.setattr(keys, "DRAW_CHUNK", 2)
    real_script = sale_state.draw.script
    calls = []

    def crashing(name):
        if name != "draw_apply":
            return real_script(name)

        def run(**kwargs):
            calls.append(1)
            if len(calls) == 2:
                raise ConnectionError("the drawer died")
            return real_script(name)(**kwargs)

        return run

    monkeypatch.setattr(sale_state.draw, "script", crashing)
    with pytest.raises(ConnectionError):
        draw_service.sale_draw(sale_id=sale.pk)
    assert redis_invariants(sale)["reserved"] == 2  # the first chunk went in, then the drawer died
    assert not sale_state.drawn(sale.pk)
    assert (
        sale_state.reserve(sale_id=sale.pk, user_id=0, path="", request_id="r", trace="", flush_mark_ms=5000).refusal
        is sale_state.Refusal.DRAW_PENDING
    )  # no buy before the draw is whole
    monkeypatch.setattr(sale_state.draw, "script", real_script)

    # The next buy finishes the stored draw, then finds the stock gone to its winners.
    assert attempt(make_users(1)[0], sale).code is SaleCode.ENTRIES_CLOSED
    assert draw_service.sale_draw(sale_id=sale.pk).state == "done"
    assert redis_invariants(sale) == {"stock": 0, "reserved": 5, "buyers": 5}
    reserved = {int(v.decode().split(":")[0]) for v in client().hvals(keys.reservations(sale.pk))}
    assert reserved == set(SaleDraw.objects.get(sale=sale).winner_ids) == set(recomputed(sale))


@pytest.mark.django_db(transaction=True)
def test_exactly_one_draw_under_concurrent_drawers_threads_and_processes(flushes):
    sale = make_draw_sale(stock=20)
    users = make_users(60)
    for user in users:  # entering directly (no captcha): 60 entries
        sale_state.path_set(sale_id=sale.pk, user_id=user.pk, path=f"p{user.pk}")
        assert sale_state.enter(sale_id=sale.pk, user_id=user.pk, path=f"p{user.pk}").refusal is None
    window_over(sale)

    # Below the lock: sixteen threads race for the database's claim itself.
    draw = SaleDraw.objects.get(sale=sale)
    barrier = threading.Barrier(16)

    def store(_):
        barrier.wait()
        try:
            return draw_service._draw_store(SaleDraw.objects.get(pk=draw.pk))
        finally:
            from django.db import connection  # here: each thread's own connection

            connection.close()

    with ThreadPoolExecutor(16) as pool:
        stored = list(pool.map(store, range(16)))
    assert stored.count(True) == 1, stored
    print(f"\nclaims stored: {stored.count(True)} of {len(stored)}")

    # Then the whole draw: two processes and eight threads at once.
    env = dict(os.environ, DATABASE_URL=child_database_url(), DJANGO_SETTINGS_MODULE="seckill_site.settings.test")
    code = (
        "import django; django.setup()\n"
        "from seckill.services.draw import sale_draw\n"
        f"print(sale_draw(sale_id={sale.pk}).state)\n"
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]

    def draw_once(_):
        try:
            return draw_service.sale_draw(sale_id=sale.pk).state
        finally:
            from django.db import connection  # here: each thread's own connection

            connection.close()

    with ThreadPoolExecutor(8) as pool:
        states = list(pool.map(draw_once, range(8)))
    states += [process.communicate(timeout=60)[0].strip().splitlines()[-1] for process in processes]
    print(f"drawers: {sorted(states)}")
    # The claim was stored above; exactly one caller applies it, the others find it busy or done.
    assert states.count("applied") == 1 and set(states) <= {"applied", "busy", "done"}, states
    assert draw_service.sale_draw(sale_id=sale.pk).state == "done"

    winners = SaleDraw.objects.get(sale=sale).winner_ids
    assert len(winners) == 20 and winners == recomputed(sale)
    assert redis_invariants(sale) == {"stock": 0, "reserved": 20, "buyers": 20}
    assert writer.sale_flush(sale_id=sale.pk).created == 20
    orders = list(SeckillOrder.objects.filter(sale=sale).values_list("user_id", flat=True))
    assert sorted(orders) == sorted(winners)
    assert Sale.objects.get(pk=sale.pk).stock_count == 0


def test_every_entrant_is_equally_likely_to_win():
    """Chi-square over 4,000 draws with fixed seeds: 20 entrants, 5 units, each wins 1,000 times
    on average. 19 degrees of freedom: 43.8 is the 0.1 % critical value."""
    entrants = list(range(1000, 1020))
    wins = dict.fromkeys(entrants, 0)
    draws = 4000
    for number in range(draws):
        for winner in draw_ranking.winners_of(f"seed-{number}", entrants, 5):
            wins[winner] += 1
    expected = draws * 5 / len(entrants)
    chi_square = sum((count - expected) ** 2 / expected for count in wins.values())
    print(f"\nchi-square {chi_square:.1f} (19 df), wins from {min(wins.values())} to {max(wins.values())}")
    assert chi_square < 43.8


@pytest.mark.django_db
@pytest.mark.parametrize("window", [4, 121, -1, "ten"])
def test_the_merchant_api_refuses_a_draw_window_out_of_bounds(window, published):
    from testutils.clients import api
    from testutils.factories.goods import make_goods
    from testutils.factories.users import make_merchant
    from users.tokens import api_token_issue

    merchant = make_merchant()
    goods = make_goods(owner=merchant)
    client = api(api_token_issue(user_id=merchant.pk))
    now = timezone.now()
    sale = {
        "goodsId": goods.pk,
        "seckillPrice": "1.00",
        "stockCount": 3,
        "startAt": (now + timedelta(hours=1)).isoformat(),
        "endAt": (now + timedelta(hours=2)).isoformat(),
        "admission": "draw",
        "drawWindowS": window,
    }
    assert client.post("/api/v1/merchant/sales", sale, format="json").status_code == 400
    assert (
        client.post(
            "/api/v1/merchant/sales", {**sale, "admission": "lottery", "drawWindowS": 10}, format="json"
        ).status_code
        == 400
    )
    created = client.post("/api/v1/merchant/sales", {**sale, "drawWindowS": 10}, format="json")
    assert created.status_code == 201, created.content
    data = created.json()["data"]
    assert (data["admission"], data["drawWindowS"]) == ("draw", 10)
    assert SaleDraw.objects.get(sale_id=data["id"]).drawn_at is None
    assert (
        client.patch(f"/api/v1/merchant/sales/{data['id']}", {"drawWindowS": window}, format="json").status_code == 400
    )
    # A window as long as the sale itself is refused by the model's rule.
    short = {**sale, "drawWindowS": 60, "endAt": (now + timedelta(hours=1, seconds=30)).isoformat()}
    assert client.post("/api/v1/merchant/sales", short, format="json").status_code == 400


@pytest.mark.django_db
def test_the_admin_form_refuses_a_draw_window_out_of_bounds_and_a_change_after_the_start(client, published):
    from testutils.factories.goods import make_goods
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
    }
    for window in (3, 500):
        response = client.post("/admin/sales/sale/add/", {**form, "draw_window_s": window})
        assert response.status_code == 200 and not Sale.objects.filter(goods=goods).exists()
    response = client.post("/admin/sales/sale/add/", {**form, "draw_window_s": 30})
    assert response.status_code == 302
    sale = Sale.objects.get(goods=goods)
    assert (sale.admission, sale.draw_window_s) == ("draw", 30) and SaleDraw.objects.filter(sale=sale).exists()

    started = make_draw_sale(stock=2)
    started.goods.owner = merchant
    started.goods.save()
    local = timezone.localtime(started.start_at)
    response = client.post(
        f"/admin/sales/sale/{started.pk}/change/",
        {
            **form,
            "goods": started.goods.pk,
            "stock_count": 2,
            "initial-stock_count": 2,
            "start_at_0": f"{local:%Y-%m-%d}",
            "start_at_1": f"{local:%H:%M:%S}",
            "end_at_0": f"{timezone.localtime(started.end_at):%Y-%m-%d}",
            "end_at_1": f"{timezone.localtime(started.end_at):%H:%M:%S}",
            "admission": "fcfs",
        },
    )
    assert response.status_code == 200 and b"cannot change once it has started" in response.content
    started.refresh_from_db()
    assert started.admission == Admission.DRAW


@pytest.mark.django_db
def test_the_live_view_counts_entrants_and_shows_the_outcome(flushes):
    from orders.selectors import sale_figures

    sale = make_draw_sale(stock=1)
    enter_all(make_users(3), sale)
    figures = sale_figures(sale=sale)["draw"]
    assert figures["entrants"] == 3 and sum(p["entries"] for p in figures["entriesPerSecond"]) == 3
    assert not figures["drawn"] and "not drawn yet" in figures["outcome"]
    assert sale_figures(sale=sale)["inFlight"] == 0  # entrants are not reservations
    window_over(sale)
    draw_service.sale_draw(sale_id=sale.pk)
    assert sale_figures(sale=sale)["draw"]["outcome"] == "winners: 1; entrants: 3"


@pytest.mark.django_db
def test_the_merchant_audits_the_draw_in_the_admin_and_the_seed_stays_secret_until_drawn(client, flushes):
    sale = make_draw_sale(stock=1)
    client.force_login(sale.goods.owner)
    draw = SaleDraw.objects.get(sale=sale)
    seed = draw_seed.seed_reveal(nonce=draw.seed_nonce, sha256=draw.seed_sha256)
    page = client.get(f"/admin/sales/saledraw/{draw.pk}/change/")
    assert page.status_code == 200 and draw.seed_sha256 in page.content.decode()
    assert seed not in page.content.decode()
    enter_all(make_users(2), sale)
    window_over(sale)
    draw_service.sale_draw(sale_id=sale.pk)
    assert SaleDraw.objects.get(pk=draw.pk).seed == seed
    assert seed in client.get(f"/admin/sales/saledraw/{draw.pk}/change/").content.decode()
    other = make_draw_sale(stock=1)  # another merchant's draw is a 404
    assert client.get(f"/admin/sales/saledraw/{SaleDraw.objects.get(sale=other).pk}/change/").status_code in (302, 404)


@pytest.mark.django_db
def test_a_draw_whose_key_is_gone_waits_and_is_made_once_the_key_is_a_fallback(settings, flushes):
    """Drawing under another key would break the published hash: the draw waits, counted for
    the alert, and the entries with it; configured again as a fallback, the key draws."""
    sale = make_draw_sale(stock=1)
    enter_all(make_users(3), sale)
    window_over(sale)
    old_key = settings.SECRET_KEY
    settings.SECRET_KEY = "rotated-" + "k" * 50
    assert draw_service.sale_draw(sale_id=sale.pk).state == "key_lost"
    assert SaleDraw.objects.get(sale=sale).drawn_at is None and flushes == []
    settings.SECRET_KEY_FALLBACKS = [old_key]
    assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"
    assert SaleDraw.objects.get(sale=sale).winner_ids == recomputed(sale)


@pytest.mark.django_db
def test_the_published_draw_reproduces_the_winners_and_is_kept_in_the_cache(client, flushes):
    sale = make_draw_sale(stock=2)
    before = client.get("/seckill/draw", {"goodsId": sale.pk}).json()["data"]
    keys_before = {"saleId", "seedSha256", "drawAt", "drawWindowS", "entriesOpenAt", "drawn"}
    assert set(before) == keys_before  # no seed, no lists yet
    enter_all(make_users(5), sale)
    window_over(sale)
    draw_service.sale_draw(sale_id=sale.pk)
    published = client.get("/seckill/draw", {"goodsId": sale.pk}).json()["data"]
    seed = published["seed"]
    assert hashlib.sha256(seed.encode()).hexdigest() == before["seedSha256"]
    rank = lambda i: (hashlib.sha256(f"{seed}:{i}".encode()).hexdigest(), i)  # noqa: E731 (docs/draw.md's lines)
    assert sorted(published["entrantIds"], key=rank)[: published["units"]] == published["winnerIds"]
    assert (published["entrants"], published["units"]) == (5, 2)
    SaleDraw.objects.filter(sale=sale).update(winner_ids=[])  # a later change of the row is not served:
    assert client.get("/seckill/draw", {"goodsId": sale.pk}).json()["data"]["winnerIds"] == published["winnerIds"]
    assert client.get("/seckill/draw", {"goodsId": make_sale().pk}).status_code == 404


@pytest.mark.django_db
def test_a_draw_due_within_the_hour_gets_its_eta_task_and_the_sweep_draws_any(published):
    near = make_sale(stock=1, starts_in=60, warm=False, admission=Admission.DRAW)
    far = make_sale(stock=1, starts_in=2 * 3600, warm=False, admission=Admission.DRAW)
    for sale in (near, far):
        draw_seed_ensure(sale=sale)
        sale_open(sale_id=sale.pk)
    assert ("seckill.sale_draw", {"sale_id": near.pk}) in published
    assert ("seckill.sale_draw", {"sale_id": far.pk}) not in published
    due = make_draw_sale(stock=1)
    enter_all(make_users(2), due)
    window_over(due)
    assert draw_service.draws_due() == [due.pk]  # beat's sweep, with no ETA task
    assert draw_service.draws_due() == []


@pytest.mark.django_db
def test_a_drawn_sale_that_redis_lost_is_rebuilt_without_applying_the_draw_again(flushes):
    """Redis loses every key of a drawn sale (a restart without persistence) after a winner
    cancelled; the rebuild reads PostgreSQL. The cancelled winner gets nothing back, the
    returned unit stays with the next entrant it was offered to (orders.reoffer), and the
    drawn mark comes from applied_at."""
    from orders.services import order_cancel
    from seckill.services.reconcile import stock_warm

    sale = make_draw_sale(stock=2)
    users = make_users(5)
    enter_all(users, sale)
    window_over(sale)
    assert draw_service.sale_draw(sale_id=sale.pk).state == "drawn"
    assert writer.sale_flush(sale_id=sale.pk).created == 2
    assert SaleDraw.objects.get(sale=sale).applied_at is not None
    quitter = SaleDraw.objects.get(sale=sale).winner_ids[0]
    assert order_cancel(order_id=SeckillOrder.objects.get(sale=sale, user_id=quitter).order_id, reason="test")

    for key in client().scan_iter(match=keys.pattern(sale.pk)):  # every key under the sale's hash tag
        client().delete(key)
    sale_state.process_marks_clear()
    stock_warm(sale_id=sale.pk)

    assert sale_state.drawn(sale.pk)
    assert draw_service.sale_draw(sale_id=sale.pk).state == "done"
    assert redis_invariants(sale) == {"stock": 0, "reserved": 0, "buyers": 2}
    offered = SaleDrawOffer.objects.get(draw__sale=sale)
    assert client().sismember(keys.buyers(sale.pk), str(offered.user_id))
    latecomer = make_users(1)[0]
    assert attempt(latecomer, sale).code is SaleCode.ENTRIES_CLOSED  # the unit came back to the list
    assert selectors.seckill_result(user_id=quitter, sale_id=sale.pk) != 0  # not "queued" again


@pytest.mark.django_db
def test_a_draw_whose_mark_redis_lost_is_not_applied_again_even_before_a_rebuild(
    flushes, django_capture_on_commit_callbacks
):
    from orders.services import order_cancel

    sale = make_draw_sale(stock=1)
    users = make_users(3)
    enter_all(users, sale)
    window_over(sale)
    draw_service.sale_draw(sale_id=sale.pk)
    writer.sale_flush(sale_id=sale.pk)
    winner = SaleDraw.objects.get(sale=sale).winner_ids[0]
    with django_capture_on_commit_callbacks(execute=True):
        assert order_cancel(order_id=SeckillOrder.objects.get(sale=sale, user_id=winner).order_id, reason="test")
    client().delete(keys.drawn(sale.pk), keys.won(sale.pk))

    assert draw_service.sale_draw(sale_id=sale.pk).state == "done"
    assert sale_state.drawn(sale.pk)
    # The winner's unit went to the next entrant; the draw's winner got nothing back.
    assert redis_invariants(sale) == {"stock": 0, "reserved": 0, "buyers": 1}
    assert client().smembers(keys.buyers(sale.pk)) == {str(SaleDrawOffer.objects.get().user_id).encode()}


@pytest.mark.django_db
def test_units_cannot_be_removed_between_the_draw_and_its_application(flushes):
    from sales.services import StockShortage, sale_update

    sale = make_draw_sale(stock=3)
    enter_all(make_users(4), sale)
    window_over(sale)
    SaleDraw.objects.filter(sale=sale).update(drawn_at=timezone.now(), winner_ids=[], units=0)  # stored, not applied
    with pytest.raises(StockShortage):
        sale_update(sale=sale, changes={}, stock_delta=-1)
    assert Sale.objects.get(pk=sale.pk).stock_count == 3
