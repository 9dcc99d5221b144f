"""The REST API end to end: a merchant puts a sale on through the API, shoppers buy it
through the API, and stock, orders and figures agree everywhere. Real PostgreSQL and Redis;
the order write is either called in-process (single-threaded tests) or done by a real Celery
worker behind gunicorn."""

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
import requests
from django.utils import timezone
from rest_framework.test import APIClient

from orders.models import Order, Payment
from orders.payments.services import payment_sync
from sales.models import Sale
from sales.sale_state import keys
from seckill.services.writer import sale_flush
from seckill_site.redis import client as redis
from testutils.clients import api
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_merchant, make_user, next_mobile, texted_code
from testutils.providers import alipay_buyer_pays, alipay_cashier_open
from users.tokens import api_token_issue

pytestmark = pytest.mark.django_db


def body(response, status: int = 200) -> dict:
    assert response.status_code == status, (response.status_code, response.content[:400])
    return response.json()


def solve_and_buy(client: APIClient, user_id: int, sale_id: int) -> dict:
    assert client.get(f"/api/v1/sales/{sale_id}/captcha")["Content-Type"] == "image/png"
    answer = int(redis().get(keys.captcha(sale_id, user_id)))
    path = body(client.post(f"/api/v1/sales/{sale_id}/path", {"verifyCode": answer}, format="json"))["data"]["path"]
    return body(client.post(f"/api/v1/sales/{sale_id}/buy/{path}"))


def test_a_merchant_creates_a_sale_and_shoppers_buy_it_all_through_the_api(flushes, django_capture_on_commit_callbacks):
    make_merchant(mobile="13900000001", password=PASSWORD)
    login = body(api().post("/api/v1/users/login", {"mobile": "13900000001", "password": PASSWORD}, format="json"))
    merchant = api(login["data"]["token"])

    goods = body(
        merchant.post(
            "/api/v1/merchant/goods",
            {"name": "API phone", "title": "Bought by API", "price": "1999.00", "stock": 50},
            format="json",
        ),
        201,
    )["data"]
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        sale = body(
            merchant.post(
                "/api/v1/merchant/sales",
                {
                    "goodsId": goods["id"],
                    "seckillPrice": "9.90",
                    "stockCount": 2,
                    "startAt": (now - timedelta(seconds=5)).isoformat(),
                    "endAt": (now + timedelta(hours=1)).isoformat(),
                },
                format="json",
            ),
            201,
        )["data"]
    # Pre-heated at once: the gate can sell it without a warm command.
    assert int(redis().get(keys.stock(sale["id"]))) == 2
    listed = body(api().get("/api/v1/sales"))["data"]["results"]
    assert [(row["id"], row["stockLeft"], row["status"]) for row in listed] == [(sale["id"], 2, 1)]

    shoppers = []
    for _ in range(3):
        mobile = next_mobile()
        sent = {"mobile": mobile, "password": PASSWORD, "code": texted_code(mobile)}
        registered = body(api().post("/api/v1/users/register", sent, format="json"), 201)
        shoppers.append((registered["data"]["user"]["id"], api(registered["data"]["token"])))

    answers = [solve_and_buy(client, user_id, sale["id"]) for user_id, client in shoppers]
    assert [answer["code"] for answer in answers] == [0, 0, 500500]  # the third finds it sold out
    first_id, first = shoppers[0]
    assert body(first.get(f"/api/v1/sales/{sale['id']}/result"))["data"] == {"orderId": 0, "state": "queued"}
    for sale_id in flushes:
        sale_flush(sale_id=sale_id)
    result = body(first.get(f"/api/v1/sales/{sale['id']}/result"))["data"]
    assert result["state"] == "ordered" and result["orderId"] > 0
    assert body(shoppers[2][1].get(f"/api/v1/sales/{sale['id']}/result"))["data"]["state"] == "failed"

    # A second try is refused (this process's sold-out mark answers before the buyer set).
    assert solve_and_buy(first, first_id, sale["id"])["code"] in (500500, 500501)

    orders = body(first.get("/api/v1/orders"))["data"]
    assert orders["count"] == 1 and orders["results"][0]["status"] == "unpaid"
    # Paying needs an address to ship to: refused without one, then to the one added.
    order_no = orders["results"][0]["orderNo"]
    refused = body(first.post(f"/api/v1/orders/{order_no}/pay", format="json"), 400)
    assert refused["code"] == 500602
    address = {
        "recipient": "张三",
        "phone": "13712345678",
        "region": "浙江省",
        "city": "杭州市",
        "district": "西湖区",
        "street": "文三路 1 号",
    }
    address_id = body(first.post("/api/v1/users/addresses", address, format="json"), 201)["data"]["id"]
    started = body(first.post(f"/api/v1/orders/{order_no}/pay", {"addressId": address_id}, format="json"))["data"]
    # Alipay's cashier, as the shopper's browser opens it, and the buyer's "pay" there.
    alipay_cashier_open(started["redirectUrl"])
    alipay_buyer_pays(started["tradeNo"])
    assert body(first.get(f"/api/v1/orders/{order_no}"))["data"]["payment"]["paying"] is True
    payment_sync(payment=Payment.objects.get(trade_no=started["tradeNo"]))  # what the query sweep does
    paid = body(first.get(f"/api/v1/orders/{order_no}"))["data"]
    assert paid["status"] == "paid" and paid["paidAt"] and paid["address"]["street"] == "文三路 1 号"
    refused = body(first.post(f"/api/v1/orders/{paid['orderNo']}/cancel"), 409)
    assert refused["code"] == 500601 and "paid" in refused["msg"]

    second_order = body(shoppers[1][1].get("/api/v1/orders"))["data"]["results"][0]
    with django_capture_on_commit_callbacks(execute=True):
        cancelled = body(shoppers[1][1].post(f"/api/v1/orders/{second_order['orderNo']}/cancel"))["data"]
    assert cancelled["status"] == "cancelled"

    figures = body(merchant.get(f"/api/v1/merchant/sales/{sale['id']}/figures"))["data"]
    assert (figures["stockDatabase"], figures["stockRedis"]) == (1, 1)
    assert (figures["unpaid"], figures["paid"], figures["cancelled"]) == (0, 1, 1)
    assert Order.objects.filter(sale_id=sale["id"]).count() == 2
    assert Sale.objects.get(pk=sale["id"]).stock_count == 1


