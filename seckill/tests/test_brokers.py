"""The burst again with RabbitMQ as the broker (publisher confirms on): the one at
SECKILL_TEST_AMQP_URL, else the machine's on the default port, else a private node of the test's
own (tools/private_rabbitmq.py) where the rabbitmq-server package is installed."""

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tools.missing import missing
from tools.private_rabbitmq import installed, private_rabbitmq

ROOT = Path(__file__).resolve().parents[2]
AMQP_URL = os.environ.get("SECKILL_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")


def reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port or 5672), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture
def amqp_url(tmp_path: Path) -> Iterator[str]:
    """A broker's URL: AMQP_URL where it answers or was named, else a private node's; skips only
    where no broker answers and none can be started (the package is missing)."""
    if "SECKILL_TEST_AMQP_URL" in os.environ or reachable(AMQP_URL):
        yield AMQP_URL
    elif installed():
        with private_rabbitmq(tmp_path) as url:
            yield url
    else:
        pytest.skip(missing(f"RabbitMQ not reachable at {AMQP_URL}: the AMQP burst did not run", "rabbitmq-server"))


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("CELERY_BROKER_URL", "").startswith("amqp"), reason="this run already uses AMQP")
def test_burst_with_rabbitmq_as_broker(amqp_url: str):
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "seckill/tests/test_burst.py", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        # Its own database: this session's test database is in use by this very process.
        env=dict(os.environ, CELERY_BROKER_URL=amqp_url, DATABASE_URL=os.environ["DATABASE_URL"] + "_amqp"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "5 passed" in result.stdout
