"""The sale window is judged by Redis's clock, never by a web node's: a node whose clock runs
30 s ahead (libfaketime) neither opens a sale early nor closes it early."""

import time
from pathlib import Path

import pytest
from django_ratelimit.core import _get_window

from sales.sale_state import keys
from seckill_site.redis import client
from seckill_site.redis import now as redis_now
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.processes import gunicorn_running
from testutils.shoppers import path_for, shopper
from tools.missing import missing

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")


@pytest.fixture
def node_30s_ahead(django_db_setup):
    if not LIBFAKETIME.exists():
        pytest.skip(missing("libfaketime is not installed: the skewed-clock node did not run", "libfaketime"))
    with gunicorn_running(LD_PRELOAD=str(LIBFAKETIME), FAKETIME="+30s") as url:
        yield url


def test_a_node_whose_clock_runs_ahead_neither_opens_nor_closes_a_sale_early(node_30s_ahead):
    upcoming = make_sale(stock=5, starts_in=15)  # the node thinks it started 15 s ago
    ending = make_sale(stock=5, starts_in=-60, lasts=75)  # the node thinks it ended 15 s ago
    buyer = shopper(make_user())

    # Its pages tell the shop's time: the countdown, not "on" or "ended".
    detail = buyer.get(f"{node_30s_ahead}/goods/getDetails/{upcoming.pk}").json()["data"]
    assert detail["seckillStatus"] == 0 and 10 <= detail["remainSeconds"] <= 16, detail
    assert buyer.get(f"{node_30s_ahead}/goods/getDetails/{ending.pk}").json()["data"]["seckillStatus"] == 1

    early = buyer.post(
        f"{node_30s_ahead}/seckill/{path_for(buyer.user_id, upcoming.pk)}/doSeckill", {"goodsId": upcoming.pk}
    )
    assert early.json()["msg"] == "the sale has not started yet", early.json()
    assert client().get(keys.stock(upcoming.pk)) == b"5"

    on_time = buyer.post(
        f"{node_30s_ahead}/seckill/{path_for(buyer.user_id, ending.pk)}/doSeckill", {"goodsId": ending.pk}
    )
    assert on_time.json()["code"] == 0, on_time.json()
    assert client().get(keys.stock(ending.pk)) == b"4"


def test_the_rate_limit_counts_the_same_on_nodes_whose_clocks_disagree(node_30s_ahead):
    """django-ratelimit names its counters after the node's time window: a node 30 s ahead
    counted apart and let a shopper through twice as often."""
    sale = make_sale(stock=5)
    buyer = shopper(make_user())
    with gunicorn_running() as true_clock:
        # Start right after this shopper's 5 s window turns, so all ten fall in one window.
        window_end = _get_window(str(buyer.user_id), 5)
        time.sleep(max(0.0, window_end - redis_now()) + 0.05)
        answers = [
            buyer.post(f"{node}/seckill/not-a-path/doSeckill", {"goodsId": sale.pk}).status_code
            for node in [true_clock, node_30s_ahead] * 5
        ]
    assert answers.count(429) == 5, answers  # 5 per 5 s for this shopper, whichever node counts
