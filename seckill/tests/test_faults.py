"""The reduced fault suite (`make faults` runs all six scenarios) as part of `make test`."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_reduced_fault_suite_keeps_every_invariant():
    """kill -9 of Celery workers mid-burst, Redis restarted mid-sale (clean and kill -9), and
    stranded reservations, each against a private gunicorn + Celery + PostgreSQL + Redis."""
    result = subprocess.run(
        [sys.executable, "-m", "lab.faults", "--reduced", "--shoppers", "200", "--stock", "60"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(result.stdout[-4000:])
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "3 passed, 0 failed" in result.stdout
