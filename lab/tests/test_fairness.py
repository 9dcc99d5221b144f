"""`make fairness`'s HTTP driver (lab/fairness_http.py) end to end on a tiny population: the
deployment (granian, a Celery worker, beat) on the test database, shoppers as HTTP clients of the
API, one opening first come, first served and one with a draw. The long runs are `make fairness`;
this checks that the driver's clients really buy, see their results, and that what they saw is
what PostgreSQL holds."""

import random
from collections import Counter

import pytest

from lab.fairness_http import Opening
from lab.opening import MERCHANT_MOBILE, Actor, shoppers
from sales.draw_ranking import winners_of
from sales.models import SaleDraw
from testutils.processes import ROOT, child_database_url
from users.models import User

UNITS = 3


def tiny_population(people: list[int], scripts: list[int]) -> list[Actor]:
    """Fast people (in well under a second) so every one of them is in a 5-second draw window;
    scripts that always read the captcha right."""
    rng = random.Random(7)
    actors = [Actor(u, False, rng.uniform(0.2, 1.0), (0.3, 0.6), 1.0, random.Random(rng.random())) for u in people]
    actors += [Actor(u, True, rng.uniform(0, 0.05), (0.1, 0.1), 1.0, random.Random(rng.random())) for u in scripts]
    return actors


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_http_driver_buys_through_a_deployment_and_sees_what_postgresql_holds():
    User.objects.create(mobile=MERCHANT_MOBILE, nickname="fairness merchant")
    people, scripts = shoppers(4, 0), shoppers(4, 500_000_000)
    opening = Opening(
        log_dir=ROOT / ".run" / "test-fairness", web_workers=1, web_threads=4, celery_concurrency=1, clients=8,
        env={"DATABASE_URL": child_database_url()},
    )  # fmt: skip
    try:
        opening.start(user_ids=[*people, *scripts])
        first = opening.run(
            mode="fcfs", actors=tiny_population(people, scripts), units=UNITS, window=5, timeout=25
        )  # fmt: skip
        actors = tiny_population(people, scripts)
        drawn = opening.run(mode="draw", actors=actors, units=UNITS, window=5, timeout=30)
    finally:
        opening.stop()

    for result in (first, drawn):
        assert result["ok"], result
        assert result["orders"] == UNITS and result["duplicates"] == 0 and result["stock_left"] == 0
        assert result["late"] == 0, "every client finished: ordered, not drawn or sold out"
        assert result["errors"] == 0, result["context"]
    # The draw was the deployment's, of everyone who entered in the window over HTTP; the
    # clients told "ordered" are its published winners, the others were told "not drawn".
    draw = SaleDraw.objects.get(sale_id=drawn["sale_id"])
    assert drawn["buy_answers"]["ENTERED"] == len(actors), drawn["buy_answers"]  # each entered once
    assert sorted(draw.entrant_ids) == sorted([*people, *scripts])
    assert sorted(draw.winner_ids) == sorted(winners_of(draw.seed, draw.entrant_ids, UNITS))
    assert sorted(drawn["winners"]) == sorted(draw.winner_ids)
    seen = {a.user_id: a.outcome for a in actors}
    assert sorted(u for u, what in seen.items() if what == "ordered") == sorted(draw.winner_ids)
    assert {what for u, what in seen.items() if u not in draw.winner_ids} == {"not drawn"}


def test_a_draw_that_took_no_entries_or_misses_its_target_fails_the_run():
    """A draw seed nobody entered ran first come, first served: its figures measure no draw, and
    the run says so (with the buys' answers) instead of averaging them in; the draw's ratio over
    the seeds above its target fails the run too."""
    from lab.fairness import DRAW_RATIO_TARGET, failures

    share = 0.25  # 100 scripts of 400 accounts
    fair = {"sale_id": 1, "entrants": 380, "scripts": 12, "orders": 50}  # ratio 0.96
    first_come = {"sale_id": 2, "entrants": 0, "scripts": 50, "orders": 50,
                  "buy_answers": Counter({"SOLD_OUT": 300, "SUCCESS": 50})}  # fmt: skip
    assert failures([(0, fair), (1, dict(fair, scripts=15))], share=share) == []  # 1.08

    lines = failures([(0, fair), (1, first_come)], share=share)
    assert lines[0] == (
        "draw seed 1 took no entries: its opening ran first come, first served, so it measures no draw "
        "(sale 2; the buys were answered: SOLD_OUT 300, SUCCESS 50)"
    )
    assert lines[1] == f"the draw's ratio over 2 seeds is 2.48, above the target {DRAW_RATIO_TARGET:.2f}"
    assert failures([(0, dict(fair, scripts=15)), (1, dict(fair, scripts=16))], share=share) == [
        "the draw's ratio over 2 seeds is 1.24, above the target 1.15"
    ]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_http_driver_waits_in_the_room_until_let_in_then_buys():
    """Behind a waiting room each client's first captcha is its arrival (the pre-queue or the
    line), it asks again until let in, and only then buys: no buy is turned back to the room,
    every unit is sold once, and the clients left waiting are told when the stock is gone."""
    from lab.opening import RoomPlan, room_population

    User.objects.create(mobile=MERCHANT_MOBILE, nickname="fairness merchant")
    people, scripts = shoppers(4, 0), shoppers(8, 500_000_000)
    opening = Opening(
        log_dir=ROOT / ".run" / "test-fairness-room", web_workers=1, web_threads=4, celery_concurrency=1,
        clients=12, env={"DATABASE_URL": child_database_url()},
    )  # fmt: skip
    plan = RoomPlan(lead=5.0, admit_per_minute=60, prequeue_share=0.5)
    actors = room_population(seed=3, people=people, scripts=scripts, solve_rate=1.0, prequeue_share=0.5, lead=5.0)
    try:
        opening.start(user_ids=[*people, *scripts])
        result = opening.run(mode="room", actors=actors, units=UNITS, window=5, timeout=45, room=plan)
    finally:
        opening.stop()

    assert result["ok"], result
    assert result["orders"] == UNITS and result["duplicates"] == 0 and result["stock_left"] == 0
    assert result["errors"] == 0 and result["late"] == 0, result["context"]
    assert (result["arrived"], result["people_arrived"]) == (12, 4)
    assert 0 < result["prequeue"] < 12 and UNITS <= result["admitted"] <= 12
    assert "IN_WAITING_ROOM" not in result["buy_answers"], result["buy_answers"]
    assert {a.outcome for a in actors} <= {"ordered", "sold out", "sold_out"}
