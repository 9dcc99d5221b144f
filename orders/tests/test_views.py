import pytest

from goods.tests.factories import make_sale
from orders.tests.factories import make_order
from users.tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_my_orders_lists_only_mine(client):
    sale, me = make_sale(), make_user()
    mine, theirs = make_order(sale=sale, user=me), make_order(sale=sale)
    client.force_login(me)
    page = client.get("/orders/").content
    assert mine.order_no.encode() in page and theirs.order_no.encode() not in page


def test_order_detail_and_another_shoppers_order_is_404(client):
    sale, me = make_sale(), make_user()
    mine, theirs = make_order(sale=sale, user=me), make_order(sale=sale)
    client.force_login(me)
    assert client.get(f"/orders/{mine.order_no}").status_code == 200
    assert client.get(f"/orders/{theirs.order_no}").status_code == 404
    assert client.get("/orders/nonsense").status_code == 404
    assert client.get("/orders/" + "9" * 300).status_code == 404


def test_orders_need_login(client):
    response = client.get("/orders/")
    assert response.status_code == 302 and response["Location"].startswith("/user/index")
