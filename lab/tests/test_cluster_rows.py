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
