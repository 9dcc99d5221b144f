"""How a cluster or partition row is judged (lab/cluster/scenario.py): what a fault may cost
inside its window, and what fails the row anyway."""

from lab.cluster.scenario import ClusterRow, table


def row(**fields) -> ClusterRow:
    return ClusterRow(scenario="7. HAProxy restart", requests=1564, accepted=300, orders=300, **fields)


def test_broken_connections_fail_a_row_unless_the_fault_allows_them_inside_its_window():
    assert not row(other_5xx=64).ok
    allowed = row(other_5xx=64, broken_allowed=True)
    assert allowed.ok
    assert "64 (allowed)" in table([allowed]) and table([allowed]).splitlines()[2].rstrip().endswith("yes")


def test_what_a_fault_allows_never_covers_errors_outside_its_window_loss_or_overselling():
    for breach in ({"errors_outside_window": 1}, {"lost": 1}, {"oversold": 1}, {"duplicates": 1}, {"stranded": 1},
                   {"asked_login": 1}):  # fmt: skip
        assert not row(other_5xx=64, broken_allowed=True, **breach).ok, breach


def test_a_failed_page_view_outside_the_window_or_a_missed_purge_fails_a_row():
    assert row(page_views=900, page_hits=880, page_errors=3).ok  # inside the window: reported only
    assert not row(page_views=900, page_errors=3, page_errors_outside=1).ok
    assert not row(broken_allowed=True, purge_missed=True).ok
    missed = table([row(purge_missed=True)]).splitlines()[2]
    assert " NO " in missed and missed.rstrip().endswith("NO")


def test_a_stale_page_is_allowed_only_where_the_fault_empties_the_edge():
    allowed = row(purge_missed=True, stale_allowed=True)
    assert allowed.ok and "NO (allowed)" in table([allowed])
    assert not row(purge_missed=True, stale_allowed=True, page_errors_outside=1).ok


def test_a_database_row_fails_on_a_lost_commit_a_cut_off_leader_acknowledging_or_a_repeated_number():
    healthy = row(acked=500, leaderless_seconds=19.5, write_gap_seconds=23.8, queued_in_fault=900)
    assert healthy.ok
    cells = table([healthy]).splitlines()[2]
    assert "0/500" in cells and "900/0" in cells and cells.rstrip().endswith("yes")
    for breach in ({"acked_lost": 1}, {"acked_after_cut": 1}, {"numbers_repeated": 1}, {"db_healed": False},
                   {"paid_lost": 1}, {"money_problems": 1}, {"payment_5xx": 1}):  # fmt: skip
        assert not row(acked=500, **breach).ok, breach
    assert "(+3 cut)" in table([row(acked=500, acked_after_cut=3)])


def test_a_row_whose_fault_is_not_the_databases_shows_no_database_figures():
    cells = [cell.strip() for cell in table([row()]).splitlines()[2].split("|")]
    assert cells[-6:] == ["-", "-", "-", "-", "-", "yes"]
