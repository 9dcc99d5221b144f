"""A session or token whose user changed the password or was deactivated is logged out on
every page and endpoint: 401 (or, for pages, a redirect to the login page), never a 500."""

import pytest
from django.test import Client

from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user, session_for

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}

# (method, url): what a logged-out caller must get. Pages redirect to the login page; JSON
# callers and the API get 401. "/user/me" answers `null` data: the list page's fragment.
LOGGED_OUT = [
    ("get", "/orders/"),
    ("get", "/orders/{order}"),
    ("post", "/orders/{order}/pay"),
    ("post", "/orders/{order}/cancel"),
    ("get", "/api/v1/users/me"),
    ("post", "/api/v1/users/logout"),
    ("get", "/api/v1/orders"),
    ("get", "/api/v1/orders/{order}"),
    ("post", "/api/v1/orders/{order}/pay"),
    ("post", "/api/v1/orders/{order}/cancel"),
    ("get", "/api/v1/merchant/goods"),
    ("get", "/api/v1/merchant/sales"),
]


def _stale(user, how: str) -> None:
    if how == "password":
        user.set_password("another-pass-9")
    else:
        user.is_active = False
    user.save()


@pytest.fixture(params=["password", "deactivated"])
def stale(request):
    user = make_user(is_staff=True)
    sale = make_sale(stock=5)
    order = buy(sale=sale, user=user)
    # One session per request: Django drops a session with a stale password hash on first use.
    sessions = [session_for(user) for _ in range(len(LOGGED_OUT) * 2 + 2)]
    _stale(user, request.param)
    return {"sessions": iter(sessions), "order": order.order_no, "sale": sale.pk}


def _browser(session_key: str) -> Client:
    browser = Client(enforce_csrf_checks=False)
    browser.cookies["sessionid"] = session_key
    return browser


@pytest.mark.parametrize("method, url", LOGGED_OUT)
def test_stale_session_is_logged_out_never_500(stale, method, url):
    url = url.format(order=stale["order"], sale=stale["sale"])
    for extra in ({}, JSON):
        response = getattr(_browser(next(stale["sessions"])), method)(url, **extra)
        if url.startswith("/api/"):
            assert response.status_code == 401, (url, response.status_code, response.content[:200])
        elif response.status_code != 401:  # a page: JSON callers of pay/cancel get 401
            assert response.status_code == 302 and response["Location"].startswith("/user/index"), url


def test_stale_session_on_the_user_fragment(stale):
    for extra in ({}, JSON):
        response = _browser(next(stale["sessions"])).get("/user/me", **extra)
        assert response.status_code == 200 and response.json()["data"] is None
