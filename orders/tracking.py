"""Where a shopper follows a parcel: each carrier's public tracking page.

SF Express, JD Logistics and ZTO show one parcel at an address that carries its number; the
others answer a query page where the number is typed (and some ask for a captcha first), so
the shop links that page and shows the number to copy. "Other carrier" has no page."""

from dataclasses import dataclass
from urllib.parse import quote

from orders.models import Carrier, Shipment

# The carrier's page for one parcel ({number} filled in), or its query page (no {number}).
TRACKING_PAGES: dict[str, str] = {
    Carrier.SF: "https://www.sf-express.com/chn/sc/waybill/waybill-detail/{number}",
    Carrier.JD: "https://www.jdl.com/orderSearch/?waybillCodes={number}",
    Carrier.ZTO: "https://www.zto.com/express/expressCheck.html?txtBill={number}",
    Carrier.EMS: "https://www.ems.com.cn/queryList",
    Carrier.YTO: "https://www.yto.net.cn/",
    Carrier.STO: "https://www.sto.cn/",
    Carrier.YUNDA: "https://www.yundaex.com/",
    Carrier.JT: "https://www.jtexpress.com.cn/",
    Carrier.DEPPON: "https://www.deppon.com/",
}


@dataclass(frozen=True)
class TrackingLink:
    """A parcel's link: `url`, and whether that page shows the parcel itself (`per_number`)
    or is a query page the shopper types the number into."""

    url: str
    per_number: bool


def tracking_link(*, carrier: str, tracking_no: str) -> TrackingLink | None:
    """The carrier's page for the parcel `tracking_no`; None for a carrier without one."""
    page = TRACKING_PAGES.get(carrier)
    if page is None:
        return None
    if "{number}" not in page:
        return TrackingLink(url=page, per_number=False)
    return TrackingLink(url=page.format(number=quote(tracking_no, safe="")), per_number=True)


def shipment_tracking_link(shipment: Shipment | None) -> TrackingLink | None:
    if shipment is None:
        return None
    return tracking_link(carrier=shipment.carrier, tracking_no=shipment.tracking_no)
