"""Every endpoint fed generated bad input (wrong types, huge and negative numbers, unicode,
missing and extra fields, oversized bodies, other users' ids): never a 5xx, never a change."""

import pytest
from django.test import Client
from django.urls import Resolver404
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orders.models import Order
from sales.models import Sale
from testutils.factories.orders import make_order
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from testutils.fuzzing import BOUNDARY_INTEGERS, ODD_NUMBER_TEXT, UNICODE_DIGITS, record
from users.revocation import user_auth_revoke

pytestmark = pytest.mark.django_db

junk_text = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=300),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["", " ", "0", "-1", "1e9", "null", "[]", "{}", "' OR 1=1 --", "%00", "../../etc/passwd",
                     "１２３", "9" * 100, "<script>x</script>"]),
    st.sampled_from(UNICODE_DIGITS + ODD_NUMBER_TEXT),
    st.sampled_from(BOUNDARY_INTEGERS).map(str),
)  # fmt: skip
params = st.dictionaries(
    st.sampled_from(["goodsId", "verifyCode", "mobile", "password", "nickname", "password_again", "next", "x"]),
    junk_text,
    max_size=5,
)
FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture
def world():
    """A shopper with a session, a sale, and another shopper's order to poke at."""
    shopper, sale = make_user(), make_sale(stock=5)
    theirs = make_order(sale=sale)
    browser = Client()
    browser.force_login(shopper)
    # A session whose user was deactivated after logging in: logged out everywhere, never a 500.
    deactivated = make_user()
    stale = Client()
    stale.force_login(deactivated)
    deactivated.is_active = False
    deactivated.save()
    user_auth_revoke(user_id=deactivated.pk)
    return {"client": browser, "stale": stale, "sale": sale, "theirs": theirs}


def snapshot(world):
    return (
        Sale.objects.get(pk=world["sale"].pk).stock_count,
        list(Order.objects.order_by("pk").values_list("status", flat=True)),
    )


def assert_no_5xx(response):
    try:
        route = "/" + response.resolver_match.route
    except Resolver404:  # the test client resolves the path lazily; junk paths have no route
        route = "(no route)"
    record(f"{response.request['REQUEST_METHOD']} {route} (pages)", response.status_code)
    assert response.status_code < 500, (response.status_code, response.content[:300])


@pytest.mark.parametrize("method, url", [
    ("get", "/seckill/verifyCode"), ("get", "/seckill/path"), ("get", "/seckill/result"),
    ("post", "/user/login"), ("post", "/user/register"), ("get", "/goods/goodsList"),
])  # fmt: skip
@pytest.mark.slow
@FUZZ
@given(data=params)
def test_query_and_form_endpoints(world, method, url, data):
    before = snapshot(world)
    assert_no_5xx(getattr(world["client"], method)(url, data))
    assert snapshot(world) == before


@pytest.mark.slow
@FUZZ
@given(segment=junk_text, data=params)
def test_path_segments(world, segment, data):
    client, before = world["client"], snapshot(world)
    segment = segment.replace("/", "_")[:200] or "x"
    anonymous = Client()
    for response in (
        anonymous.post(f"/orders/{segment}/pay", data),
        anonymous.post(f"/seckill/{segment}/doSeckill", data),
        client.post(f"/seckill/{segment}/doSeckill", data),
        client.get(f"/goods/getDetails/{segment}"),
        client.get(f"/goods/detail/{segment}"),
        client.get(f"/orders/{segment}"),
        client.post(f"/orders/{segment}/pay", data, HTTP_ACCEPT="application/json"),
        client.post(f"/orders/{segment}/cancel", data),
        world["stale"].post(f"/orders/{segment}/pay", data, HTTP_ACCEPT="application/json"),
        world["stale"].post(f"/orders/{world['theirs'].order_no}/cancel", data),
        world["stale"].post(f"/seckill/{segment}/doSeckill", data),
        world["stale"].get("/user/me"),
    ):
        assert_no_5xx(response)
    assert snapshot(world) == before


@pytest.mark.slow
@FUZZ
@given(
    body=st.binary(max_size=4096),
    content_type=st.sampled_from(
        ["application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain"]
    ),
)
def test_raw_bodies(world, body, content_type):
    client, before = world["client"], snapshot(world)
    theirs = world["theirs"].order_no
    for url in ("/user/login", "/seckill/abc/doSeckill", f"/orders/{theirs}/pay", f"/orders/{theirs}/cancel"):
        assert_no_5xx(client.generic("POST", url, body, content_type=content_type))
    assert snapshot(world) == before


def test_oversized_body_is_refused_cleanly(world):
    response = world["client"].post("/user/login", {"mobile": "1" * 3_000_000, "password": "x"})
    assert response.status_code in (400, 413)
