"""lab.invariants.SaleCheck's arithmetic, from figures alone: how much a sale is oversold or
stranded, and the line each violation prints."""

from lab.invariants import SaleCheck


def check(**fields) -> SaleCheck:
    """A sale of 10 units with 4 orders, 6 left in the database and in Redis: whole."""
    return SaleCheck(**({"sale_id": 7, "units": 10, "orders": 4, "db_stock": 6, "redis_stock": 6} | fields))


def test_a_whole_sale_has_no_problem():
    whole = check()
    assert (whole.oversold, whole.stranded, whole.problems()) == (0, 0, [])


def test_oversold_counts_orders_beyond_the_units_and_stock_below_zero():
    assert check(orders=12, db_stock=0, redis_stock=0).oversold == 2
    assert check(orders=10, db_stock=-3, redis_stock=-3).oversold == 3
    assert check(orders=11, db_stock=-1, redis_stock=-1).oversold == 2
    assert check(orders=12, db_stock=0, redis_stock=0).problems()[0] == "oversold by 2"


def test_stranded_adds_the_units_unaccounted_the_drift_and_the_waiting_reservations():
    assert check(orders=3).stranded == 1  # a unit neither ordered nor in stock
    assert check(redis_stock=4).stranded == 2  # Redis two behind the database
    assert check(reservations=3).stranded == 3
    assert check(orders=3, redis_stock=4, reservations=3).stranded == 6


def test_a_sale_redis_does_not_hold_counts_as_minus_one_there():
    gone = check(redis_stock=None)
    assert gone.stranded == 7
    assert gone.problems() == ["stranded: Redis stock None != database stock 6"]
    sold = check(orders=10, db_stock=0, redis_stock=None)
    assert sold.stranded == 1


def test_every_violation_prints_its_own_line_in_order():
    broken = check(
        orders=11,
        db_stock=-2,
        redis_stock=1,
        reservations=2,
        duplicates=1,
        drifted=True,
        lost=3,
        unanswered=4,
        money=["kept payment of an order not paid (T1)"],
    )
    assert broken.problems() == [
        "oversold by 3",
        "orders 11 + database stock -2 != units 10",
        "stranded: Redis stock 1 != database stock -2",
        "stranded: 2 reservations waiting",
        "1 shoppers with more than one live order",
        "the reconciler finds Redis and the database apart",
        "3 shoppers told queued, then neither an order nor -1",
        "4 order holders whose answer is not their order",
        "money: kept payment of an order not paid (T1)",
    ]


def test_told_failed_is_reported_but_is_no_violation():
    assert check(queued=5, told_failed=2).problems() == []
