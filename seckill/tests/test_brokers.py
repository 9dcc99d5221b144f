"""The burst again with RabbitMQ as the broker (publisher confirms on), where one is reachable."""

import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tools.missing import missing

ROOT = Path(__file__).resolve().parents[2]
AMQP_URL = os.environ.get("SECKILL_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")


def reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port or 5672), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("CELERY_BROKER_URL", "").startswith("amqp"), reason="this run already uses AMQP")
def test_burst_with_rabbitmq_as_broker():
    if not reachable(AMQP_URL):
        pytest.skip(missing(f"RabbitMQ not reachable at {AMQP_URL}: the AMQP burst did not run", "rabbitmq-server"))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "seckill/tests/test_burst.py", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        # Its own database: this session's test database is in use by this very process.
        env=dict(os.environ, CELERY_BROKER_URL=AMQP_URL, DATABASE_URL=os.environ["DATABASE_URL"] + "_amqp"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "5 passed" in result.stdout