def test_an_edited_sale_reaches_redis_at_once_and_stock_edits_are_differences(django_capture_on_commit_callbacks):
    merchant = make_merchant()
    sale = make_sale(goods=None, stock=5, starts_in=600)
    sale.goods.owner = merchant
    sale.goods.save()
    client = api(api_token_issue(user_id=merchant.pk))
    start = timezone.now() - timedelta(seconds=1)
    with django_capture_on_commit_callbacks(execute=True):
        edited = body(
            client.patch(
                f"/api/v1/merchant/sales/{sale.pk}",
                {"startAt": start.isoformat(), "stockDelta": -2, "seckillPrice": "2.50"},
                format="json",
            )
        )["data"]
    assert (edited["stockCount"], edited["seckillPrice"], edited["status"]) == (3, "2.50", 1)
    assert int(redis().get(keys.stock(sale.pk))) == 3
    assert float(redis().hget(keys.window(sale.pk), "start")) == pytest.approx(start.timestamp())

    refused = body(
        client.patch(f"/api/v1/merchant/sales/{sale.pk}", {"stockDelta": -4, "seckillPrice": "1"}, format="json"), 400
    )
    assert "Not enough units" in refused["msg"]
    sale.refresh_from_db()
    assert (sale.stock_count, str(sale.seckill_price)) == (3, "2.50")  # nothing changed, price included

    bad = body(
        client.patch(
            f"/api/v1/merchant/sales/{sale.pk}", {"endAt": (start - timedelta(hours=1)).isoformat()}, format="json"
        ),
        400,
    )
    assert bad["code"] == 500101 and "end" in bad["msg"]


