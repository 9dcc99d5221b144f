"""How `make faults` turns a burst's answers and the sale's state into its row (lab/faults.py
Run.settle_and_check), on the test database and Redis: errors inside a fault's window and its
grace are the fault's cost, any outside fail the row, and the invariants come from the sale."""

import time

import pytest

from lab.faults import Run
from lab.shopper import Answer
from testutils.factories.orders import buy
from testutils.factories.users import make_user
from users.models import User

pytestmark = pytest.mark.django_db(transaction=True)


def answer(user_id: int, at: float, status: int = 200, code: int | None = 0, msg: str = "queued") -> Answer:
    return Answer(user_id, at, status, code, msg, finished=at + 0.1)


def test_a_whole_sale_with_errors_only_inside_the_window_passes():
    run = Run(None, shoppers=0, stock=0)
    sale = run.sale(3)
    buyers = [make_user() for _ in range(2)]
    for user in buyers:
        buy(sale=sale, user=user)
    now = time.monotonic()
    run.fault(now - 10, now - 8)
    answers = [answer(u.pk, now - 12) for u in buyers]
    answers += [answer(0, now - 9, 503, None, "busy"), answer(0, now - 8 + 5.9, 0, None, "reset")]  # grace
    row = run.settle_and_check("redis restart", sale, answers, initial=3)
    assert (row.requests, row.accepted, row.orders, row.oversold, row.stranded, row.lost) == (4, 2, 2, 0, 0, 0)
    assert row.errors_outside_window == 0 and row.ok
    assert row.notes.startswith("db 1 redis 1; queued then -1: 0; reconciler finished 0")
    assert run.fault_windows == []  # the next row starts with none


def test_an_error_outside_every_window_fails_the_row_and_is_named():
    run = Run(None, shoppers=0, stock=0)
    sale = run.sale(2)
    now = time.monotonic()
    run.fault(now - 30, now - 28)
    answers = [answer(0, now - 28 + 6.5, 502, None, "Bad Gateway"), answer(0, now - 40, 0, None, "refused")]
    row = run.settle_and_check("postgres outage", sale, answers, initial=2)
    assert row.errors_outside_window == 2 and not row.ok
    assert "outside the window (up to 6.5s after it)" in row.notes
    assert "(502, 'Bad Gateway'): 1" in row.notes and "(0, 'refused'): 1" in row.notes


def test_without_a_fault_every_error_is_outside_and_a_queued_shopper_never_reserved_is_told_failed():
    run = Run(None, shoppers=0, stock=0)
    sale = run.sale(2)
    told = make_user()
    row = run.settle_and_check("stranded", sale, [answer(told.pk, 1.0), answer(0, 2.0, 500, None, "boom")],
                               initial=2)  # fmt: skip
    assert row.errors_outside_window == 1 and "with no fault injected: {(500, 'boom'): 1}" in row.notes
    assert (row.accepted, row.told_failed, row.lost) == (1, 1, 0)  # "queued", then -1: reported, not lost
    assert "queued then -1: 1" in row.notes
    assert not row.ok


def test_the_fault_suites_sale_is_open_and_loaded_and_its_merchant_made_once():
    run = Run(None, shoppers=0, stock=0)
    first, second = run.sale(4), run.sale(1)
    assert first.goods.owner_id == second.goods.owner_id
    assert User.objects.filter(mobile="19900000000").count() == 1
    from sales import sale_state

    assert sale_state.stock_left([first.pk, second.pk]) == {first.pk: 4, second.pk: 1}
