"""`make fairness`'s figures: the population it replays, the timeline that runs it, how the
HTTP driver reads the shop's answers, and the line and outcome each seed reports."""

import json
import math
import random
import threading
import time

import psutil
import pytest
import requests

from lab.fairness import run_line
from lab.fairness_http import (
    CODE,
    answer_name,
    cpu_used,
    envelope,
    machine_busy,
    percentile,
    retry_after,
    wrong,
)
from lab.opening import Actor, Replay, outcome, population
from seckill.captcha import ANSWER_MAX
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user


def response(status: int, body: bytes = b"", headers: dict | None = None) -> requests.Response:
    answer = requests.Response()
    answer.status_code, answer._content = status, body
    answer.headers.update(headers or {})
    return answer


# --- the population ---------------------------------------------------------------------------


def test_the_population_is_the_same_for_a_seed_and_another_for_another():
    def starts(seed: int) -> list[float]:
        return [a.start for a in population(seed=seed, people=list(range(50)), scripts=[100, 101], solve_rate=0.9)]

    assert starts(3) == starts(3)
    assert starts(3) != starts(4)


def test_people_arrive_around_a_second_and_a_half_and_scripts_at_once():
    actors = population(seed=1, people=list(range(2000)), scripts=list(range(5000, 5100)), solve_rate=0.7)
    people = [a for a in actors if not a.script]
    scripts = [a for a in actors if a.script]
    assert [a.user_id for a in people] == list(range(2000)) and len(scripts) == 100
    median = sorted(a.start for a in people)[len(people) // 2]
    assert 1.35 < median < 1.65  # lognormal around log(1.5)
    assert all(0 <= a.start <= 0.05 and a.solve == (0.1, 0.1) and a.right == 0.7 for a in scripts)
    assert all(a.solve == (3.0, 8.0) and a.right == 0.95 for a in people)
    assert len({a.rng.random() for a in actors}) == len(actors)  # each its own stream


# --- the replay ---------------------------------------------------------------------------------


def actor(user_id: int) -> Actor:
    return Actor(user_id, False, 0.0, (0.0, 0.0), 1.0, random.Random(user_id))


def test_steps_run_in_their_time_order_and_a_step_pushes_the_next():
    replay = Replay(t0=time.time(), timeout=5.0, workers=1)
    done: list[tuple[int, str]] = []

    def step(who: Actor, name: str) -> None:
        done.append((who.user_id, name))
        if name == "page":
            replay.push(who, replay.now() + 0.01, "buy")

    replay.push(actor(2), 0.06, "page")
    replay.push(actor(1), 0.02, "page")
    replay.run(step)
    assert done == [(1, "page"), (1, "buy"), (2, "page"), (2, "buy")]
    assert len(replay.lags) == 4 and all(lag >= 0 for lag in replay.lags)


def test_the_replay_stops_at_its_timeout_leaving_later_steps_unrun():
    replay = Replay(t0=time.time(), timeout=0.2)
    done: list[str] = []
    replay.push(actor(1), 0.0, "now")
    replay.push(actor(1), 30.0, "much later")
    started = time.monotonic()
    replay.run(lambda who, name: done.append(name))
    assert done == ["now"]
    assert time.monotonic() - started < 5


def test_a_step_that_raises_fails_the_replay():
    replay = Replay(t0=time.time(), timeout=5.0)
    replay.push(actor(1), 0.0, "broken")

    def step(who: Actor, name: str) -> None:
        raise KeyError(name)

    with pytest.raises(KeyError, match="broken"):
        replay.run(step)


def test_steps_run_side_by_side_on_the_pool():
    replay = Replay(t0=time.time(), timeout=5.0, workers=4)
    both = threading.Barrier(2, timeout=3)
    for user in (1, 2):
        replay.push(actor(user), 0.0, "wait for the other")
    replay.run(lambda who, name: both.wait())  # one worker at a time would break the barrier


def test_now_is_seconds_since_the_opening_on_the_given_clock():
    assert Replay(t0=100.0, timeout=1.0, clock=lambda: 112.5).now() == 12.5


# --- the HTTP driver's readings ------------------------------------------------------------------


def test_percentile_is_the_value_at_that_fraction_of_the_sorted_values():
    values = [float(v) for v in range(10, 0, -1)]
    assert (percentile(values, 0.5), percentile(values, 0.99), percentile(values, 0.0)) == (6.0, 10.0, 1.0)
    assert percentile([], 0.5) == 0.0


def test_an_answer_is_named_by_its_code_else_its_status():
    assert answer_name(CODE["SOLD_OUT"], response(200)) == "SOLD_OUT"
    assert answer_name(0, None) == "SUCCESS"
    assert answer_name(None, response(502)) == "HTTP 502"
    assert answer_name(123456789, response(200)) == "HTTP 200"
    assert answer_name(None, None) == "none"


def test_the_envelope_is_the_code_and_the_data_when_it_is_a_mapping():
    assert envelope(response(200, json.dumps({"code": 0, "data": {"orderId": 5}}).encode())) == (0, {"orderId": 5})
    assert envelope(response(200, json.dumps({"code": 500500, "data": 3}).encode())) == (500500, {})
    assert envelope(response(200, b"[1, 2]")) == (None, {})
    assert envelope(response(502, b"<html>Bad gateway</html>")) == (None, {})
    assert envelope(None) == (None, {})


def test_retry_after_is_the_header_at_least_a_fifth_of_a_second():
    assert retry_after(response(429, headers={"Retry-After": "3"})) == 3.0
    assert retry_after(response(429, headers={"Retry-After": "0"})) == 0.2
    assert retry_after(response(429)) == 1.0
    assert retry_after(response(429, headers={"Retry-After": "Wed, 02 Dec 2026 07:00:00 GMT"})) == 1.0


def test_a_wrong_answer_differs_and_stays_within_the_captchas_bounds():
    assert wrong(12) == 13
    assert wrong(ANSWER_MAX) == ANSWER_MAX - 1


def test_cpu_is_counted_process_by_process_between_two_snapshots():
    before = {1: ("web", 10.0), 2: ("celery", 4.0), 3: ("web", 1.0)}
    after = {1: ("web", 12.5), 2: ("celery", 4.5), 4: ("web", 0.75)}  # 3 exited, 4 started
    assert cpu_used(before, after) == {"web": 3.25, "celery": 0.5}


def test_the_machine_share_busy_counts_iowait_as_idle():
    before = psutil.cpu_times()
    zero = before._replace(**{name: 0.0 for name in before._fields})
    after = zero._replace(user=30.0, system=10.0, idle=50.0, iowait=10.0)
    assert math.isclose(machine_busy(zero, after), 0.4)
    assert machine_busy(zero, zero) == 0.0


# --- each seed's line and outcome ----------------------------------------------------------------


SEED = {
    "scripts": 10,
    "people": 40,
    "orders": 50,
    "entrants": 300,
    "script_entrants": 60,
    "duplicates": 0,
    "stock_left": 0,
    "oversold": False,
    "undrawn_orders": 0,
    "late": 0,
    "ok": True,
}


def test_a_seeds_line_gives_the_scripts_ratio_to_their_share_and_a_persons_chance():
    line = run_line("fcfs", 3, SEED, share=0.25, people=400)
    assert line == (
        "  fcfs seed 3: scripts  10, people  40, ratio 0.80, a person's chance 0.100;"
        " orders 50, duplicates 0, stock left 0, unfinished 0: ok"
    )


def test_a_draws_line_adds_its_entrants_and_a_broken_run_says_so():
    result = SEED | {"oversold": True, "undrawn_orders": 2, "late": 5, "ok": False}
    line = run_line("draw", 1, result, share=0.25, people=400)
    assert "ratio 0.80" in line
    assert "entrants 300 (scripts 60: a fair draw's ratio 0.80)" in line
    assert line.endswith(", OVERSOLD, orders of shoppers not drawn 2, unfinished 5: VIOLATED")


def test_a_seed_without_orders_divides_by_one():
    line = run_line("fcfs", 0, SEED | {"orders": 0, "scripts": 0, "people": 0}, share=0.5, people=10)
    assert "ratio 0.00, a person's chance 0.000" in line


@pytest.mark.django_db(transaction=True)
def test_the_outcome_counts_scripts_and_people_among_the_buyers_and_holds_a_sold_out_sale_ok():
    sale = make_sale(stock=3)
    users = [make_user() for _ in range(4)]
    actors = [Actor(u.pk, i == 0, 0.0, (0.0, 0.0), 1.0, random.Random(i)) for i, u in enumerate(users)]
    for who in users[:3]:
        buy(sale=sale, user=who)
    for who in actors[:3]:
        who.outcome = "ordered"
    result = outcome(sale_id=sale.pk, actors=actors, units=3)
    assert (result["orders"], result["scripts"], result["people"]) == (3, 1, 2)
    assert (result["stock_left"], result["duplicates"], result["entrants"], result["late"]) == (0, 0, 0, 1)
    assert sorted(result["winners"]) == sorted(u.pk for u in users[:3])
    assert (result["oversold"], result["stranded"], result["ok"]) == (False, 0, True)


@pytest.mark.django_db(transaction=True)
def test_a_sale_not_sold_out_is_no_ok_outcome():
    sale = make_sale(stock=3)
    buyer = make_user()
    buy(sale=sale, user=buyer)
    result = outcome(sale_id=sale.pk, actors=[Actor(buyer.pk, False, 0, (0, 0), 1, random.Random(1))], units=3)
    assert (result["orders"], result["stock_left"], result["oversold"], result["ok"]) == (1, 2, False, False)
