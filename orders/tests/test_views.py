import pytest

from orders.models import Order
from testutils.factories.orders import make_order
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user

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


JSON = {"HTTP_ACCEPT": "application/json"}


def test_pay_and_cancel_through_the_pages(client):
    from testutils.factories.orders import buy
    from testutils.factories.users import make_address
    from testutils.providers import alipay_buyer_pays, alipay_cashier_open

    sale, me = make_sale(stock=3), make_user()
    make_address(me)
    client.force_login(me)
    to_pay, to_cancel = buy(sale=sale, user=me), buy(sale=make_sale(), user=me)
    page = client.get(f"/orders/{to_pay.order_no}").content
    assert f'action="/orders/{to_pay.order_no}/pay"'.encode() in page
    cashier = client.post(f"/orders/{to_pay.order_no}/pay", {"method": "alipay"})
    assert cashier.status_code == 302
    alipay_cashier_open(cashier["Location"])
    alipay_buyer_pays(to_pay.payments.get().trade_no)
    assert client.post(f"/orders/{to_pay.order_no}/paying", **JSON).json()["data"]["status"] == "paid"
    assert client.post(f"/orders/{to_cancel.order_no}/cancel", **JSON).json()["data"]["status"] == "cancelled"
    to_pay.refresh_from_db()
    assert to_pay.status == "paid"
    refused = client.post(f"/orders/{to_pay.order_no}/cancel", **JSON)
    assert refused.status_code == 409 and "already paid" in refused.json()["msg"]
    refused = client.post(f"/orders/{to_cancel.order_no}/pay", **JSON)
    assert refused.status_code == 409 and "cancelled" in refused.json()["msg"]
    follow = client.post(f"/orders/{to_pay.order_no}/cancel", follow=True)
    assert b"already paid" in follow.content  # the page shows the refusal


@pytest.mark.parametrize("action", ["pay", "cancel"])
def test_order_actions_on_bad_input(client, action):
    sale, me = make_sale(), make_user()
    theirs = make_order(sale=sale)
    assert client.post(f"/orders/{theirs.order_no}/{action}", **JSON).status_code == 401
    client.force_login(me)
    assert client.post(f"/orders/{theirs.order_no}/{action}", **JSON).status_code == 404
    assert client.post(f"/orders/{theirs.order_no}/{action}").status_code == 404
    assert client.post(f"/orders/{'x' * 500}/{action}", **JSON).status_code == 404
    # Pay is a POST only; cancel's GET is its confirmation page, for one's own orders only.
    assert client.get(f"/orders/{theirs.order_no}/{action}").status_code == (405 if action == "pay" else 404)
    theirs.refresh_from_db()
    assert theirs.status == "unpaid"


def test_order_link_by_id_redirects_to_the_order(client):
    sale, me = make_sale(), make_user()
    mine, theirs = make_order(sale=sale, user=me), make_order(sale=sale)
    client.force_login(me)
    assert client.get(f"/orders/?order={mine.pk}")["Location"] == f"/orders/{mine.order_no}"
    assert client.get(f"/orders/?order={theirs.pk}").status_code == 200  # just the list
    assert client.get("/orders/?order=abc").status_code == 200


def test_merchant_cancels_unpaid_orders_from_the_admin(client, django_capture_on_commit_callbacks):
    from testutils.factories.goods import make_goods
    from testutils.factories.orders import buy, pay
    from testutils.factories.users import make_merchant

    merchant = make_merchant()
    sale = make_sale(goods=make_goods(owner=merchant), stock=5)
    unpaid, paid = buy(sale=sale, user=make_user()), buy(sale=sale, user=make_user())
    pay(paid)
    other = buy(sale=make_sale(stock=5), user=make_user())  # another merchant's order
    client.force_login(merchant)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/admin/orders/order/",
            {"action": "cancel_unpaid", "_selected_action": [unpaid.pk, paid.pk, other.pk]},
            follow=True,
        )
    assert b"Cancelled 1 order." in response.content
    statuses = {o.pk: o.status for o in Order.objects.all()}
    assert statuses == {unpaid.pk: "cancelled", paid.pk: "paid", other.pk: "unpaid"}
    from sales.models import Sale

    assert Sale.objects.get(pk=sale.pk).stock_count == 4


def test_merchant_exports_own_orders_as_a_streamed_csv(client):
    import csv
    import io

    from orders.selectors import ORDERS_CSV_KEYS
    from testutils.factories.goods import make_goods
    from testutils.factories.orders import buy, pay
    from testutils.factories.users import make_merchant

    merchant = make_merchant()
    sale = make_sale(goods=make_goods(owner=merchant, name="=HYPERLINK(1)"), stock=5)
    unpaid, paid = buy(sale=sale, user=make_user()), buy(sale=sale, user=make_user())
    pay(paid)
    other = buy(sale=make_sale(stock=5), user=make_user())  # another merchant's order
    client.force_login(merchant)
    response = client.post(
        "/admin/orders/order/", {"action": "export_csv", "_selected_action": [unpaid.pk, paid.pk, other.pk]}
    )
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="orders-')
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    assert rows[0][0] == "order number"
    by_number = {row[0]: dict(zip(ORDERS_CSV_KEYS, row, strict=True)) for row in rows[1:]}
    # Identifiers as text for Excel: ="<digits>".
    assert set(by_number) == {f'="{unpaid.order_no}"', f'="{paid.order_no}"'}  # never the other merchant's
    assert by_number[f'="{paid.order_no}"']["status"] == "paid" and by_number[f'="{paid.order_no}"']["paid_at"]
    assert by_number[f'="{unpaid.order_no}"']["buyer_mobile"] == f'="{unpaid.user.mobile}"'
    by_number = {key[2:-1]: row for key, row in by_number.items()}
    assert by_number[unpaid.order_no]["goods_name"] == "'=HYPERLINK(1)"  # no formula in a spreadsheet


def test_cancelling_from_the_page_asks_first_and_says_what_it_costs(client):
    """Issue 24: "Cancel order" was one click beside "Pay". The page's cancel is a link to a
    confirmation; a page POST without confirm=yes only shows that confirmation."""
    sale, me = make_sale(), make_user()
    order = make_order(sale=sale, user=me)
    client.force_login(me)
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert f'action="/orders/{order.order_no}/cancel"' not in page and f"/orders/{order.order_no}/cancel" in page
    asked = client.get(f"/orders/{order.order_no}/cancel")
    assert asked.status_code == 200 and "flash price" in asked.content.decode()
    assert client.post(f"/orders/{order.order_no}/cancel").status_code == 200  # asks again
    order.refresh_from_db()
    assert order.status == "unpaid"
    done = client.post(f"/orders/{order.order_no}/cancel", {"confirm": "yes"})
    assert done.status_code == 302
    order.refresh_from_db()
    assert order.status == "cancelled"