def test_a_merchant_cannot_put_a_sale_on_someone_elses_goods():
    sale = make_sale()
    other = make_merchant()
    client = api(api_token_issue(user_id=other.pk))
    now = timezone.now()
    answer = body(
        client.post(
            "/api/v1/merchant/sales",
            {
                "goodsId": sale.goods_id,
                "seckillPrice": "1",
                "stockCount": 1,
                "startAt": now.isoformat(),
                "endAt": (now + timedelta(hours=1)).isoformat(),
            },
            format="json",
        ),
        400,
    )
    assert "goodsId" in answer["data"]
    assert Sale.objects.count() == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_merchant_puts_a_sale_on_and_shoppers_race_for_it_over_http(gunicorn_server, celery_worker):
    """All through gunicorn and a real Celery worker: the merchant logs in and creates the
    sale through the API (pre-heated by the request's own commit), then forty shoppers with
    tokens press buy at once for twelve units."""
    stock, buyers = 12, 40
    make_merchant(mobile="13900000009", password=PASSWORD)
    merchant = requests.Session()
    login = merchant.post(
        f"{gunicorn_server}/api/v1/users/login", json={"mobile": "13900000009", "password": PASSWORD}, timeout=10
    )
    merchant.headers["Authorization"] = f"Token {login.json()['data']['token']}"
    goods = merchant.post(
        f"{gunicorn_server}/api/v1/merchant/goods", json={"name": "Raced", "title": "t", "price": "10.00"}, timeout=10
    ).json()["data"]
    now = timezone.now()
    created = merchant.post(
        f"{gunicorn_server}/api/v1/merchant/sales",
        json={
            "goodsId": goods["id"],
            "seckillPrice": "1.00",
            "stockCount": stock,
            "startAt": (now - timedelta(seconds=1)).isoformat(),
            "endAt": (now + timedelta(hours=1)).isoformat(),
        },
        timeout=10,
    )
    assert created.status_code == 201, created.content
    sale_id = created.json()["data"]["id"]
    assert int(redis().get(keys.stock(sale_id))) == stock

    shoppers = []
    for user in [make_user() for _ in range(buyers)]:
        http = requests.Session()
        http.headers["Authorization"] = f"Token {api_token_issue(user_id=user.pk)}"
        http.get(f"{gunicorn_server}/api/v1/sales/{sale_id}/captcha", timeout=10).raise_for_status()
        answer = int(redis().get(keys.captcha(sale_id, user.pk)))
        path = http.post(f"{gunicorn_server}/api/v1/sales/{sale_id}/path", json={"verifyCode": answer}, timeout=10)
        shoppers.append((user, http, path.json()["data"]["path"]))

    def buy(shopper):
        user, http, path = shopper
        return user.pk, http.post(f"{gunicorn_server}/api/v1/sales/{sale_id}/buy/{path}", timeout=30).json()["code"]

    with ThreadPoolExecutor(max_workers=buyers) as pool:
        answers = dict(pool.map(buy, shoppers))
    queued = {user_id for user_id, code in answers.items() if code == 0}
    assert len(queued) == stock and set(answers.values()) == {0, 500500}

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        results = {
            user.pk: http.get(f"{gunicorn_server}/api/v1/sales/{sale_id}/result", timeout=10).json()["data"]
            for user, http, _path in shoppers
        }
        if all(result["state"] != "queued" for result in results.values()):
            break
        time.sleep(0.2)
    ordered = {user_id for user_id, result in results.items() if result["state"] == "ordered"}
    assert ordered == queued  # every shopper told "queued" got an order, nobody else did
    assert {result["state"] for user_id, result in results.items() if user_id not in queued} == {"failed"}
    orders = Order.objects.filter(sale_id=sale_id)
    assert orders.count() == stock and orders.values("user_id").distinct().count() == stock
    assert Sale.objects.get(pk=sale_id).stock_count == 0 == int(redis().get(keys.stock(sale_id)))
    figures = merchant.get(f"{gunicorn_server}/api/v1/merchant/sales/{sale_id}/figures", timeout=10).json()["data"]
    assert (figures["stockDatabase"], figures["stockRedis"], figures["unpaid"], figures["inFlight"]) == (0, 0, stock, 0)
