"""How the cluster test's "queue everyone" row reads a node's answers (lab/cluster/switch.py) and
judges them (lab/cluster/scenario.py)."""

from lab.cluster.scenario import ClusterRow, table
from lab.cluster.switch import Probe, Settled, settled, switch_limit


def answers(*pairs: tuple[float, bool]) -> list[Probe]:
    return [Probe("web1", started, started + 0.005, refused) for started, refused in pairs]


def test_a_node_takes_the_switch_at_the_first_of_its_answers_that_are_all_the_new_way():
    probes = answers((9.9, False), (10.1, False), (10.6, False), (10.65, True), (10.7, False), (10.9, True),
                     (11.0, True))  # fmt: skip
    # A process that had not read the room yet let a later request through: the earlier refusal
    # does not count, the node took it at 10.9.
    assert settled(probes, 10.0, refused=True) == Settled(0.9, 0.2)


def test_a_node_that_never_took_the_switch_has_no_time_and_answers_before_it_are_ignored():
    assert settled(answers((10.2, True), (10.5, False)), 10.0, refused=True).seconds is None
    assert settled(answers((9.5, True), (10.2, True), (10.3, True)), 10.0, refused=True) == Settled(0.2, 0.0)
    assert settled([], 10.0, refused=True).seconds is None


def test_switching_off_is_read_the_same_way_the_other_way_round():
    assert settled(answers((20.1, True), (20.4, True), (20.45, False), (20.5, False)), 20.0, refused=False) == (
        Settled(0.45, 0.05)
    )


def test_the_limit_is_the_read_interval_plus_the_call_plus_the_widest_sampling_gap():
    assert switch_limit(1.0, 0.04, [Settled(0.9, 0.03), Settled(0.5, 0.06), Settled(None, 0.0)]) == 1.1


def row(**fields) -> ClusterRow:
    return ClusterRow(scenario="waiting room: queue everyone", requests=400, **fields)


def test_a_switch_row_fails_when_a_node_is_late_or_failed_and_shows_both_times():
    good = row(switch_on_seconds=0.93, switch_off_seconds=0.88, switch_limit=1.06)
    assert good.ok
    line = table([good]).splitlines()[2]
    assert "0.93/0.88 (<= 1.06)" in line and line.rstrip().endswith("yes")
    assert not row(switch_on_seconds=1.2, switch_off_seconds=0.5, switch_limit=1.06).ok
    assert not row(switch_on_seconds=0.5, switch_off_seconds=1.2, switch_limit=1.06).ok
    never = row(switch_on_seconds=None, switch_off_seconds=0.5, switch_limit=1.06, switch_failures=1)
    assert not never.ok and "never/0.50 (<= 1.06) !1" in table([never])


def test_a_row_that_threw_no_switch_shows_none():
    cells = [
        cell.strip() for cell in table([ClusterRow(scenario="kill -9 edge", requests=10)]).splitlines()[2].split("|")
    ]
    assert cells[-7] == "-"
