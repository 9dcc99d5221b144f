"""The restore drill's verdict: the checking process's findings on a database it is pointed at
(here the test database, standing in for the restored one), the violations the drill derives
from what it measured, and the table it prints."""

import pytest

from lab.restore_drill.verdict import Facts, Measures, Verdict, mib, restored_check, table
from orders.models import SeckillOrder
from sales.models import Sale
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user


def measures(**verdict_fields) -> Measures:
    """A drill that passed, with `verdict_fields` changed in its verdict."""
    verdict = Verdict(
        comparison={"found": 3, "missing": [], "extra": [], "after_present": 0},
        orders=3,
        db_stock=7,
        sale_records_match=True,
        redis_before="Redis stock 5, database 7; buyers 5, database 3",
    )
    for name, value in verdict_fields.items():
        setattr(verdict, name, value)
    return Measures(
        postgres="PostgreSQL 15.8",
        pgbackrest="pgBackRest 2.54",
        redis="7.2.4",
        backup_seconds=2.345,
        backup_size=45 * 2**20,
        backup_stored=3 * 2**20 + 2**19,
        wal_segments=12,
        wal_stored=2**20,
        restore_seconds=1.25,
        replay_seconds=3.5,
        target_type="time",
        target="2026-12-02 06:00:00+00",
        stopped_at="recovery stopping before commit of transaction 812",
        timeline=2,
        before_backup=1,
        before=3,
        after=2,
        verdict=verdict,
    )


def test_a_drill_that_passed_has_no_problem_and_its_table_says_ok():
    drill = measures()
    assert drill.problems() == []
    lines = table(drill).splitlines()
    assert lines[0] == "restore drill: PostgreSQL 15.8, pgBackRest 2.54, Redis 7.2.4"
    rows = {line[:21].strip(): line[21:].strip() for line in lines[1:]}
    assert rows == {
        "backup seconds": "2.3 (full)",
        "backup size": "45.0 MiB of cluster files, 3.5 MiB in the repository",
        "WAL archived": "12 segments, 1.0 MiB in the repository, 0 failed",
        "restore seconds": "4.8 (files 1.2, start, replay and promotion 3.5)",
        "replay target": "time 2026-12-02 06:00:00+00",
        "recovery": "recovery stopping before commit of transaction 812; promoted to timeline 2",
        "orders": "3 before the point (1 before the backup), 2 after",
        "found/missing/extra": "3/0/0 (after the point present: 0)",
        "restored database": "orders 3 + stock 7, ok",
        "Redis": "before the reconciler: Redis stock 5, database 7; buyers 5, database 3; after: ok; stale answers 0",
        "invariants": "ok",
    }


def test_each_finding_is_a_problem_of_its_own_and_the_table_says_no():
    drill = measures(
        comparison={"found": 1, "missing": list(range(20, 35)), "extra": [99], "after_present": 1},
        database_problems=["oversold by 1"],
        redis_problems=["stranded: 2 reservations waiting"],
        sale_records_match=False,
        redis_before="",
    )
    drill.original_problems = ["orders 3 + database stock 6 != units 10"]
    drill.wal_failed = 2
    assert drill.problems() == [
        "original: orders 3 + database stock 6 != units 10",
        "restored database: oversold by 1",
        "Redis after the reconciler: stranded: 2 reservations waiting",
        f"orders before the target missing: {list(range(20, 30))}",  # the first ten
        "orders not there before the target: [99]",
        "orders and their sale records differ in the restored database",
        "2 WAL segments failed to archive",
    ]
    text = table(drill)
    assert "found/missing/extra  1/15/1 (after the point present: 1)" in text
    assert "orders 3 + stock 7, NO" in text
    assert "before the reconciler: no sale; after: NO" in text
    assert text.splitlines()[-1].split() == ["invariants", "NO"]


def test_sizes_are_mib_to_one_decimal():
    assert (mib(0), mib(2**20), mib(1.5 * 2**20), mib(123456789)) == ("0.0 MiB", "1.0 MiB", "1.5 MiB", "117.7 MiB")


@pytest.mark.django_db(transaction=True)
def test_the_check_finds_a_restore_holding_exactly_the_orders_before_the_target():
    sale = make_sale(stock=5)
    buyers = [make_user() for _ in range(3)]
    orders = [buy(sale=sale, user=user) for user in buyers]
    facts = Facts(sale_id=sale.pk, units=5, before=[o.pk for o in orders], after=[], buyers=[u.pk for u in buyers])
    verdict = restored_check(facts)
    assert verdict.comparison == {"found": 3, "missing": [], "extra": [], "after_present": 0}
    assert (verdict.orders, verdict.db_stock, verdict.sale_records_match) == (3, 2, True)
    assert verdict.database_problems == [] and verdict.redis_problems == []
    assert verdict.stale_answers == 0
    assert verdict.redis_before == "Redis stock 2, database 2; buyers 3, database 3"


@pytest.mark.django_db(transaction=True)
def test_the_check_finds_an_order_lost_by_the_restore_and_the_answer_naming_it():
    sale = make_sale(stock=5)
    buyers = [make_user() for _ in range(3)]
    orders = [buy(sale=sale, user=user) for user in buyers]
    lost = orders[-1]
    # The restore stopped before the last order's commit: its rows are gone, its unit back in
    # stock, while Redis still holds the buyer's answer naming it.
    SeckillOrder.objects.filter(order_id=lost.pk).delete()
    lost.delete()
    Sale.objects.filter(pk=sale.pk).update(stock_count=3)
    facts = Facts(sale_id=sale.pk, units=5, before=[o.pk for o in orders], after=[], buyers=[u.pk for u in buyers])
    verdict = restored_check(facts)
    assert verdict.comparison["missing"] == [lost.pk]
    assert (verdict.orders, verdict.db_stock) == (2, 3)
    assert verdict.database_problems == []  # 2 orders + 3 left = 5 units: the database alone is whole
    assert verdict.redis_before == "Redis stock 2, database 3; buyers 3, database 2"
    assert verdict.redis_problems == []  # the reconciler brought Redis back to the database
    assert verdict.stale_answers == 1
