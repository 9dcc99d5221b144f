"""Who may call what in the REST API, token authentication cached in Redis (no PostgreSQL on
the gate's endpoints), token revocation, browser sessions, and the throttles shared with the pages."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from sales.sale_state import keys
from seckill_site.redis import client as redis
from testutils.clients import api
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_address, make_merchant, make_user, texted_code
from users.models import User
from users.tokens import _token_cache_key, api_token_issue

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    merchant_a, merchant_b = make_merchant(), make_merchant()
    shopper = make_user()
    superuser = User.objects.create_superuser(mobile="13999999999", password=PASSWORD)
    goods = make_goods(owner=merchant_a)
    sale = make_sale(goods=goods, stock=5)
    order = buy(sale=sale, user=shopper)
    address = make_address(shopper)  # so paying has an address to ship to
    return {
        "address": address,
        "anonymous": None,
        "shopper": shopper,
        "merchant_a": merchant_a,
        "merchant_b": merchant_b,
        "superuser": superuser,
        "goods": goods,
        "sale": sale,
        "order": order,
    }


ROLES = ("anonymous", "shopper", "merchant_a", "merchant_b", "superuser")


def _sale_body(world):
    now = timezone.now()
    return {
        "goodsId": world["goods"].pk,
        "seckillPrice": "1.00",
        "stockCount": 3,
        "startAt": now.isoformat(),
        "endAt": (now + timedelta(hours=1)).isoformat(),
    }


# (method, url, body, expected status per role in ROLES order)
MATRIX = [
    ("get", "/api/v1/sales", None, (200, 200, 200, 200, 200)),
    ("get", "/api/v1/sales/{sale}", None, (200, 200, 200, 200, 200)),
    ("get", "/api/v1/sales/{sale}/captcha", None, (401, 200, 200, 200, 200)),
    ("post", "/api/v1/sales/{sale}/path", {"verifyCode": 1000}, (401, 400, 400, 400, 400)),
    ("post", "/api/v1/sales/{sale}/buy/not-a-path", None, (401, 403, 403, 403, 403)),
    ("get", "/api/v1/sales/{sale}/result", None, (401, 200, 200, 200, 200)),
    ("get", "/api/v1/orders", None, (401, 200, 200, 200, 200)),
    ("get", "/api/v1/orders/{order}", None, (401, 200, 404, 404, 404)),
    ("post", "/api/v1/orders/{order}/pay", None, (401, 200, 404, 404, 404)),
    ("post", "/api/v1/orders/{order}/cancel", None, (401, 200, 404, 404, 404)),
    # The shopper's order is unpaid: nothing to send back, no thread (409); anyone else's a 404.
    ("post", "/api/v1/orders/{order}/return-request", {"reason": "damaged"}, (401, 409, 404, 404, 404)),
    ("delete", "/api/v1/orders/{order}/return-request", None, (401, 409, 404, 404, 404)),
    (
        "post",
        "/api/v1/orders/{order}/return-request/parcel",
        {"carrier": "sf", "trackingNo": "SF1"},
        (401, 409, 404, 404, 404),
    ),
    ("post", "/api/v1/orders/{order}/messages", {"text": "Hi"}, (401, 409, 404, 404, 404)),
    ("get", "/api/v1/users/me", None, (401, 200, 200, 200, 200)),
    ("get", "/api/v1/users/addresses", None, (401, 200, 200, 200, 200)),
    ("post", "/api/v1/users/addresses", "ADDRESS", (401, 201, 201, 201, 201)),
    ("get", "/api/v1/users/addresses/{address}", None, (401, 200, 404, 404, 404)),
    ("patch", "/api/v1/users/addresses/{address}", {"city": "宁波市", "district": "海曙区"}, (401, 200, 404, 404, 404)),
    ("post", "/api/v1/users/addresses/{address}/default", None, (401, 200, 404, 404, 404)),
    ("delete", "/api/v1/users/addresses/{address}", None, (401, 200, 404, 404, 404)),
    ("post", "/api/v1/users/logout", None, (401, 200, 200, 200, 200)),
    ("post", "/api/v1/users/login", {"mobile": "13999999999", "password": PASSWORD}, (200, 200, 200, 200, 200)),
    ("post", "/api/v1/users/register", "REGISTER", (201, 201, 201, 201, 201)),
    ("get", "/api/v1/merchant/goods", None, (401, 403, 200, 200, 200)),
    ("post", "/api/v1/merchant/goods", {"name": "n", "title": "t", "price": "1.00"}, (401, 403, 201, 201, 201)),
    ("get", "/api/v1/merchant/goods/{goods}", None, (401, 403, 200, 404, 200)),
    ("patch", "/api/v1/merchant/goods/{goods}", {"title": "renamed"}, (401, 403, 200, 404, 200)),
    ("get", "/api/v1/merchant/sales", None, (401, 403, 200, 200, 200)),
    ("post", "/api/v1/merchant/sales", "SALE", (401, 403, 201, 400, 201)),
    ("get", "/api/v1/merchant/sales/{sale}", None, (401, 403, 200, 404, 200)),
    ("patch", "/api/v1/merchant/sales/{sale}", {"seckillPrice": "2.00"}, (401, 403, 200, 404, 200)),
    ("get", "/api/v1/merchant/sales/{sale}/figures", None, (401, 403, 200, 404, 200)),
]


@pytest.mark.parametrize("role_index, role", list(enumerate(ROLES)))
@pytest.mark.parametrize("method, url, payload, expected", MATRIX, ids=[f"{m} {u}" for m, u, _p, _e in MATRIX])
def test_authorisation_matrix(world, role_index, role, method, url, payload, expected):
    user = world[role]
    client = api(api_token_issue(user_id=user.pk) if user else None)
    url = url.format(
        sale=world["sale"].pk, goods=world["goods"].pk, order=world["order"].order_no, address=world["address"].pk
    )
    data = _sale_body(world) if payload == "SALE" else payload
    if payload == "ADDRESS":
        data = {
            "recipient": "张三",
            "phone": "13712345678",
            "region": "浙江省",
            "city": "杭州市",
            "district": "西湖区",
            "street": "文三路 1 号",
        }
    if payload == "REGISTER":
        data = {"mobile": "13888888888", "password": PASSWORD, "code": texted_code("13888888888")}
    response = getattr(client, method)(url, data, format="json") if data else getattr(client, method)(url)
    assert response.status_code == expected[role_index], response.content[:300]
    if response["Content-Type"] == "application/json":
        body = response.json()
        assert set(body) == {"code", "msg", "data"} and (body["code"] == 0) == (response.status_code < 300)
    if response.status_code == 401:
        assert response.json()["code"] == 500210 and response["WWW-Authenticate"] == "Token"
    if response.status_code == 403 and "merchant" in url:
        assert response.json()["code"] == 500211


def test_merchant_lists_hold_only_their_own_rows(world):
    make_sale(goods=make_goods(owner=world["merchant_b"]))
    for role, expected_owner in (("merchant_a", "merchant_a"), ("merchant_b", "merchant_b")):
        client = api(api_token_issue(user_id=world[role].pk))
        goods = client.get("/api/v1/merchant/goods").json()["data"]["results"]
        assert {row["ownerId"] for row in goods} == {world[expected_owner].pk}
        sales = client.get("/api/v1/merchant/sales").json()["data"]["results"]
        assert len(sales) == 1 and sales[0]["goodsId"] == goods[0]["id"]
    everything = api(api_token_issue(user_id=world["superuser"].pk)).get("/api/v1/merchant/sales").json()
    assert everything["data"]["count"] == 2


def test_the_gate_endpoints_never_query_postgresql(world, django_assert_num_queries, monkeypatch):
    from seckill.tasks import order_flush, order_write

    for task in (order_write, order_flush):
        monkeypatch.setattr(task, "apply_async", lambda **kwargs: None)  # no broker in this test
    shopper = make_user()
    client = api(api_token_issue(user_id=shopper.pk))
    sale = world["sale"]
    api().get(f"/api/v1/sales/{sale.pk}")  # the sale's cache is filled by any first visitor
    with django_assert_num_queries(0):
        assert client.get(f"/api/v1/sales/{sale.pk}/captcha").status_code == 200
        answer = int(redis().get(keys.captcha(sale.pk, shopper.pk)))
        path = client.post(f"/api/v1/sales/{sale.pk}/path", {"verifyCode": answer}, format="json").json()["data"]
        bought = client.post(f"/api/v1/sales/{sale.pk}/buy/{path['path']}").json()
        assert bought["code"] == 0 and bought["data"]["status"] == "queued"
        assert client.get(f"/api/v1/sales/{sale.pk}/result").json()["data"]["state"] == "queued"


def test_a_token_is_read_from_the_database_once_then_from_redis(world, django_assert_num_queries):
    token = api_token_issue(user_id=world["shopper"].pk)
    redis().delete(_token_cache_key(token))
    client = api(token)
    with django_assert_num_queries(1):
        client.get(f"/api/v1/sales/{world['sale'].pk}/result")
    assert int(redis().get(_token_cache_key(token)).split(b":")[0]) == world["shopper"].pk
    assert 0 < redis().ttl(_token_cache_key(token)) <= 30 * 60
    with django_assert_num_queries(0):
        client.get(f"/api/v1/sales/{world['sale'].pk}/result")


def test_logout_revokes_the_token_at_once(world):
    login = (
        api()
        .post("/api/v1/users/login", {"mobile": world["shopper"].mobile, "password": PASSWORD}, format="json")
        .json()
    )
    token = login["data"]["token"]
    client = api(token)
    assert client.get("/api/v1/users/me").json()["data"]["id"] == world["shopper"].pk
    assert client.post("/api/v1/users/logout").status_code == 200
    assert redis().get(_token_cache_key(token)) == b"0"  # marked revoked, not merely forgotten
    gone = client.get(f"/api/v1/sales/{world['sale'].pk}/result")
    assert gone.status_code == 401 and gone.json()["msg"] == "invalid or revoked token"
    again = api().post("/api/v1/users/login", {"mobile": world["shopper"].mobile, "password": PASSWORD}, format="json")
    assert again.json()["data"]["token"] != token


@pytest.mark.parametrize("header", ["Token", "Token a b", "Token nope", "Token " + "x" * 500, "Bearer abc"])
def test_bad_tokens_are_a_401_envelope(world, header, django_assert_max_num_queries):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get("/api/v1/users/me")
    assert response.status_code == 401 and response.json()["code"] == 500210
    with django_assert_max_num_queries(0):  # an unknown token is remembered in Redis
        client.get(f"/api/v1/sales/{world['sale'].pk}/result")


def test_wrong_password_and_bad_input_answer_like_the_login_page(world):
    wrong = api().post(
        "/api/v1/users/login", {"mobile": world["shopper"].mobile, "password": "nope-nope"}, format="json"
    )
    assert wrong.status_code == 400 and wrong.json()["code"] == 500215
    bad = api().post("/api/v1/users/login", {"mobile": "12"}, format="json")
    assert bad.status_code == 400 and "mobile" in bad.json()["data"] and "password" in bad.json()["data"]
    taken = api().post(
        "/api/v1/users/register",
        {"mobile": world["shopper"].mobile, "password": PASSWORD, "code": "123456"},
        format="json",
    )
    # Without the number's code nobody learns whether it has an account (the code is checked first).
    assert taken.status_code == 400 and "already registered" not in taken.json()["msg"]
    assert "code" in taken.json()["data"]
    form = api().post("/api/v1/users/login", {"mobile": world["shopper"].mobile, "password": PASSWORD})
    assert form.status_code == 415  # JSON only: no login CSRF from an HTML form


def test_browser_sessions_work_and_need_csrf_for_unsafe_methods(world):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(world["shopper"])
    assert browser.get(f"/api/v1/sales/{world['sale'].pk}/result").json()["data"]["state"] == "ordered"
    assert browser.get("/api/v1/orders").json()["data"]["count"] == 1
    refused = browser.post(f"/api/v1/sales/{world['sale'].pk}/buy/x")
    assert refused.status_code == 403 and "CSRF" in refused.json()["msg"]
    browser.get("/user/index")  # sets the CSRF cookie
    csrf = browser.cookies["csrftoken"].value
    answered = browser.post(f"/api/v1/sales/{world['sale'].pk}/buy/x", HTTP_X_CSRFTOKEN=csrf)
    assert answered.status_code == 403 and answered.json()["code"] == 500504  # the gate's "invalid path"


def test_path_and_buy_share_the_pages_five_per_five_seconds(world):
    shopper = world["shopper"]
    browser = Client()
    browser.force_login(shopper)
    client = api(api_token_issue(user_id=shopper.pk))
    sale = world["sale"]
    for _ in range(3):
        assert browser.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": 1}).status_code == 400
    for _ in range(2):
        assert client.post(f"/api/v1/sales/{sale.pk}/path", {"verifyCode": 1}, format="json").status_code == 400
    limited = client.post(f"/api/v1/sales/{sale.pk}/path", {"verifyCode": 1}, format="json")
    assert limited.status_code == 429 and limited.json()["code"] == 500429 and limited["Retry-After"] == "5"
    # Buying: the page and the API count in one place (reserve.lua), per shopper and sale.
    other_sale = make_sale(stock=5)
    for _ in range(2):
        assert browser.post("/seckill/x/doSeckill", {"goodsId": other_sale.pk}).status_code == 403
    for _ in range(3):
        assert client.post(f"/api/v1/sales/{other_sale.pk}/buy/x").status_code == 403
    limited = client.post(f"/api/v1/sales/{other_sale.pk}/buy/x")
    assert limited.status_code == 429 and limited.json()["code"] == 500429
    assert 0 < int(limited["Retry-After"]) <= 5
    assert browser.post("/seckill/x/doSeckill", {"goodsId": other_sale.pk}).status_code == 429


def test_login_is_limited_per_mobile_number(world, ratelimit_clock):
    mobile = world["shopper"].mobile
    for _ in range(10):
        api().post("/api/v1/users/login", {"mobile": mobile, "password": "wrong-one"}, format="json")
    limited = api().post("/api/v1/users/login", {"mobile": mobile, "password": PASSWORD}, format="json")
    assert limited.status_code == 429 and limited.json()["code"] == 500429
    other = api().post(
        "/api/v1/users/login", {"mobile": world["merchant_a"].mobile, "password": PASSWORD}, format="json"
    )
    assert other.status_code == 200


def test_pagination_and_bad_pages(world):
    for _ in range(3):
        make_sale()
    page = api().get("/api/v1/sales", {"pageSize": 2}).json()["data"]
    assert page["count"] == 4 and len(page["results"]) == 2 and page["next"]
    assert api().get("/api/v1/sales", {"page": 99}).status_code == 404
    assert api().get("/api/v1/sales", {"page": "x"}).json()["code"] == 500404


@pytest.mark.parametrize(
    "url", ["/api/v1/sales/0", "/api/v1/sales/abc", "/api/v1/sales/99999999999999999999999", "/api/v1/nothing"]
)
def test_unknown_ids_and_urls_are_a_404_envelope(world, url):
    response = api().get(url)
    assert response.status_code == 404 and response.json()["code"] == 500404


def test_wrong_method_is_a_405_envelope(world):
    response = api().delete("/api/v1/sales")
    assert response.status_code == 405 and response.json()["code"] == 500405


def test_the_schema_and_docs_pages_are_served_without_a_cdn():
    schema = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200 and "/api/v1/sales/{sale_id}/buy/{path}" in schema.json()["paths"]
    docs = Client().get("/api/docs/").content.decode()
    assert "swagger-ui" in docs and "cdn" not in docs.lower()
    # No Redoc: its bundle fetches its maker's logo from their CDN on every visit, and needs
    # inline styles and blob workers that the Content-Security-Policy refuses.
    assert Client().get("/api/redoc/").status_code == 404
