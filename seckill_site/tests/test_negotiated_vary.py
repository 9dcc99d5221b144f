"""A URL that answers a page or JSON by the request's headers (seckill_site.http.wants_json)
says so in Vary, whichever it answered, so no cache, the browser's included, hands one to a
request for the other; everybody's answers, which never ask, stay one answer per URL."""

import pytest
from django.test import Client
from django.utils.cache import has_vary_header

from seckill_site.http import NEGOTIATED_BY
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user

pytestmark = pytest.mark.django_db

AS_PAGE = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}
AS_JSON = {"HTTP_ACCEPT": "application/json"}
AS_XHR = {"HTTP_X_REQUESTED_WITH": "XMLHttpRequest"}


@pytest.fixture
def me():
    return make_user()


@pytest.fixture
def shopper(me) -> Client:
    client = Client()
    client.force_login(me)
    return client


def _varies(answer) -> bool:
    return all(has_vary_header(answer, header) for header in NEGOTIATED_BY)


@pytest.mark.parametrize("asks", [AS_PAGE, AS_JSON, AS_XHR], ids=["page", "json", "xhr"])
def test_an_order_answered_either_way_varies_on_what_was_asked(shopper, me, asks):
    order = buy(sale=make_sale(), user=me)
    answer = shopper.get(f"/orders/{order.order_no}", **asks)
    assert answer.status_code == 200
    assert _varies(answer), answer.headers.get("Vary")


@pytest.mark.parametrize("asks", [AS_PAGE, AS_JSON], ids=["page", "json"])
def test_a_refusal_answered_either_way_varies_too(shopper, asks):
    answer = shopper.get("/orders/0", **asks)
    assert answer.status_code == 404
    assert _varies(answer), answer.headers.get("Vary")


def test_everybodys_answers_do_not_split_the_edges_copy_by_accept():
    sale = make_sale()
    for path in ("/goods/goodsList", f"/goods/detail/{sale.pk}", f"/zh-hans/goods/detail/{sale.pk}", "/jsi18n/"):
        answer = Client().get(path, **AS_JSON)
        assert answer.status_code == 200, path
        assert not has_vary_header(answer, "Accept"), (path, answer.headers.get("Vary"))
