"""Captchas drawn ahead of the opening: each is handed out once, carries its own answer, and an
empty or foreign pool falls back to drawing. On the real Redis, through the real endpoints."""

import io
import threading

import pytest
from django.core.management import call_command
from PIL import Image
from prometheus_client import REGISTRY

from sales.sale_state import keys
from seckill import captcha
from seckill import keys as site_keys
from seckill.codes import BuyCode
from seckill.selectors import captcha_pool_size
from seckill.services import paths
from seckill.tasks import captcha_pool_fill
from seckill_site.redis import client
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user

pytestmark = pytest.mark.django_db


def served(source: str) -> float:
    return REGISTRY.get_sample_value("seckill_captchas_total", {"source": source}) or 0.0


def pool() -> list[bytes]:
    return client().lrange(site_keys.captcha_pool(), 0, -1)


def test_a_shopper_gets_a_pooled_captcha_whose_own_answer_earns_the_path(shopper, settings):
    settings.SECKILL_CAPTCHA_POOL = 3
    assert paths.captcha_pool_fill() == 3
    entries = pool()
    sale, before = make_sale(), served("pool")

    image = shopper.get("/seckill/verifyCode", {"goodsId": sale.pk})

    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    answer, _, png = entries[0].partition(b"\n")
    assert image.content == png
    assert Image.open(io.BytesIO(png)).size == (captcha.PNG_WIDTH, captcha.PNG_HEIGHT)  # the page's picture
    assert pool() == entries[1:]  # taken, so never handed out again
    assert served("pool") == before + 1
    stored = client().get(keys.captcha(sale.pk, shopper.user.pk))
    assert stored == answer
    path = shopper.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": int(answer)}).json()
    assert path["code"] == 0 and len(path["data"]) == 32


def test_a_wrong_answer_to_a_pooled_captcha_is_refused(shopper, settings):
    settings.SECKILL_CAPTCHA_POOL = 1
    paths.captcha_pool_fill()
    answer = int(pool()[0].partition(b"\n")[0])
    sale = make_sale()
    shopper.get("/seckill/verifyCode", {"goodsId": sale.pk})
    response = shopper.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": answer + 1})
    assert response.status_code == 400 and response.json()["code"] == BuyCode.CAPTCHA_WRONG.code
    assert client().get(keys.captcha(sale.pk, shopper.user.pk)) is None  # the answer is used up


def test_concurrent_shoppers_each_get_a_different_pooled_captcha_then_drawn_ones(settings):
    """16 shoppers at once against a pool of 8: exactly 8 take a pooled captcha, no two the same,
    and the other 8 are drawn in their request."""
    settings.SECKILL_CAPTCHA_POOL = 8
    paths.captcha_pool_fill()
    pooled = {entry.partition(b"\n")[2] for entry in pool()}
    assert len(pooled) == 8
    sale = make_sale()
    users = [make_user() for _ in range(16)]
    images: dict[int, bytes] = {}
    start = threading.Barrier(len(users))

    def draw(user_id: int) -> None:
        start.wait()
        images[user_id] = paths.captcha_create(user_id=user_id, sale_id=sale.pk)

    threads = [threading.Thread(target=draw, args=(user.pk,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    from_pool = [user_id for user_id, png in images.items() if png in pooled]
    assert len(from_pool) == 8 and len({images[user_id] for user_id in from_pool}) == 8
    assert pool() == []
    assert len(set(images.values())) == 16  # the drawn ones are new pictures too
    for user_id in images:  # every shopper holds the answer of the picture they got
        assert client().get(keys.captcha(sale.pk, user_id)) is not None


def test_an_empty_pool_and_a_pool_turned_off_draw_in_the_request(shopper, settings):
    sale = make_sale()
    settings.SECKILL_CAPTCHA_POOL = 2
    before = served("drawn")
    assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}).status_code == 200  # empty
    paths.captcha_pool_fill()
    settings.SECKILL_CAPTCHA_POOL = 0  # turned off: the entries stay where they are
    assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}).status_code == 200
    assert served("drawn") == before + 2 and len(pool()) == 2


def test_an_entry_that_is_not_ours_is_dropped_and_a_captcha_drawn(shopper, settings):
    settings.SECKILL_CAPTCHA_POOL = 2
    client().rpush(site_keys.captcha_pool(), b"not a number\nPNG")
    sale = make_sale()
    image = shopper.get("/seckill/verifyCode", {"goodsId": sale.pk})
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
    assert pool() == []
    answer = int(client().get(keys.captcha(sale.pk, shopper.user.pk)))
    assert shopper.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": answer}).json()["code"] == 0


def test_a_fill_tops_up_to_the_size_trims_what_two_fillers_overdrew_and_keeps_to_its_time(settings):
    settings.SECKILL_CAPTCHA_POOL = 4
    assert paths.captcha_pool_fill() == 4
    assert paths.captcha_pool_fill() == 0  # full
    client().lpop(site_keys.captcha_pool())
    assert paths.captcha_pool_fill() == 1
    # Another filler's entries arrived meanwhile: the pool is trimmed back to its size.
    client().rpush(site_keys.captcha_pool(), *pool())
    paths.captcha_pool_fill(size=6)
    assert captcha_pool_size() == 6
    assert client().ttl(site_keys.captcha_pool()) > site_keys.CAPTCHA_POOL_TTL - 60
    client().delete(site_keys.captcha_pool())
    assert paths.captcha_pool_fill(seconds=0) == 0  # no time to draw even one


def test_beats_task_and_the_warm_command_fill_the_pool(settings):
    settings.SECKILL_CAPTCHA_POOL = 2
    settings.SECKILL_CAPTCHA_POOL_FILL_SECONDS = 30
    (entry,) = [
        entry for entry in settings.CELERY_BEAT_SCHEDULE.values() if entry["task"] == "seckill.captcha_pool_fill"
    ]
    assert entry["options"]["expires"] == entry["schedule"]  # no backlog of fills after an outage
    assert captcha_pool_fill() == 2  # the task body, called as beat's message would
    client().delete(site_keys.captcha_pool())
    call_command("seckill_warm", captchas=3, stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert captcha_pool_size() == 3
    call_command("seckill_warm", captchas=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert captcha_pool_size() == 3


def test_metrics_show_the_pool_ready_and_where_each_captcha_came_from(shopper, settings):
    from testutils.metrics import SCRAPER, scrape

    settings.METRICS_TOKEN = SCRAPER["Authorization"].removeprefix("Bearer ")
    settings.SECKILL_CAPTCHA_POOL = 2
    paths.captcha_pool_fill()
    sale = make_sale()

    def read() -> dict:
        return scrape(shopper.get("/metrics", headers=SCRAPER).content.decode())

    before = read()
    assert before[("seckill_captcha_pool_ready", ())] == 2
    for _ in range(3):  # two from the pool, then one drawn
        assert shopper.get("/seckill/verifyCode", {"goodsId": sale.pk}).status_code == 200
    after = read()
    assert after[("seckill_captcha_pool_ready", ())] == 0
    for source, more in (("pool", 2), ("drawn", 1)):
        key = ("seckill_captchas_total", (("source", source),))
        assert after[key] == before.get(key, 0) + more
