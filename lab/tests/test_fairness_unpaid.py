"""`make fairness`'s unpaid opening (lab/fairness.py, `--modes unpaid`): a third of the draw's
winners do not pay and their units go down the published ranking while the scripts keep trying.
The checks are pure and tested here on a made-up draw; the slow tests run the opening on a
tiny population in process and over HTTP against the deployment (lab/fairness_http.py)."""

import random

import pytest

from lab.fairness import run_in_process
from lab.fairness_http import Opening
from lab.opening import MERCHANT_MOBILE, Actor, reoffer_failures, shoppers
from orders.models import Order, OrderStatus
from orders.services import REASON_EXPIRED
from sales.draw_ranking import ranked
from sales.models import OfferOutcome, SaleDraw, SaleDrawOffer
from testutils.processes import ROOT, child_database_url
from users.models import User

SEED = "0f" * 16
ENTRANTS = list(range(1, 11))
RANKING = ranked(SEED, ENTRANTS)
WINNERS, WAITING = RANKING[:3], RANKING[3:]


def check(offers: list[tuple[int, int]], *, returned: int, holders: list[int]) -> list[str]:
    return reoffer_failures(
        seed=SEED, entrant_ids=ENTRANTS, winner_ids=WINNERS, offers=offers, returned=returned, holders=holders
    )


def test_units_offered_to_the_next_in_rank_pass():
    offers = [(4, WAITING[0]), (5, WAITING[1])]
    assert check(offers, returned=2, holders=[WINNERS[0], WAITING[0], WAITING[1]]) == []


def test_an_offer_out_of_rank_fails():
    lines = check([(5, WAITING[1])], returned=1, holders=[WINNERS[0], WINNERS[1], WAITING[1]])
    assert lines == [f"the offers [(5, {WAITING[1]})] are not the next in the published ranking [(4, {WAITING[0]})]"]


def test_a_returned_unit_not_offered_and_sold_to_someone_else_fails():
    script = 500_000_001
    lines = check([], returned=1, holders=[WINNERS[0], WINNERS[1], script])
    assert lines == [
        "1 units came back but 0 were offered (7 waiting)",
        f"units went to shoppers outside the waiting list's turn: [{script}]",
    ]


def test_a_unit_held_twice_fails():
    lines = check([(4, WAITING[0])], returned=1, holders=[WINNERS[0], WAITING[0], WAITING[0]])
    assert lines == [f"a shopper holds two units: [{WAITING[0]}]"]


def test_once_the_list_is_exhausted_anyone_may_buy_what_comes_back():
    everyone = [(rank, user_id) for rank, user_id in enumerate(RANKING, start=1)][3:]
    assert check(everyone, returned=9, holders=[*WAITING, 500_000_001, 500_000_002, 500_000_003]) == []


def tiny_population(people: int, scripts: int) -> list[Actor]:
    """Fast people, all in a 5-second window; scripts that always read the captcha right."""
    rng = random.Random(3)
    actors = [
        Actor(u, False, rng.uniform(0.1, 0.5), (0.2, 0.4), 1.0, random.Random(rng.random()))
        for u in shoppers(people, 0)
    ]
    actors += [
        Actor(u, True, rng.uniform(0, 0.05), (0.1, 0.1), 1.0, random.Random(rng.random()))
        for u in shoppers(scripts, 500_000_000)
    ]
    return actors


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_unpaid_opening_offers_every_returned_unit_down_the_ranking():
    User.objects.create(mobile=MERCHANT_MOBILE, nickname="fairness merchant")
    actors = tiny_population(8, 4)
    result = run_in_process(mode="unpaid", actors=actors, units=6, window=5, timeout=25)
    assert result["entrants"] == 12
    assert (result["returned"], result["offers"], result["reoffer_problems"]) == (2, 2, [])
    assert result["ok"], result["problems"]
    assert sum(result["after_return"].values()) > 0  # the scripts were still trying


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_over_http_the_deployment_expires_the_walkers_and_the_offered_entrants_pay():
    """Over HTTP the deployment's beat closes the orders of the winners who let the window pass,
    its re-offer hands their units down the ranking, the other winners and the offered entrants
    pay through the API at the Alipay stand-in, and the scripts buy on until that is settled."""
    User.objects.create(mobile=MERCHANT_MOBILE, nickname="fairness merchant")
    actors = tiny_population(6, 4)
    opening = Opening(
        log_dir=ROOT / ".run" / "test-fairness-unpaid", web_workers=1, web_threads=4, celery_concurrency=1,
        clients=10, env={"DATABASE_URL": child_database_url()},
    )  # fmt: skip
    try:
        opening.start(user_ids=[a.user_id for a in actors])
        result = opening.run(mode="unpaid", actors=actors, units=6, window=5, timeout=50)
    finally:
        opening.stop()

    assert result["entrants"] == 10
    assert (result["returned"], result["offers"], result["reoffer_problems"]) == (2, 2, [])
    assert result["ok"], result["problems"]
    assert result["errors"] == 0 and result["late"] == 0, result["context"]
    assert (result["paid"], result["offers_paid"]) == (6, 2)  # 4 winners who kept theirs, 2 offered
    assert sum(result["after_return"].values()) > 0  # the scripts were still trying
    draw = SaleDraw.objects.get(sale_id=result["sale_id"])
    cancelled = Order.objects.filter(sale_id=result["sale_id"], status=OrderStatus.CANCELLED)
    assert sorted(cancelled.values_list("user_id", flat=True)) == sorted(draw.winner_ids[2::3])
    assert set(cancelled.values_list("cancel_reason", flat=True)) == {REASON_EXPIRED}
    offers = SaleDrawOffer.objects.filter(draw=draw)
    assert set(offers.values_list("outcome", flat=True)) == {OfferOutcome.PAID}
