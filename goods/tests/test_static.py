"""The item page's result polling plan (static/js/poll.js), run in node when it is installed.

A shopper told "queued" holds a unit: the page must keep asking, and only the server's -1
may make it say "sold out" (the old page said so after 60 polls while the order was being written).
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tools.missing import missing

POLL_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "poll.js"
NODE = shutil.which("node")


def plan(expression: str):
    script = f"const p = require({json.dumps(str(POLL_JS))}).SeckillPoll; console.log(JSON.stringify({expression}));"
    result = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=30, check=True)
    return json.loads(result.stdout)


pytestmark = pytest.mark.skipif(
    NODE is None, reason=missing("node is not installed: the polling plan did not run", "nodejs")
)


def test_queued_never_becomes_sold_out():
    states = plan("Array.from({length: p.MAX_POLLS}, (_, i) => p.state(0, i))")
    assert "failed" not in states
    assert states[0] == "waiting" and states[-1] == "stopped"
    slow_after = plan("p.SLOW_AFTER")
    assert set(states[slow_after - 1 : -1]) == {"processing"}  # says so, and keeps polling
    assert plan("p.state(null, 3)") == "waiting"  # a network error is no answer, not a failure


def test_only_the_servers_answers_end_the_wait():
    assert plan("[p.state(42, 0), p.state(-1, 0), p.state(-1, 150)]") == ["ordered", "failed", "failed"]


def test_backoff_grows_then_slows_and_keeps_polling_for_many_minutes():
    delays = plan("Array.from({length: p.MAX_POLLS}, (_, i) => p.delay(i))")
    assert delays[:4] == [300, 600, 1200, 2400] and max(delays[:20]) == 3000
    assert max(delays) == 10000 and delays == sorted(delays)
    assert sum(delays) / 60_000 > 20  # far beyond the reconciler's two minutes


@pytest.mark.django_db
def test_the_item_page_loads_the_plan_before_the_page_script(client):
    from testutils.factories.sales import make_sale

    page = client.get(f"/goods/detail/{make_sale().pk}").content.decode()
    assert page.index("js/poll.js") < page.index("js/seckill.js")
