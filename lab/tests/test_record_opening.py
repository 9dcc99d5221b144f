"""The recorder's people and its printed table (lab.record_opening), without a browser."""

import random
from collections import Counter

import pytest

from lab.record_opening import DRAW_ROLES, FIRST_COME_ROLES, _roles, arguments, table
from tools import opening_mix


def test_roles_come_in_their_shares_and_add_up_to_the_shoppers():
    for count in (1, 7, 15, 40):
        roles = _roles(FIRST_COME_ROLES, count, random.Random(1))
        assert len(roles) == count
        for role, share in FIRST_COME_ROLES.items():
            assert abs(Counter(roles)[role] - share * count) < 1


def test_the_table_has_a_row_per_kind_and_a_column_per_phase_that_happened():
    recorded = {"groups": {"all": {"phases": {
        "before": {"per_shopper_second": {"GET seckill:state": 0.2}, "shopper_seconds": 100.0},
        "opening": {"per_shopper_second": {"POST seckill:do": 0.05, "GET seckill:state": 0.4},
                    "shopper_seconds": 20.0},
    }}}}  # fmt: skip
    lines = table(recorded).splitlines()
    assert lines[0].split() == ["kind", "before", "opening"]
    assert lines[1].split() == ["GET", "seckill:state", "0.2000", "0.4000"]
    assert lines[2].split() == ["POST", "seckill:do", "0.0000", "0.0500"]
    assert lines[3].split() == ["shopper-seconds", "100", "20"]


def test_the_draws_roles_take_the_largest_remainders_and_follow_the_seed():
    assert Counter(_roles(DRAW_ROLES, 10, random.Random(3))) == {"entrant": 8, "watcher": 2}
    assert Counter(_roles(DRAW_ROLES, 3, random.Random(3))) == {"entrant": 2, "watcher": 1}  # 2.4 / 0.6
    assert _roles(FIRST_COME_ROLES, 20, random.Random(5)) == _roles(FIRST_COME_ROLES, 20, random.Random(5))
    assert _roles(FIRST_COME_ROLES, 20, random.Random(5)) != _roles(FIRST_COME_ROLES, 20, random.Random(6))


def test_the_shipped_recordings_table_has_every_kind_and_phase():
    recorded = opening_mix.load()
    lines = table(recorded).splitlines()
    assert lines[0].split() == ["kind", "before", "opening", "after"]
    phases = recorded["groups"]["all"]["phases"]
    kinds = sorted({key for phase in phases.values() for key in phase["per_shopper_second"]})
    assert [" ".join(line.split()[:2]) for line in lines[1:-1]] == kinds
    assert lines[-1].split() == ["shopper-seconds", *(f"{phases[p]['shopper_seconds']:.0f}" for p in phases)]
    sale_state = next(line for line in lines if "seckill:sale_state" in line).split()
    assert float(sale_state[2]) == pytest.approx(phases["before"]["per_shopper_second"]["GET seckill:sale_state"],
                                                 abs=1e-4)  # fmt: skip


@pytest.mark.parametrize("argv", [["--shoppers", "3"], ["--lead", "5"], ["--draw-share", "1"]])
def test_a_recording_too_small_to_measure_is_refused_before_a_browser_starts(argv, monkeypatch, capsys):
    import lab.record_opening as module

    monkeypatch.setattr(module, "Recorder", lambda options: pytest.fail("a recording was started"))
    with pytest.raises(SystemExit) as exit_:
        module.main(argv)
    assert exit_.value.code == 2
    assert "--shoppers >= 4, --lead >= 10 and 0 <= --draw-share < 1" in capsys.readouterr().err


def test_the_recording_goes_to_the_file_the_bench_replays_by_default():
    assert arguments().parse_args([]).output == str(opening_mix.MIX_PATH)
