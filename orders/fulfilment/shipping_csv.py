"""Shipping many orders from one CSV file: the merchant exports the orders to ship, fills in
each parcel's carrier and tracking number (a spreadsheet, or the carrier's own export), and
uploads it.

The file is read whole before anything ships. A file that is not what it should be (no such
column, a line that names no order of this merchant's, an unknown carrier, a bad tracking
number) ships nothing and says which lines are wrong. A good file ships each line on its own
with orders.fulfilment.services.order_ship; a line whose order cannot ship (not paid, a refund request
waiting) is reported and the others ship. Uploading the same file again ships nothing twice:
an order already shipped with that tracking number is counted as such, decided under the
order's row lock, so two uploads of one file at once agree on it too.
"""

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import QuerySet
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from orders.fulfilment.models import Carrier
from orders.fulfilment.services import OrderShippedAlready, order_ship, tracking_no_clean
from orders.models import Order
from orders.selectors import order_no_well_formed
from orders.services import OrderStateError

CSV_MAX_BYTES = 2 * 1024 * 1024
CSV_MAX_ROWS = 5000
# The longest cell a problem's line repeats on the page.
SHOWN_MAX = 40

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


def _shown(text: str) -> str:
    """A cell as the page repeats it: control characters made visible, long ones cut short."""
    text = "".join(char if char.isprintable() else "\N{REPLACEMENT CHARACTER}" for char in text)
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 1] + "…"


def _records(text: str) -> Iterator[tuple[int, list[str]]]:
    """Each record of the file with the line it starts on. Any line end a spreadsheet writes
    (CR LF, LF, or the lone CR of Excel for Mac) ends a line, and a quoted cell may span lines.
    ShipFileError naming the line the csv module cannot read (a cell longer than its limit)."""
    # newline="": the csv module reads the line ends itself, inside quotes as outside.
    reader = csv.reader(io.StringIO(text, newline=""))
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            why = (
                _("a cell longer than %(n)d characters") % {"n": csv.field_size_limit()}
                if "field limit" in str(error)
                else _("not valid CSV")
            )
            raise ShipFileError(
                _("Nothing was shipped: line %(line)d cannot be read (%(why)s).") % {"line": start, "why": why},
                [(start, "", why)],
            ) from error
        yield start, row
        start = reader.line_num + 1


def _lines(text: str) -> tuple[dict[str, int], list[tuple[int, list[str]]]]:
    """The columns the heading names, and the records below it that are not blank."""
    records = iter(_records(text))
    first = next(records, None)
    if first is None:
        raise ShipFileError(_("The file is empty."))
    columns = _header(first[1])
    lines: list[tuple[int, list[str]]] = []
    for number, row in records:
        if not any(cell.strip() for cell in row):
            continue  # a blank line, as spreadsheets leave at the end
        if len(lines) == CSV_MAX_ROWS:
            raise ShipFileError(_("The file has more than %(n)d lines; split it.") % {"n": CSV_MAX_ROWS})
        lines.append((number, row))
    return columns, lines


def _line_problem(cells: dict[str, str], carriers: dict[str, str]) -> str | None:
    if not order_no_well_formed(cells["order_no"]):
        return _("not an order number")
    if cells["carrier"].casefold() not in carriers:
        return _("unknown carrier “%(name)s”") % {"name": _shown(cells["carrier"])}
    try:
        tracking_no_clean(cells["tracking_no"])
    except OrderStateError as refusal:
        return str(refusal)
    return None


def orders_ship_from_csv(*, data: bytes, orders: QuerySet[Order], actor_id: int | None) -> ShipReport:
    """Ship the orders a CSV file lists, among `orders` (the merchant's own). ShipFileError
    when the file cannot be read at all, or has lines in error: then nothing shipped, and
    no cell of a line in error reached the database."""
    if len(data) > CSV_MAX_BYTES:
        raise ShipFileError(_("The file is larger than 2 MB; split it."))
    columns, rows = _lines(_decode(data))
    carriers = _carriers_by_name()
    lines, errors = [], []
    for number, row in rows:
        cells = {key: _cell(row[index]) if index < len(row) else "" for key, index in columns.items()}
        problem = _line_problem(cells, carriers)
        if problem is not None:
            errors.append((number, _shown(cells["order_no"]), problem))
            continue
        carrier = carriers[cells["carrier"].casefold()]
        lines.append((number, cells["order_no"], carrier, tracking_no_clean(cells["tracking_no"])))
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
        try:
            order_ship(order_id=known[order_no], carrier=carrier, tracking_no=tracking_no, actor_id=actor_id)
        except OrderShippedAlready:
            report.already += 1
        except OrderStateError as refusal:
            report.problems.append((number, order_no, str(refusal)))
        else:
            report.shipped += 1
    return report
