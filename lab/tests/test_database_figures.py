"""The PostgreSQL figures of the cluster and partition rows (lab/cluster/database_faults.py,
lab/cluster/database.py), from recorded samples: commits acknowledged in a window, the longest
time without one, how long no leader took writes, and the order numbers handed out twice."""

from pathlib import Path

import pytest

from lab.cluster import partition_faults, scenario
from lab.cluster.database import DatabaseHost, LeaderWatch
from lab.cluster.database_faults import DATABASE_SCENARIOS, CommitProbe, median_ms, numbers_repeated
from orders.models import Order
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user


def probe(*moments: float) -> CommitProbe:
    return CommitProbe("10.231.0.71", 5432, "seckill", acked=[(i, at) for i, at in enumerate(moments, start=1)])


def test_commits_between_two_moments_count_only_strictly_inside():
    commits = probe(1.0, 2.0, 3.0, 4.0)
    assert commits.acked_between(1.0, 4.0) == 2
    assert commits.acked_between(0.0, 10.0) == 4
    assert commits.acked_between(5.0, 6.0) == 0


def test_the_longest_gap_counts_from_the_fault_to_the_first_commit_after_it():
    commits = probe(0.5, 1.0, 1.1, 6.0, 6.1, 9.0)
    assert commits.longest_gap(1.05) == pytest.approx(4.9)  # 1.1 -> 6.0
    assert commits.longest_gap(5.0) == pytest.approx(2.9)  # 6.1 -> 9.0
    assert commits.longest_gap(2.0) == pytest.approx(4.0)  # the fault at 2.0 until 6.0
    assert commits.longest_gap(9.5) == 0.0  # nothing acknowledged since


def test_the_median_commit_is_in_milliseconds():
    commits = probe()
    assert median_ms(commits) == 0.0
    commits.commit_seconds = [0.004, 0.001, 0.002]
    assert median_ms(commits) == pytest.approx(2.0)


def watch(*samples: tuple[float, set[str]]) -> LeaderWatch:
    hosts = [DatabaseHost(name, f"10.231.0.{71 + i}", Path("/nowhere")) for i, name in enumerate(("pg1", "pg2", "pg3"))]
    return LeaderWatch(hosts, samples=[(at, frozenset(leaders)) for at, leaders in samples])


def test_no_leader_lasts_until_a_host_other_than_the_old_one_answers():
    seen = watch((0.0, {"pg1"}), (1.0, {"pg1"}), (2.0, set()), (3.0, set()), (4.5, {"pg2"}), (5.0, {"pg2"}))
    assert seen.leaderless_seconds(1.5, old="pg1") == 3.0
    assert seen.leaderless_seconds(0.5) == 0.5  # any leader counts without an old one named
    assert seen.leaderless_seconds(0.5, old="pg1") == 4.0  # the old leader answering is no new leader
    never = watch((0.0, {"pg1"}), (2.0, set()), (7.0, set()))
    assert never.leaderless_seconds(1.0, old="pg1") == 6.0  # the whole watch after the fault
    assert watch().leaderless_seconds(1.0) == 0.0


def test_leaders_are_listed_in_order_of_first_answer_after_a_moment():
    seen = watch((0.0, {"pg1"}), (1.0, {"pg1", "pg3"}), (2.0, {"pg3"}), (3.0, {"pg2"}))
    assert seen.leaders_seen(0.0) == ["pg1", "pg3", "pg2"]
    assert seen.leaders_seen(1.5) == ["pg3", "pg2"]


def test_two_leaders_at_once_are_timed_from_the_sample_before():
    seen = watch((0.0, {"pg1"}), (1.0, {"pg1", "pg2"}), (1.5, {"pg1", "pg2"}), (3.0, {"pg2"}), (4.0, {"pg2", "pg3"}))
    assert seen.both_primary_seconds() == pytest.approx(1.0 + 0.5 + 1.0)
    assert watch((0.0, {"pg1", "pg2"})).both_primary_seconds() == 0.0


@pytest.mark.django_db
def test_an_order_number_whose_sequence_part_comes_back_is_found():
    sale = make_sale(stock=3)
    orders = [buy(sale=sale, user=make_user()) for _ in range(3)]
    assert numbers_repeated() == 0
    first, second, _third = orders
    # A sequence that went back after a failover: the same value under a later time prefix.
    Order.objects.filter(pk=second.pk).update(order_no="29991231235959" + first.order_no[-10:])
    assert numbers_repeated() == 1


def test_every_default_scenario_is_one_the_run_knows():
    assert set(scenario.DEFAULT_SCENARIOS) <= set(scenario.SCENARIOS)
    assert set(partition_faults.DEFAULT_SCENARIOS) <= set(partition_faults.SCENARIOS)
    assert set(DATABASE_SCENARIOS) <= set(partition_faults.SCENARIOS)
    assert "web-sigterm" not in scenario.DEFAULT_SCENARIOS  # an undrained stop no deploy does
