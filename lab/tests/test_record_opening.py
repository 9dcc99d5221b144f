"""The recorder's people and its printed table (lab.record_opening), without a browser."""

import random
from collections import Counter

from lab.record_opening import FIRST_COME_ROLES, _roles, table


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
