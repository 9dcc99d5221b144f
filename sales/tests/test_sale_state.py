"""The table of sales.sale_state, transition by transition, against real Redis: each one
acts from the state it starts from and answers a no-op from any other."""

import time
import uuid

import pytest

from sales import sale_state
from sales.sale_state import GiveBack, Refusal, Settle, Settlement, UnitReturn, keys
from seckill_site.redis import client

SALE = 4242
MARK_MS = 5000


@pytest.fixture
def sale():
    """A loaded sale of 5 units, open now."""
    now = time.time()
    assert sale_state.sale_open(sale_id=SALE, stock=5, start=now - 60, end=now + 3600)
    return SALE


def reserve(user_id: int, *, sale_id: int = SALE) -> tuple[sale_state.Reserved, str]:
    path, request_id = uuid.uuid4().hex, uuid.uuid4().hex
    sale_state.path_set(sale_id=sale_id, user_id=user_id, path=path)
    reserved = sale_state.reserve(
        sale_id=sale_id, user_id=user_id, path=path, request_id=request_id, trace="t-1", flush_mark_ms=MARK_MS
    )
    return reserved, request_id


def stock() -> int:
    return sale_state.stock_left([SALE])[SALE]


def buyers() -> set[int]:
    return {int(user) for user in client().smembers(keys.buyers(SALE))}


def claim(token: str, *, lease_ms: int = 30_000) -> sale_state.Claim:
    return sale_state.claim(sale_id=SALE, token=token, size=10, lease_ms=lease_ms, flush_mark_ms=MARK_MS)


def settle(token: str, *settles: Settle) -> tuple[int, int]:
    return sale_state.settle(sale_id=SALE, token=token, settles=list(settles), flush_mark_ms=MARK_MS)


def test_reserve_hands_out_a_unit_once_per_shopper_and_the_first_buy_owes_the_flush(sale):
    first, first_id = reserve(1)
    second, _ = reserve(2)
    again, _ = reserve(1)
    assert (first.refusal, first.left, first.flush_due) == (None, 4, True)
    assert (second.refusal, second.flush_due) == (None, False)  # the mark stands for a flush on its way
    assert again.refusal is Refusal.ALREADY_BOUGHT
    assert client().get(keys.flush(SALE)) == first_id.encode()
    assert stock() == 3 and buyers() == {1, 2}
    assert [(r.user_id, r.trace) for r in sale_state.reservations(SALE) if r.request_id == first_id] == [(1, "t-1")]


def test_the_gate_gives_back_an_unclaimed_reservation_once(sale):
    _reserved, request_id = reserve(1)
    assert sale_state.give_back(sale_id=SALE, user_id=1, request_id=request_id) is GiveBack.GIVEN_BACK
    assert stock() == 5 and buyers() == set() and sale_state.result(sale_id=SALE, user_id=1) is None
    assert not client().exists(keys.flush(SALE))  # the mark it set promised a flush that never went
    assert sale_state.give_back(sale_id=SALE, user_id=1, request_id=request_id) is GiveBack.GONE
    assert stock() == 5


def test_a_claimed_reservation_is_not_given_back_even_after_its_lease(sale):
    _reserved, request_id = reserve(1)
    assert len(claim("writer", lease_ms=0).reservations) == 1
    assert sale_state.give_back(sale_id=SALE, user_id=1, request_id=request_id) is GiveBack.CLAIMED
    assert stock() == 4 and buyers() == {1}


def test_a_claim_is_one_writers_until_its_lease_lapses_and_the_same_token_takes_it_back(sale):
    reserve(1)
    assert len(claim("first").reservations) == 1
    assert claim("second").reservations == []  # held
    assert len(claim("first").reservations) == 1  # a redelivery of the same message
    client().hset(keys.claims(SALE), next(iter(client().hkeys(keys.claims(SALE)))), "first:1")  # lapsed
    assert len(claim("second").reservations) == 1


