"""A draw sale in Chromium (docs/draw.md): the shopper reads the draw's explanation and the
seed's hash, enters in the opening window, sees the countdown to the draw, then wins (the only
entrant) and finds the order. Live server, real PostgreSQL, Redis and Celery worker (the draw
is the ETA task's)."""

import hashlib
import time

import pytest

from orders.models import Order
from sales.models import SaleDraw
from sales.sale_state import keys
from sales.services import draw_seed_ensure, sale_open
from seckill_site.redis import client
from testutils.browser import log_in, poll
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_shopper_enters_the_draw_and_sees_the_result(watched, celery_worker):
    sale = make_sale(
        goods=make_goods(name="Draw Phone"), stock=1, starts_in=4, warm=False, admission="draw", draw_window_s=5
    )
    draw_seed_ensure(sale=sale)
    sale_open(sale_id=sale.pk)  # publishes the draw's ETA task
    shopper = make_user(nickname="Dora")
    make_address(shopper)
    tab = watched("draw")
    page = tab.page
    log_in(page, tab.base_url, shopper.mobile)
    # The page's requests in order, and the answers of everybody's state (read once drawn).
    seen: list[tuple[str, object]] = []
    page.on("request", lambda request: seen.append(("asked", request.url)))
    page.on("response", lambda response: "/seckill/saleState/" in response.url and seen.append(("sale", response)))
    page.route("**/seckill/saleState/*", publish_the_draw_late())

    tab.go(f"/goods/detail/{sale.pk}")
    seed_hash = page.inner_text("#seed-hash")
    assert seed_hash == SaleDraw.objects.get(sale=sale).seed_sha256
    assert "Fair opening" in page.inner_text("#draw-info")
    tab.shoot("draw-before")
    page.wait_for_selector("#buy:not([disabled])", timeout=10_000)

    page.click("#buy")
    poll(page, "document.getElementById('captcha-img').naturalWidth > 0")
    page.fill("#captcha-answer", client().get(keys.captcha(sale.pk, shopper.pk)).decode())
    page.click("#captcha-form button[type=submit]")
    page.wait_for_selector("#draw-entered", timeout=10_000)
    assert "You are in the draw; results at" in page.inner_text("#panel")
    assert "in the draw" not in page.inner_text("#result")  # said once, in the panel, not twice
    poll(page, "/Draw in|Drawing/.test(document.querySelector('[data-draw-at]').textContent)")
    tab.shoot("draw-entered")

    page.wait_for_selector("#pay-now", timeout=30_000)  # drawn, queued, then the order
    # The news first, as a headline; the pinned bar counts the time left to pay, never "sold out".
    assert page.inner_text("#panel").lstrip().startswith("You won the draw")
    poll(page, "document.querySelector('#bar-clock .bar-label').textContent === 'Left to pay'")
    tab.shoot("draw-won")
    assert Order.objects.filter(user=shopper, seckill__sale=sale).count() == 1
    assert_entrant_waits_for_everybodys_answer(seen)
    tab.go(f"/goods/detail/{sale.pk}")
    seed = page.inner_text("#seed")
    assert hashlib.sha256(seed.encode()).hexdigest() == seed_hash  # the seed published matches the hash shown before
    page.click("#draw-info summary")  # the recomputation, with this shop's address in it
    recompute = page.inner_text("#draw-info pre")
    assert f"/seckill/draw?goodsId={sale.pk}" in recompute and "sha256" in recompute
    tab.shoot("draw-published")


LATE_SECONDS = 4.0


def publish_the_draw_late():
    """A route handler under which everybody's answer says "not drawn yet" for LATE_SECONDS
    after the draw is made, as while a large draw is written: the entrant's page must wait."""
    drawn_at: list[float] = []

    def handle(route, _request) -> None:
        answer = route.fetch()
        body = answer.json()
        draw = body["data"]["draw"]
        if draw and draw["drawn"]:
            drawn_at.append(time.monotonic())
            if time.monotonic() - drawn_at[0] < LATE_SECONDS:
                body["data"]["draw"] = {key: draw[key] for key in ("seedSha256", "drawWindowS")} | {"drawn": False}
        route.fulfill(response=answer, json=body)

    return handle


def assert_entrant_waits_for_everybodys_answer(seen: list[tuple[str, object]]) -> None:
    """Between the entry and the moment everybody's answer says the draw is made, an entrant's
    page asks its own state once (as the entry is answered): at the draw, thousands of entrants
    ask the shared answer an edge keeps, and only then their own."""
    entered = next(i for i, (kind, url) in enumerate(seen) if kind == "asked" and "/doSeckill" in str(url))
    drawn = next(
        (
            i
            for i, (kind, response) in enumerate(seen)
            if i > entered and kind == "sale" and (response.json()["data"]["draw"] or {}).get("drawn")  # type: ignore[attr-defined]
        ),
        len(seen),
    )
    own = [url for kind, url in seen[entered:drawn] if kind == "asked" and "/seckill/shopperState" in str(url)]
    assert len(own) == 1, own
