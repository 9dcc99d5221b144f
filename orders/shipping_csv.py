"""Shipping many orders from one CSV file: the merchant exports the orders to ship, fills in
each parcel's carrier and tracking number (a spreadsheet, or the carrier's own export), and
uploads it.

The file is read whole before anything ships. A file that is not what it should be (no such
column, a line that names no order of this merchant's, an unknown carrier, a bad tracking
number) ships nothing and says which lines are wrong. A good file ships each line on its own
with orders.fulfilment.order_ship; a line whose order cannot ship (not paid, a refund request
waiting) is reported and the others ship. Uploading the same file again ships nothing twice:
an order already shipped with that tracking number is counted as such.
"""

import csv
import io
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import QuerySet
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from orders.fulfilment import order_ship, tracking_no_clean
from orders.models import Carrier, Order, Shipment
from orders.services import OrderStateError

CSV_MAX_BYTES = 2 * 1024 * 1024
CSV_MAX_ROWS = 5000

# The three columns read, by their heading in any of the shop's languages (the orders export
# writes them in the merchant's); other columns are ignored, so the export itself can go back.
_COLUMNS = {
    "order_no": gettext_lazy("order number"),
    "carrier": gettext_lazy("carrier"),
    "tracking_no": gettext_lazy("tracking number"),
}


class ShipFileError(Exception):
    """Nothing shipped: the message says why, for the merchant, and `problems` lists the lines
    in error as (line number, order number, why) when that was the reason."""

    def __init__(self, message: str, problems: list[tuple[int, str, str]] | None = None):
        super().__init__(message)
        self.problems = problems or []


@dataclass
class ShipReport:
    shipped: int = 0
    already: int = 0
    # (line number, order number, why), for lines that did not ship.
    problems: list[tuple[int, str, str]] = field(default_factory=list)


def _in_every_language(text) -> set[str]:
    names = set()
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            names.add(str(text).casefold())
    return names


def _carriers_by_name() -> dict[str, str]:
    names = {}
    for value, label in Carrier.choices:
        names[value.casefold()] = value
        names.update({name: value for name in _in_every_language(label)})
    return names


def _cell(value: str) -> str:
    """A cell as the export wrote it (`="0123"`, or `'=x` made safe) or as a spreadsheet saved it."""
    text = value.strip()
    if text.startswith('="') and text.endswith('"'):
        text = text[2:-1]
    return text.lstrip("'").strip()


def _decode(data: bytes) -> str:
    # Excel on a Chinese Windows saves CSV in GB 18030's subset, GBK; everything else, UTF-8.
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise ShipFileError(_("The file is not text in UTF-8 or GBK: save it as CSV and try again."))


def _header(row: list[str]) -> dict[str, int]:
    found = {}
    headings = [_cell(cell).casefold() for cell in row]
    for key, heading in _COLUMNS.items():
        names = _in_every_language(heading)
        positions = [index for index, cell in enumerate(headings) if cell in names]
        if not positions:
            raise ShipFileError(
                _("The file has no “%(column)s” column; its first line must name the columns.") % {"column": heading}
            )
        found[key] = positions[0]
    return found


def orders_ship_from_csv(*, data: bytes, orders: QuerySet[Order], actor_id: int | None) -> ShipReport:
    """Ship the orders a CSV file lists, among `orders` (the merchant's own). ShipFileError
    when the file cannot be read at all, or has lines in error: then nothing shipped."""
    if len(data) > CSV_MAX_BYTES:
        raise ShipFileError(_("The file is larger than 2 MB; split it."))
    rows = list(csv.reader(io.StringIO(_decode(data))))
    if not rows:
        raise ShipFileError(_("The file is empty."))
    if len(rows) > CSV_MAX_ROWS + 1:
        raise ShipFileError(_("The file has more than %(n)d lines; split it.") % {"n": CSV_MAX_ROWS})
    columns = _header(rows[0])
    carriers = _carriers_by_name()
    lines, errors = [], []
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue  # a blank line, as spreadsheets leave at the end
        cells = {key: _cell(row[index]) if index < len(row) else "" for key, index in columns.items()}
        carrier = carriers.get(cells["carrier"].casefold())
        if carrier is None:
            errors.append((number, cells["order_no"], _("unknown carrier “%(name)s”") % {"name": cells["carrier"]}))
            continue
        try:
            tracking_no = tracking_no_clean(cells["tracking_no"])
        except OrderStateError as refusal:
            errors.append((number, cells["order_no"], str(refusal)))
            continue
        lines.append((number, cells["order_no"], carrier, tracking_no))
    numbers = [order_no for _line, order_no, _carrier, _tracking in lines]
    known = dict(orders.filter(order_no__in=numbers).values_list("order_no", "pk"))
    for number, order_no, _carrier, _tracking in lines:
        if order_no not in known:
            errors.append((number, order_no, _("no such order of yours")))
    if errors:
        raise ShipFileError(_("Nothing was shipped: correct these lines and upload the file again."), sorted(errors))
    return _ship(lines, known, actor_id)


def _ship(lines, known: dict[str, int], actor_id: int | None) -> ShipReport:
    report = ShipReport()
    for number, order_no, carrier, tracking_no in lines:
        order_id = known[order_no]
        if Shipment.objects.filter(order_id=order_id, tracking_no=tracking_no).exists():
            report.already += 1
            continue
        try:
            order_ship(order_id=order_id, carrier=carrier, tracking_no=tracking_no, actor_id=actor_id)
        except OrderStateError as refusal:
            report.problems.append((number, order_no, str(refusal)))
        else:
            report.shipped += 1
    return report
