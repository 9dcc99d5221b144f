"""When the waiting page asks again (waitingroom.answers.refresh_seconds), on real Redis: at the
shopper's turn when it comes sooner than the usual interval, so the head of a line that arrived
together is let through one at a time. The clock is the `now` every call takes."""

import heapq
import time

import pytest

from testutils.factories.sales import make_sale
from waitingroom.answers import REFRESH_SECONDS, refresh_seconds, status_data
from waitingroom.queue import ADMITTED, PREQUEUE, place
from waitingroom.room import Room, room_write

pytestmark = pytest.mark.django_db


def _room(sale_id: int, **fields) -> None:
    room_write(sale_id, Room(on=True, pass_seconds=600, **fields))


def test_a_shopper_near_the_head_is_asked_back_at_their_turn():
    sale = make_sale(stock=100)
    start = int(time.time())
    _room(sale.pk, starts_at=start, admit_per_minute=60)
    for user_id in range(1, 11):
        place(sale.pk, user_id, now=start)
    # The first went in at once; the one at #p waits p - 1 seconds at one a second.
    waits = {user_id: status_data(place(sale.pk, user_id, now=start))["refreshSeconds"] for user_id in range(2, 11)}
    assert waits == {2: 1, 3: 2, 4: 3, 5: 4, 6: 5, 7: 5, 8: 5, 9: 5, 10: 5}


def test_the_usual_interval_holds_when_no_turn_can_be_foreseen():
    sale = make_sale(stock=100)
    start = int(time.time())
    _room(sale.pk, opens_at=start - 60, starts_at=start + 60, admit_per_minute=60)
    assert refresh_seconds(place(sale.pk, 1, now=start)) == REFRESH_SECONDS  # in the pre-queue
    assert place(sale.pk, 1, now=start).state == PREQUEUE
    stopped = make_sale(stock=100)
    _room(stopped.pk, starts_at=start, admit_per_minute=60, stop=True)
    for user_id in range(1, 4):
        found = place(stopped.pk, user_id, now=start)
    assert found.eta_seconds is None and refresh_seconds(found) == REFRESH_SECONDS
    unpaced = make_sale(stock=100)
    _room(unpaced.pk, starts_at=start, active_max=1)
    for user_id in range(1, 4):
        found = place(unpaced.pk, user_id, now=start)
    # A cap alone: the turnover of ten-minute passes puts the third's turn far off.
    assert found.eta_seconds > REFRESH_SECONDS and refresh_seconds(found) == REFRESH_SECONDS


def _turns_learnt(sale_id: int, start: float, crowd: int, every) -> list[float]:
    """A crowd joining within 40 ms at `start`, each polling `every(place)` seconds after their
    last poll as the page does: when each learnt they were admitted, in order."""
    due = [(start + 0.002 * user_id, user_id) for user_id in range(1, crowd + 1)]
    heapq.heapify(due)
    learnt = []
    while due:
        at, user_id = heapq.heappop(due)
        found = place(sale_id, user_id, now=at)
        if found.state == ADMITTED:
            learnt.append(at)
        elif at < start + 120:
            heapq.heappush(due, (at + every(found), user_id))
    return sorted(learnt)


def test_the_head_of_a_line_that_came_together_is_let_through_one_at_a_time():
    """At one a second, the shoppers polling as told learn their turn a second apart and within
    a second of it; polling every REFRESH_SECONDS, they learn it five at a time."""
    start = int(time.time())
    told, fixed = make_sale(stock=100), make_sale(stock=100)
    for sale in (told, fixed):
        _room(sale.pk, starts_at=start, admit_per_minute=60)
    as_told = _turns_learnt(told.pk, start, 20, refresh_seconds)
    every_five = _turns_learnt(fixed.pk, start, 20, lambda found: REFRESH_SECONDS)
    assert len(as_told) == len(every_five) == 20
    # The k-th went in at start + k - 1 (the bucket's first token is there at once).
    assert all(at - (start + k) < 1.1 for k, at in enumerate(as_told)), as_told
    gaps = [later - earlier for earlier, later in zip(as_told, as_told[1:], strict=False)]
    assert min(gaps) > 0.5, as_told
    together = [later - earlier for earlier, later in zip(every_five, every_five[1:], strict=False)]
    assert sum(gap < 0.1 for gap in together) >= 10, every_five