def test_settle_acts_only_for_the_token_that_holds_the_claim(sale):
    _reserved, request_id = reserve(1)
    claim("first", lease_ms=0)
    claim("second")  # took it over
    assert settle("first", Settle(request_id, 1, Settlement.REFUSED)) == (0, 1)
    assert stock() == 4 and buyers() == {1}
    assert settle("second", Settle(request_id, 1, Settlement.WRITTEN, 77)) == (1, 0)
    assert sale_state.result(sale_id=SALE, user_id=1) == 77 and buyers() == {1}
    assert not client().exists(keys.flush(SALE))  # the last reservation took the mark with it
    assert settle("second", Settle(request_id, 1, Settlement.REFUSED)) == (0, 0)  # gone: nothing twice


@pytest.mark.parametrize(
    ("kind", "stock_after", "buyer_stays", "answer"),
    [
        (Settlement.WRITTEN, 4, True, 77),
        (Settlement.WRITTEN_NOT_LIVE, 4, True, 0),  # the answer is left as it was
        (Settlement.DUPLICATE, 5, True, 77),
        (Settlement.SOLD_OUT, 4, False, -1),
        (Settlement.REFUSED, 5, False, -1),
    ],
)
def test_each_settlement(sale, kind, stock_after, buyer_stays, answer):
    _reserved, request_id = reserve(1)
    claim("writer")
    assert settle("writer", Settle(request_id, 1, kind, 77)) == (1, 0)
    assert stock() == stock_after
    assert (1 in buyers()) is buyer_stays
    assert sale_state.result(sale_id=SALE, user_id=1) == answer


def test_a_unit_returns_once_and_not_after_a_load_since_its_ticket(sale):
    ticket = sale_state.ticket(SALE)
    client().sadd(keys.buyers(SALE), 1)
    client().decr(keys.stock(SALE))  # a unit sold to shopper 1 as order 9
    client().set(keys.result(SALE, 1), 9)
    returned = {"sale_id": SALE, "user_id": 1, "order_id": 9, "request_id": "r9"}
    assert sale_state.unit_return(**returned, ticket=ticket) is UnitReturn.RETURNED
    assert stock() == 5 and buyers() == set() and sale_state.result(sale_id=SALE, user_id=1) is None
    assert sale_state.unit_return(**returned, ticket=ticket) is UnitReturn.ALREADY
    assert stock() == 5

    client().sadd(keys.buyers(SALE), 2)
    client().decr(keys.stock(SALE))  # order 10
    ticket = sale_state.ticket(SALE)
    snapshot = sale_state.Snapshot(stock=5, start=time.time() - 60, end=time.time() + 60, written_request_ids=[],
                                   live_buyer_ids=[])  # fmt: skip
    sale_state.load(sale_id=SALE, snapshot=snapshot, apply=True)  # it read the cancellation already
    again = {"sale_id": SALE, "user_id": 2, "order_id": 10, "request_id": "r10"}
    assert sale_state.unit_return(**again, ticket=ticket) is UnitReturn.LOADED_SINCE
    assert stock() == 5


def test_a_unit_return_drops_the_cancelled_orders_unsettled_reservation(sale):
    """A writer committed order 9 and stopped before settling; the order was cancelled."""
    _reserved, request_id = reserve(1)
    claim("stopped")
    ticket = sale_state.ticket(SALE)
    sale_state.unit_return(sale_id=SALE, user_id=1, order_id=9, request_id=request_id, ticket=ticket)
    assert client().hlen(keys.reservations(SALE)) == 0 and client().hlen(keys.claims(SALE)) == 0
    assert settle("stopped", Settle(request_id, 1, Settlement.WRITTEN, 9)) == (0, 0)  # its late settle: nothing
    assert sale_state.result(sale_id=SALE, user_id=1) is None


def test_a_merchant_can_take_only_units_nobody_holds(sale):
    reserve(1)
    reserve(2)
    assert sale_state.stock_take(sale_id=SALE, count=4).taken is False
    taken = sale_state.stock_take(sale_id=SALE, count=3)
    assert taken.taken is True and stock() == 0
    assert sale_state.stock_add(sale_id=SALE, count=3, ticket=taken.ticket)  # the edit rolled back
    assert stock() == 3
    assert sale_state.stock_take(sale_id=999_999, count=1).taken is None  # not loaded


def test_a_new_sale_is_opened_once(sale):
    reserve(1)
    assert not sale_state.sale_open(sale_id=SALE, stock=5, start=0, end=1)
    assert stock() == 4
    assert sale_state.window(SALE)[1] > time.time()
