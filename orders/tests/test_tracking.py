"""A parcel's tracking number as a link to its carrier's page: every carrier of the shipping
desk's list but "other" has one; the order page opens it in a new tab with a name a screen
reader says; the shipping text carries a per-parcel link when it is short."""

import pytest

from orders.fulfilment import notices
from orders.fulfilment.services import order_ship
from orders.models import Carrier
from orders.tracking import TRACKING_PAGES, tracking_link
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from users import sms


def test_every_carrier_but_other_has_a_public_https_page():
    assert set(TRACKING_PAGES) == set(Carrier.values) - {Carrier.OTHER}
    assert all(url.startswith("https://") for url in TRACKING_PAGES.values())
    assert tracking_link(carrier=Carrier.OTHER, tracking_no="X1") is None


def test_a_per_parcel_page_carries_the_number_and_a_query_page_does_not():
    sf = tracking_link(carrier=Carrier.SF, tracking_no="SF1234567890")
    assert sf is not None and sf.per_number
    assert sf.url == "https://www.sf-express.com/chn/sc/waybill/waybill-detail/SF1234567890"
    yto = tracking_link(carrier=Carrier.YTO, tracking_no="YT1234567890")
    assert yto is not None and not yto.per_number and "YT1234567890" not in yto.url


@pytest.mark.django_db
def test_the_order_page_links_the_number_to_the_carrier_in_a_new_tab(client):
    shopper = make_user()
    client.force_login(shopper)
    by_sf, by_yto = (pay(buy(sale=make_sale(), user=shopper)) for _ in range(2))
    order_ship(order_id=by_sf.pk, carrier="sf", tracking_no="SF1234567890", actor_id=None)
    order_ship(order_id=by_yto.pk, carrier="yto", tracking_no="YT1234567890", actor_id=None)
    page = client.get(f"/orders/{by_sf.order_no}").content.decode()
    assert (
        '<a class="tracking" href="https://www.sf-express.com/chn/sc/waybill/waybill-detail/SF1234567890" '
        'target="_blank" rel="noopener noreferrer"><strong>SF1234567890</strong>'
    ) in page
    assert "(track it on SF Express's site, opens in a new tab)" in page
    page = client.get(f"/orders/{by_yto.order_no}").content.decode()
    assert '<strong class="tracking copyable">YT1234567890</strong>' in page
    assert '<a class="tracking-page" href="https://www.yto.net.cn/" target="_blank" rel="noopener noreferrer">' in page


@pytest.mark.django_db
def test_the_shipping_text_links_the_parcel_when_the_carrier_has_a_page_for_it():
    by_jd, by_ems = (pay(buy(sale=make_sale(), user=make_user())) for _ in range(2))
    order_ship(order_id=by_jd.pk, carrier="jd", tracking_no="JDVA00012345678", actor_id=None)
    order_ship(order_id=by_ems.pk, carrier="ems", tracking_no="EA123456789CN", actor_id=None)
    assert notices.order_news_send() == 2
    texts = {message["mobile"]: message["text"] for message in sms.outbox}
    assert "https://www.jdl.com/orderSearch/?waybillCodes=JDVA00012345678" in texts[by_jd.user.mobile]
    assert "ems.com.cn" not in texts[by_ems.user.mobile]  # a query page is no help in a text
