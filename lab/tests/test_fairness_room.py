"""`make fairness`'s waiting-room opening (lab/fairness.py, `--modes room`): who arrives when,
what the room holds afterwards, and the verdict, people's share of the units against their
share of the arrivals."""

import time

import pytest

from lab.fairness import ROOM_TOLERANCE, room_failures, room_line, room_ratio
from lab.opening import (
    PERSON_POLL_S,
    SCRIPT_POLL_S,
    Actor,
    population,
    room_outcome,
    room_population,
    share_ratio,
)
from testutils.factories.sales import make_sale
from waitingroom.queue import place
from waitingroom.room import Room, room_forget, room_write

PEOPLE, SCRIPTS = list(range(1000)), list(range(10_000, 20_000))


def arrivals(**overrides) -> list[Actor]:
    options = dict(seed=4, people=PEOPLE, scripts=SCRIPTS, solve_rate=0.61, prequeue_share=0.7, lead=10.0)
    return room_population(**(options | overrides))


# --- the arrivals --------------------------------------------------------------------------------


def test_the_share_asked_arrives_in_the_pre_queue_people_and_scripts_alike():
    actors = arrivals()
    for group in ([a for a in actors if not a.script], [a for a in actors if a.script]):
        early = sum(1 for a in group if a.start < 0) / len(group)
        assert 0.65 < early < 0.75, early


def test_the_pre_queue_arrives_between_its_opening_and_the_start():
    early = [a.start for a in arrivals() if a.start < 0]
    assert all(-9.0 <= start <= -0.5 for start in early)
    assert min(early) < -8.5 and max(early) > -1.0  # spread over the whole lead


def test_the_rest_arrive_after_the_start_as_without_a_room_with_their_solving_unchanged():
    plain = {a.user_id: a for a in population(seed=4, people=PEOPLE, scripts=SCRIPTS, solve_rate=0.61)}
    for actor in arrivals():
        same = plain[actor.user_id]
        assert (actor.solve, actor.right, actor.script) == (same.solve, same.right, same.script)
        if actor.start >= 0:
            assert actor.start == same.start


def test_scripts_ask_their_place_more_often_than_a_persons_page_polls():
    actors = arrivals(people=PEOPLE[:5], scripts=SCRIPTS[:5])
    assert {a.poll for a in actors if a.script} == {SCRIPT_POLL_S}
    assert {a.poll for a in actors if not a.script} == {PERSON_POLL_S}
    assert SCRIPT_POLL_S < PERSON_POLL_S


def test_no_pre_queue_share_is_an_opening_where_everyone_comes_after_the_start():
    assert all(a.start >= 0 for a in arrivals(prequeue_share=0.0))
    assert all(a.start < 0 for a in arrivals(prequeue_share=1.0))


def test_the_same_seed_gives_the_same_arrivals_and_another_others():
    def starts(seed: int) -> list[float]:
        return [a.start for a in arrivals(seed=seed, people=PEOPLE[:50], scripts=SCRIPTS[:50])]

    assert starts(1) == starts(1) and starts(1) != starts(2)


# --- the verdict ---------------------------------------------------------------------------------


def test_the_ratio_is_peoples_share_of_units_over_their_share_of_arrivals():
    # People are 300 of 1,300 arrivals and won 120 of 600 units: 0.20 / 0.2308.
    assert share_ratio(people_units=120, units=600, people_arrived=300, arrived=1300) == pytest.approx(0.8667, 1e-3)
    assert share_ratio(people_units=0, units=0, people_arrived=300, arrived=1300) == 0.0
    assert share_ratio(people_units=5, units=10, people_arrived=0, arrived=100) == 0.0


def room_result(*, people: int, orders: int, people_arrived: int, arrived: int, sale_id: int = 9) -> dict:
    return {
        "sale_id": sale_id, "orders": orders, "people": people, "scripts": orders - people,
        "arrived": arrived, "people_arrived": people_arrived, "prequeue": 910, "people_prequeue": 210,
        "admitted": 650, "duplicates": 0, "stock_left": 0, "oversold": False, "late": 0, "ok": True,
    }  # fmt: skip


def test_the_ratio_is_pooled_over_the_seeds():
    rooms = [
        (0, room_result(people=10, orders=100, people_arrived=100, arrived=400)),  # 0.10 / 0.25
        (1, room_result(people=30, orders=100, people_arrived=100, arrived=400)),  # 0.30 / 0.25
    ]
    assert room_ratio(rooms) == pytest.approx(0.8)  # 40/200 over 200/800, not the mean of 0.4 and 1.2


def test_within_15_percent_either_way_stands_and_past_it_fails_the_run():
    assert ROOM_TOLERANCE == 0.15

    def verdict(people: int) -> list[str]:  # people's share of arrivals is 0.25; 100 units
        return room_failures([(0, room_result(people=people, orders=100, people_arrived=100, arrived=400))])

    assert verdict(22) == [] and verdict(28) == []  # 0.88 and 1.12
    assert verdict(21) == [
        "people's share of the units is 0.84 times their share of the arrivals over 1 seeds, not within 15% of it"
    ]
    assert verdict(29) and "1.16 times" in verdict(29)[0]  # people favoured is no fair room either


def test_a_seed_that_sold_nothing_measures_nothing_and_fails_the_run():
    lines = room_failures([(2, room_result(people=0, orders=0, people_arrived=300, arrived=1300, sale_id=7))])
    assert lines == ["room seed 2 sold 0 units to 1300 arrivals (300 people): it measures nothing (sale 7)"]


def test_a_seeds_line_says_who_arrived_who_bought_and_the_ratio():
    line = room_line(1, room_result(people=120, orders=600, people_arrived=300, arrived=1300))
    assert line == (
        "  room seed 1: scripts 480, people 120; arrived 1300 (people 300; in the pre-queue 910, people 210), "
        "let in 650; people's share of units / of arrivals 0.87; orders 600, duplicates 0, stock left 0, "
        "unfinished 0: ok"
    )
    broken = room_result(people=1, orders=2, people_arrived=3, arrived=4) | {"oversold": True, "ok": False}
    assert room_line(1, broken).endswith(", OVERSOLD, unfinished 0: VIOLATED")


# --- what the room holds -------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_rooms_outcome_counts_who_arrived_in_the_pre_queue_and_after_and_who_was_let_in():
    room_forget()
    sale = make_sale(stock=3)
    start = int(time.time()) - 5
    room_write(sale.pk, Room(on=True, opens_at=start - 120, starts_at=start, admit_per_minute=60, pass_seconds=600))
    actors = [Actor(u, u >= 100, 0.0, (0.0, 0.0), 1.0, None, arrived=True) for u in (1, 2, 100, 101, 102)]  # type: ignore[arg-type]
    actors.append(Actor(103, True, 0.0, (0.0, 0.0), 1.0, None))  # type: ignore[arg-type]  # never came
    for user_id in (1, 100, 101):  # before the start: the pre-queue
        place(sale.pk, user_id, now=start - 10)
    for user_id in (2, 102):  # after it: placed in turn behind the shuffled pre-queue
        place(sale.pk, user_id, now=start + 1)
    place(sale.pk, None, now=start + 2)
    held = room_outcome(sale_id=sale.pk, actors=actors)
    assert {k: held[k] for k in ("arrived", "people_arrived", "prequeue", "people_prequeue")} == {
        "arrived": 5, "people_arrived": 2, "prequeue": 3, "people_prequeue": 1,
    }  # fmt: skip
    assert 1 <= held["admitted"] <= 5
    room_forget()
