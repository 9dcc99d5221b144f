"""The seckill endpoints through Django's test client: the contract and every kind of bad input."""

import pytest

from sales.sale_state import keys
from seckill_site.redis import client
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user

pytestmark = pytest.mark.django_db


def test_the_whole_flow_through_the_endpoints(shopper, flushes):
    sale = make_sale(stock=3)
    image = shopper.get("/seckill/verifyCode", {"goodsId": sale.pk})
    assert image.status_code == 200 and image["Content-Type"] == "image/png"
    answer = client().get(keys.captcha(sale.pk, shopper.user.pk)).decode()
    path = shopper.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": answer}).json()
    assert path["code"] == 0
    body = shopper.post(f"/seckill/{path['data']}/doSeckill", {"goodsId": sale.pk}).json()
    assert body["code"] == 0 and body["data"]["status"] == "queued"
    assert shopper.get("/seckill/result", {"goodsId": sale.pk}).json()["data"] == 0
    from seckill.services.writer import sale_flush

    sale_flush(sale_id=flushes[0])
    assert shopper.get("/seckill/result", {"goodsId": sale.pk}).json()["data"] > 0


def test_wrong_captcha_is_a_clear_400(shopper):
    sale = make_sale()
    shopper.get("/seckill/verifyCode", {"goodsId": sale.pk})
    answer = int(client().get(keys.captcha(sale.pk, shopper.user.pk)))
    response = shopper.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": answer + 1})
    assert response.status_code == 400 and response.json()["msg"] == "wrong or expired captcha answer: try a new one"


def test_result_for_a_sale_never_bought_is_minus_one(shopper):
    assert shopper.get("/seckill/result", {"goodsId": make_sale().pk}).json()["data"] == -1


@pytest.mark.parametrize(
    "method, url, params",
    [
        ("get", "/seckill/verifyCode", {}),
        ("get", "/seckill/verifyCode", {"goodsId": "abc"}),
        ("get", "/seckill/verifyCode", {"goodsId": "-1"}),
        ("get", "/seckill/verifyCode", {"goodsId": "99999999999999999999999"}),
        ("get", "/seckill/verifyCode", {"goodsId": "999999"}),
        ("get", "/seckill/path", {"goodsId": "1"}),
        ("get", "/seckill/path", {"goodsId": "x", "verifyCode": "1"}),
        ("get", "/seckill/path", {"goodsId": "999999", "verifyCode": "1"}),
        ("get", "/seckill/path", {"goodsId": "SALE", "verifyCode": "１２"}),
        ("post", "/seckill/nopath/doSeckill", {}),
        ("post", "/seckill/nopath/doSeckill", {"goodsId": "x"}),
        ("post", "/seckill/nopath/doSeckill", {"goodsId": "SALE"}),
        ("post", "/seckill/nopath/doSeckill", {"goodsId": "999999"}),
        ("get", "/seckill/nopath/doSeckill", {"goodsId": "SALE"}),
        ("get", "/seckill/result", {}),
        ("get", "/seckill/result", {"goodsId": "0"}),
        ("post", "/seckill/result", {"goodsId": "SALE"}),
    ],
)
def test_bad_input_is_a_clear_4xx(shopper, method, url, params):
    sale = make_sale()
    params = {k: (str(sale.pk) if v == "SALE" else v) for k, v in params.items()}
    response = getattr(shopper, method)(url, params)
    assert 400 <= response.status_code < 500, response.content
    body = response.json()
    assert body["code"] != 0 and body["msg"]


@pytest.mark.parametrize(
    "method, url",
    [
        ("get", "/seckill/verifyCode?goodsId=1"),
        ("get", "/seckill/path?goodsId=1&verifyCode=1"),
        ("post", "/seckill/x/doSeckill"),
        ("get", "/seckill/result?goodsId=1"),
    ],
)
def test_not_logged_in_is_401(client, method, url):
    response = getattr(client, method)(url)
    assert response.status_code == 401 and response.json()["msg"] == "please log in first"


def test_do_seckill_needs_the_csrf_token():
    from django.test import Client

    user = make_user()
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    response = browser.post("/seckill/whatever/doSeckill", {"goodsId": make_sale().pk})
    assert response.status_code == 403 and response.json()["code"] != 0


def test_rate_limit_is_429_after_five_in_five_seconds(shopper):
    sale = make_sale()
    answers = [shopper.post("/seckill/nopath/doSeckill", {"goodsId": sale.pk}).status_code for _ in range(7)]
    assert answers[:5] == [403] * 5
    assert answers[5:] == [429, 429]
    assert shopper.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": "1"}).status_code == 400  # per endpoint
