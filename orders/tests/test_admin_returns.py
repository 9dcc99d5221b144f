"""The merchant's return desk in the admin: the returns to answer and the parcels coming back
listed and counted, a return approved with the address to send it to (the last one offered) or
declined with a word, the parcel marked received, which refunds the order; bad input a 400,
and none of it on another merchant's order."""

from decimal import Decimal

import pytest

from orders.fulfilment.returns import return_parcel_sent, return_request_open
from orders.models import Order, OrderStatus, ReturnRequest, ReturnRequestStatus
from testutils.factories.goods import make_goods
from testutils.factories.orders import shipped
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant


@pytest.mark.django_db
class TestMerchantDesk:
    @pytest.fixture
    def shop(self, client):
        merchant = make_merchant(nickname="Mia")
        sale = make_sale(
            goods=make_goods(owner=merchant, name="Kettle", stock=30), stock=10, seckill_price=Decimal("9")
        )
        client.force_login(merchant)
        return {"merchant": merchant, "sale": sale}

    def _url(self, order: Order) -> str:
        return f"/admin/orders/order/{order.pk}/return-request/"

    def test_the_merchant_answers_returns_and_takes_parcels_back(self, client, shop):
        approved, declined = shipped(sale=shop["sale"]), shipped(sale=shop["sale"])
        for order in (approved, declined):
            return_request_open(order_id=order.pk, reason="Cracked lid", actor_id=order.user_id)
        listing = client.get("/admin/orders/order/").content.decode()
        assert "2 returns to answer" in listing and "parcels-back-link" not in listing
        listed = client.get("/admin/orders/order/?return_request=open").content.decode()
        assert approved.order_no in listed and declined.order_no in listed
        assert self._url(approved) in client.get(f"/admin/orders/order/{approved.pk}/change/").content.decode()
        assert "Cracked lid" in client.get(self._url(approved)).content.decode()

        empty = client.post(self._url(approved), {"decision": "approve", "return_address": " "})
        assert empty.status_code == 400 and "give the address" in empty.content.decode()
        client.post(self._url(approved), {"decision": "approve", "return_address": "Mia, 1 Dock Rd, Ningbo"})
        client.post(self._url(declined), {"decision": "decline", "answer": "Opened and used"})
        assert ReturnRequest.objects.get(order=declined).answer == "Opened and used"
        # The next approval offers the address the merchant gave last.
        third = shipped(sale=shop["sale"])
        return_request_open(order_id=third.pk, reason="Too small", actor_id=None)
        assert "Mia, 1 Dock Rd, Ningbo" in client.get(self._url(third)).content.decode()

        return_parcel_sent(order_id=approved.pk, carrier="sf", tracking_no="SF42", actor_id=None)
        assert "1 parcel coming back" in client.get("/admin/orders/order/").content.decode()
        assert approved.order_no in client.get("/admin/orders/order/?return_request=sent").content.decode()
        page = client.get(self._url(approved)).content.decode()
        assert "SF42" in page and "Parcel received: refund" in page
        client.post(self._url(approved), {"decision": "received"})
        assert Order.objects.get(pk=approved.pk).status == OrderStatus.REFUNDED
        assert Order.objects.get(pk=declined.pk).status == OrderStatus.SHIPPED

    def test_another_merchants_return_is_out_of_reach(self, client, shop):
        other = shipped()
        return_request_open(order_id=other.pk, reason="mine", actor_id=None)
        assert client.get(self._url(other)).status_code == 404
        assert client.post(self._url(other), {"decision": "approve", "return_address": "X"}).status_code == 404
        assert ReturnRequest.objects.get(order=other).status == ReturnRequestStatus.OPEN
        assert "returns-link" not in client.get("/admin/orders/order/").content.decode()
