"""What the load generators' tests share: the generators, wrk skipped where it is not installed."""

from __future__ import annotations

import pytest

from lab.bench import load
from tools.missing import missing

GENERATORS = [
    pytest.param("wrk", marks=pytest.mark.skipif(not load.wrk_path(), reason=missing("wrk is not installed", "wrk"))),
    "async",
]
