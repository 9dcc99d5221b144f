"""Numbers and JSON bodies that used to reach a 500: each is a 400 (or 413) with a clear message.
Whole numbers are parsed in one place (seckill_site.http.parse_int) with the column's range;
JSON bodies are capped in size and depth before json.loads sees them."""

import pytest
from django.test import Client
from django.utils import timezone

from goods.models import Goods
from sales.models import Sale
from seckill_site.api import JSON_MAX_BYTES, json_depth
from seckill_site.http import INT32_MAX, parse_int, positive_int
from testutils.clients import api
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}
NOT_NUMBERS = ["--5", "²", "١٢٣", "１２３", "5-", "1e3", "0x10", "+5", " ", "", "9" * 40, "-", "5.0", "1_000"]


@pytest.mark.parametrize("raw", NOT_NUMBERS + [None, True, 1.5, [], {}])
def test_parse_int_takes_ascii_whole_numbers_only(raw):
    assert parse_int(raw, minimum=-(10**9), maximum=10**9) is None
    assert positive_int(raw) is None


def test_parse_int_bounds():
    assert parse_int(" -12 ", minimum=-12, maximum=0) == -12 and parse_int(12, minimum=0, maximum=12) == 12
    assert parse_int("13", minimum=0, maximum=12) is None and parse_int(-13, minimum=-12, maximum=0) is None
    assert positive_int("0") is None and positive_int(str(10**18)) is None and positive_int("007") == 7


@pytest.fixture
def shopper_and_sale():
    shopper, sale = make_user(), make_sale(stock=5)
    return shopper, sale


@pytest.mark.parametrize("answer", NOT_NUMBERS + ["1234567"])
def test_verify_code_that_is_not_a_number_is_400_on_the_page(shopper_and_sale, answer):
    shopper, sale = shopper_and_sale
    browser = Client()
    browser.force_login(shopper)
    response = browser.get("/seckill/path", {"goodsId": sale.pk, "verifyCode": answer})
    assert response.status_code == 400 and "verifyCode" in response.json()["msg"]


@pytest.mark.parametrize("answer", [*NOT_NUMBERS, 10**7, -(10**6), 1.5, True, None, ["5"], {"a": 1}])
def test_verify_code_that_is_not_a_number_is_400_in_the_api(shopper_and_sale, answer):
    from users.tokens import api_token_issue

    shopper, sale = shopper_and_sale
    client = api(api_token_issue(user_id=shopper.pk))
    response = client.post(f"/api/v1/sales/{sale.pk}/path", {"verifyCode": answer}, format="json")
    assert response.status_code == 400 and "verifyCode" in response.json()["msg"]


def test_json_depth_counts_without_recursion():
    assert json_depth(b'{"a": [1, {"b": "[[[["}]}') == 3
    assert json_depth(b"[" * 200_000) == 200_000


@pytest.mark.parametrize("url", ["/api/v1/users/login", "/api/v1/users/register", "/api/v1/merchant/goods"])
def test_deeply_nested_json_is_a_clear_400(url):
    response = api().generic("POST", url, "[" * 200_000, content_type="application/json")
    assert response.status_code in (400, 401), response.content[:200]
    if url.startswith("/api/v1/users/"):
        assert response.status_code == 400 and "nested" in response.json()["msg"]


def test_a_json_body_over_the_limit_is_413():
    body = '{"mobile": "13700000001", "password": "' + "x" * JSON_MAX_BYTES + '"}'
    response = api().generic("POST", "/api/v1/users/login", body, content_type="application/json")
    assert response.status_code == 413 and response.json()["code"] != 0 and "KiB" in response.json()["msg"]


@pytest.fixture
def merchant_client():
    from users.tokens import api_token_issue

    merchant = make_merchant()
    sale = make_sale(goods=make_goods(owner=merchant), stock=5)
    return api(api_token_issue(user_id=merchant.pk)), sale


@pytest.mark.parametrize("delta", [INT32_MAX, INT32_MAX - 4, 2**31, -(2**31), 10**30, -(10**30)])
def test_stock_delta_past_the_column_is_a_clear_400(merchant_client, delta):
    client, sale = merchant_client
    response = client.patch(f"/api/v1/merchant/sales/{sale.pk}", {"stockDelta": delta}, format="json")
    assert response.status_code == 400, response.content[:300]
    assert "stockDelta" in response.json()["msg"] or "stock" in response.json()["msg"]
    assert Sale.objects.get(pk=sale.pk).stock_count == 5


def test_stock_delta_up_to_the_column_is_taken(merchant_client):
    client, sale = merchant_client
    response = client.patch(f"/api/v1/merchant/sales/{sale.pk}", {"stockDelta": INT32_MAX - 5}, format="json")
    assert response.status_code == 200 and response.json()["data"]["stockCount"] == INT32_MAX


@pytest.mark.parametrize("field, value", [("stock", 2**31), ("stock", -1), ("price", "1e400"), ("price", "NaN")])
def test_goods_numbers_past_their_columns_are_400(merchant_client, field, value):
    client, _sale = merchant_client
    body = {"name": "n", "title": "t", "price": "1.00", "stock": 1, field: value}
    response = client.post("/api/v1/merchant/goods", body, format="json")
    assert response.status_code == 400 and field in response.json()["msg"], response.content[:300]
    assert not Goods.objects.filter(name="n").exists()


def test_admin_stock_edit_with_a_forged_initial_value_is_refused(client):
    merchant = make_merchant()
    sale = make_sale(goods=make_goods(owner=merchant), stock=10)
    client.force_login(merchant)
    local = timezone.localtime(sale.start_at)
    end = timezone.localtime(sale.end_at)
    response = client.post(
        f"/admin/sales/sale/{sale.pk}/change/",
        {
            "goods": sale.goods_id,
            "seckill_price": "1.00",
            "stock_count": 15,
            "initial-stock_count": -(10**12),  # forged: the delta would overflow the column
            "start_at_0": local.strftime("%Y-%m-%d"),
            "start_at_1": local.strftime("%H:%M:%S"),
            "end_at_0": end.strftime("%Y-%m-%d"),
            "end_at_1": end.strftime("%H:%M:%S"),
        },
    )
    assert response.status_code < 500
    assert Sale.objects.get(pk=sale.pk).stock_count == 10
