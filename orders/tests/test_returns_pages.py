"""After-sales on the pages: the shopper asks to send an order back, gives the parcel's
tracking number and follows it to the refund; the merchant answers returns and takes parcels
back in the admin. Bad input is a 4xx that changes nothing, and none of it reaches another's
order."""

import pytest

from orders.fulfilment.returns import (
    return_parcel_received,
)
from orders.models import ReturnRequest, ReturnRequestStatus
from testutils.factories.orders import return_approved, shipped
from testutils.factories.users import make_user

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.mark.django_db
class TestShopperPages:
    @pytest.fixture
    def me(self, client):
        user = make_user()
        client.force_login(user)
        return user

    def test_the_page_offers_a_return_and_says_when_the_order_completes(self, client, me, settings):
        settings.ORDER_AUTO_COMPLETE_DAYS = 10
        order = shipped(user=me)
        page = client.get(f"/orders/{order.order_no}").content.decode()
        assert "Return and refund" in page and "completes by itself on" in page
        response = client.post(f"/orders/{order.order_no}/return-request", {"reason": "damaged", "detail": "cracked"})
        assert response.status_code == 302
        assert ReturnRequest.objects.get(order=order).reason == "It arrived damaged or does not work: cracked"
        page = client.get(f"/orders/{order.order_no}").content.decode()
        assert "Return requested" in page and "Withdraw the return" in page and "I received it" not in page
        assert "completes by itself" not in page
        listed = client.get("/orders/?tab=refunds").content.decode()
        assert order.order_no in listed and "Return requested" in listed

    def test_the_shopper_sends_the_parcel_back_and_follows_it_to_the_refund(self, client, me):
        order = shipped(user=me)
        request = return_approved(order)
        page = client.get(f"/orders/{order.order_no}").content.decode()
        assert "Mia, 1 Dock Rd" in page and "Send it back" in page
        url = f"/orders/{order.order_no}/return-request/parcel"
        bad = client.post(url, {"carrier": "sf", "tracking_no": "not a number!"})
        assert bad.status_code == 400 and "only letters, digits and dashes" in bad.content.decode()
        assert client.post(url, {"carrier": "nope", "tracking_no": "SF1"}, **JSON).status_code == 400
        assert ReturnRequest.objects.get(pk=request.pk).status == ReturnRequestStatus.APPROVED
        assert client.post(url, {"carrier": "zto", "tracking_no": "zt 77"}).status_code == 302
        data = client.get(f"/orders/{order.order_no}", **JSON).json()["data"]["returnRequest"]
        assert (data["status"], data["carrierName"], data["trackingNo"]) == ("sent", "ZTO Express", "ZT77")
        page = client.get(f"/orders/{order.order_no}").content.decode()
        assert "On its way back" in page and "You sent the parcel back" in page and "ZTO Express ZT77" in page
        assert client.post(url, {"carrier": "zto", "tracking_no": "ZT78"}, **JSON).status_code == 409
        return_parcel_received(order_id=order.pk, request_id=request.pk, actor_id=None)
        page = client.get(f"/orders/{order.order_no}").content.decode()
        assert "The merchant received the parcel back" in page and "Refunded" in page

    def test_bad_input_is_a_4xx_that_changes_nothing(self, client, me):
        order = shipped(user=me)
        url = f"/orders/{order.order_no}/return-request"
        assert client.post(url, {"reason": "other", "detail": " "}).status_code == 400
        assert client.post(url, {"reason": "whim"}, **JSON).status_code == 400
        assert client.get(url).status_code == 405
        assert client.post(f"{url}/withdraw", **JSON).status_code == 409
        assert not ReturnRequest.objects.exists()
        theirs = shipped()
        assert client.post(f"/orders/{theirs.order_no}/return-request", {"reason": "damaged"}).status_code == 404
        assert (
            client.post(f"/orders/{theirs.order_no}/return-request", {"reason": "damaged"}, **JSON).status_code == 404
        )
        assert not ReturnRequest.objects.exists()
        client.logout()
        assert client.post(url, {"reason": "damaged"}).status_code == 302
        assert not ReturnRequest.objects.exists()

    def test_a_return_is_withdrawn_after_approval_and_the_order_goes_on(self, client, me):
        order = shipped(user=me)
        return_approved(order)
        assert client.post(f"/orders/{order.order_no}/return-request/withdraw").status_code == 302
        assert ReturnRequest.objects.get(order=order).status == ReturnRequestStatus.WITHDRAWN
        page = client.get(f"/orders/{order.order_no}").content.decode()
        assert "I received it" in page and "You withdrew the return" in page
