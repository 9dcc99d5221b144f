"""Paying ships to an address of the shopper's book, copied onto the order: the order page,
its JSON and the API take it; later edits of the book change no paid order."""

import pytest
from django.conf import settings

from orders.models import Order, OrderAddress, Payment
from orders.payments.providers import TradeState
from orders.payments.services import payment_sync
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import alipay_buyer_pays, alipay_cashier_open
from users.addresses.services import address_delete, address_update

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}


def test_paying_on_the_page_ships_to_the_chosen_address_and_keeps_a_copy(client):
    me = make_user()
    home = make_address(me, recipient="王五", city="杭州市")
    office = make_address(me, recipient="王五", city="上海市", street="浦东新区世纪大道 1 号", postcode="")
    order = buy(sale=make_sale(), user=me)
    client.force_login(me)
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert f'name="address" value="{home.pk}" checked' in page  # the default, chosen for them
    assert f'name="address" value="{office.pk}"' in page and "上海市" in page

    response = client.post(f"/orders/{order.order_no}/pay", {"address": office.pk})
    assert response.status_code == 302 and response["Location"].startswith(settings.ALIPAY_GATEWAY)
    assert "确认付款" in alipay_cashier_open(response["Location"])
    payment = Payment.objects.get(order=order)
    alipay_buyer_pays(payment.trade_no)
    assert payment_sync(payment=payment) == TradeState.PAID  # the notify's stand-in: the query sweep
    shipped = OrderAddress.objects.get(order=order)
    assert (shipped.city, shipped.street, shipped.postcode) == ("上海市", "浦东新区世纪大道 1 号", "")

    address_update(address=office, changes={"city": "北京市", "street": "朝阳区"})
    address_delete(address=office)
    shipped.refresh_from_db()
    assert (shipped.city, shipped.street) == ("上海市", "浦东新区世纪大道 1 号")  # history stays
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert "浦东新区世纪大道 1 号" in page and 'name="address"' not in page
    assert client.get(f"/orders/{order.order_no}", **JSON).json()["data"]["address"]["city"] == "上海市"


def test_without_an_address_paying_is_refused_and_nothing_changes(client):
    me = make_user()
    order = buy(sale=make_sale(), user=me)
    client.force_login(me)
    page = client.get(f"/orders/{order.order_no}").content.decode()
    assert f"/user/addresses?next=/orders/{order.order_no}" in page and 'id="pay-form"' not in page

    refused = client.post(f"/orders/{order.order_no}/pay", **JSON)
    assert refused.status_code == 400 and refused.json()["code"] == 500602
    assert "address" in refused.json()["msg"]
    follow = client.post(f"/orders/{order.order_no}/pay", follow=True)
    assert "Add a shipping address before paying." in follow.content.decode()
    assert Order.objects.get(pk=order.pk).status == "unpaid" and not OrderAddress.objects.exists()


@pytest.mark.parametrize("chosen", ["OTHER", "999999999", "abc", "-1", "１"])
def test_someone_elses_or_a_made_up_address_is_refused(client, chosen):
    me, other = make_user(), make_user()
    make_address(me)
    theirs = make_address(other)
    order = buy(sale=make_sale(), user=me)
    client.force_login(me)
    value = str(theirs.pk) if chosen == "OTHER" else chosen
    refused = client.post(f"/orders/{order.order_no}/pay", {"address": value}, **JSON)
    assert refused.status_code == 400 and refused.json()["code"] == 500602
    assert "not in your address book" in refused.json()["msg"]
    assert Order.objects.get(pk=order.pk).status == "unpaid"


def test_the_api_pays_to_the_default_or_the_chosen_address(client):
    me = make_user()
    home = make_address(me, city="杭州市")
    office = make_address(me, city="上海市")
    first, second = buy(sale=make_sale(), user=me), buy(sale=make_sale(), user=me)
    client.force_login(me)  # the browser's session (the test client skips the CSRF check)
    started = client.post(f"/api/v1/orders/{first.order_no}/pay", {"method": "alipay"}, content_type="application/json")
    assert started.json()["code"] == 0 and started.json()["data"]["redirectUrl"].startswith(settings.ALIPAY_GATEWAY)
    body = {"addressId": office.pk, "method": "stripe"}
    started = client.post(f"/api/v1/orders/{second.order_no}/pay", body, content_type="application/json").json()
    assert started["code"] == 0 and started["data"]["clientSecret"].startswith("pi_")
    shipped = {OrderAddress.objects.get(order=order).city for order in (first, second)}
    assert shipped == {home.city, "上海市"}
    listed = client.get("/api/v1/orders").json()["data"]["results"]
    assert {o["address"]["city"] for o in listed} == {"杭州市", "上海市"}


@pytest.mark.parametrize("body", [{"addressId": "1"}, {"addressId": 1.5}, {"addressId": True}, {"addressId": 0}])
def test_the_api_refuses_an_address_id_that_is_not_an_id(client, body):
    me = make_user()
    make_address(me)
    order = buy(sale=make_sale(), user=me)
    client.force_login(me)
    response = client.post(
        f"/api/v1/orders/{order.order_no}/pay", {**body, "method": "alipay"}, content_type="application/json"
    )
    assert response.status_code == 400 and Order.objects.get(pk=order.pk).status == "unpaid"


def test_an_address_saved_before_districts_is_still_paid_to_and_a_new_one_carries_its_district(client):
    """Addresses saved when the province and city were free text have no district: paying
    copies them as they are. One chosen from the lists brings its district to the order."""
    from users.models import Address

    me = make_user()
    old = Address.objects.create(
        user=me,
        recipient="李四",
        phone="13712345678",
        region="Zhejiang",
        city="Hangzhou",
        street="1 Road",
        is_default=True,
    )
    new = make_address(me, region="北京市", city="北京市", district="朝阳区", street="建国路 1 号")
    first, second = buy(sale=make_sale(), user=me), buy(sale=make_sale(), user=me)
    client.force_login(me)
    for order, address in ((first, old), (second, new)):
        response = client.post(f"/orders/{order.order_no}/pay", {"address": address.pk})
        assert response.status_code == 302 and response["Location"].startswith(settings.ALIPAY_GATEWAY)
        alipay_cashier_open(response["Location"])
    copies = {o.order_id: o for o in OrderAddress.objects.filter(order__in=[first, second])}
    assert (copies[first.pk].region, copies[first.pk].city, copies[first.pk].district) == ("Zhejiang", "Hangzhou", "")
    assert copies[second.pk].district == "朝阳区"
    payment = Payment.objects.get(order=second)
    alipay_buyer_pays(payment.trade_no)
    assert payment_sync(payment=payment) == TradeState.PAID
    assert "北京市 朝阳区 建国路 1 号" in client.get(f"/orders/{second.order_no}").content.decode()
    assert client.get(f"/orders/{second.order_no}", **JSON).json()["data"]["address"]["district"] == "朝阳区"
    payment = Payment.objects.get(order=first)
    alipay_buyer_pays(payment.trade_no)
    assert payment_sync(payment=payment) == TradeState.PAID
    assert "Zhejiang Hangzhou 1 Road" in client.get(f"/orders/{first.order_no}").content.decode()
    assert client.get(f"/orders/{first.order_no}", **JSON).json()["data"]["address"]["district"] == ""
