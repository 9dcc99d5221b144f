"""The item page's requests through an opening against the recorded opening mix
(lab/data/opening_mix.json, made by `make record-opening`, replayed by `make bench`): a page that
asks for a kind of request the recording does not hold fails here, so a change to the pages'
polling comes with a new recording and the bench replays what the pages make. Live server, real
PostgreSQL and Redis, a Celery worker writing the order."""

from urllib.parse import urlsplit

import pytest

from testutils.browser import logged_in, solve_and_buy
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from tools import opening_mix

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_every_kind_the_item_page_asks_for_through_an_opening_is_in_the_recorded_mix(watched, celery_worker):
    recorded = opening_mix.kinds(opening_mix.load())
    sale, shopper = make_sale(goods=make_goods(name="Opening Tea"), stock=1, starts_in=4), make_user()
    tab = watched("opening-mix")
    origin = urlsplit(tab.base_url).netloc
    made: list[str] = []

    def keep(request) -> None:
        parts = urlsplit(request.url)
        if parts.netloc == origin:
            made.append(f"{request.method} {opening_mix.kind_of(parts.path)}")

    tab.context.on("request", keep)
    logged_in(tab, shopper)
    page = tab.go(f"/goods/detail/{sale.pk}")
    # The countdown, the opening, the captcha, the buy, the result, the order page.
    page.wait_for_selector("#buy:not([disabled])", timeout=15_000)
    solve_and_buy(page, sale, shopper)
    page.wait_for_selector("#pay-now", timeout=20_000)
    # The page's own refresh, every few seconds, comes round at least once more.
    refreshes = len(made)
    page.wait_for_timeout(6_000)
    assert len(made) > refreshes, "the item page made no request in 6 s after the buy"
    page.click("#pay-now")
    page.wait_for_load_state("networkidle")

    missing = sorted(set(made) - recorded)
    assert not missing, (
        f"the pages make {missing}, which lab/data/opening_mix.json does not hold: record the opening"
        " again (make record-opening) so that make bench replays what the pages make"
    )
    assert {"GET item:page", "GET seckill:verify-code", "POST seckill:do"} <= set(made)
