"""Shipping from a CSV file, as spreadsheets really write them: any line end, UTF-8 with or
without a BOM or GBK, quoted or not. A bad file ships nothing and its page names the line;
no file, however odd, answers a 500. Two uploads of one file at once agree on what shipped."""

import csv
import io
import re
import threading

import psycopg2
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, connections, transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orders.models import Order, OrderStatus, Shipment
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy, pay
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user
from tools.net import wait_until

HEADINGS = {"en": ["order number", "carrier", "tracking number"], "zh": ["订单号", "承运商", "运单号"]}
LINE_ENDS = ["\r\n", "\n", "\r"]  # Windows, everything else, Excel for Mac
ENCODINGS = ["utf-8", "utf-8-sig", "gbk"]
TOO_LONG = "9" * (128 * 1024 + 1)  # over the csv module's field limit


def _shop():
    merchant = make_merchant()
    sale = make_sale(goods=make_goods(owner=merchant, stock=30), stock=10)
    return merchant, [pay(buy(sale=sale, user=make_user())) for _ in range(3)]


def _post(client, data: bytes):
    upload = SimpleUploadedFile("ship.csv", data, content_type="text/csv")
    return client.post("/admin/orders/order/ship.csv/", {"file": upload})


def _file(records, *, line_end="\r\n", encoding="utf-8-sig", quoting=csv.QUOTE_MINIMAL) -> bytes:
    """The records as a spreadsheet saves them, each ended by `line_end`. A cell holding a line
    break is quoted whatever that end is: Python's writer quotes only the characters of its own
    line end, so with "\r" a cell's "\n" would be left bare, a line break of the file."""
    lines = []
    for record in records:
        text = io.StringIO()
        csv.writer(text, lineterminator="\r\n", quoting=quoting).writerow(record)
        lines.append(text.getvalue().removesuffix("\r\n"))
    return "".join(line + line_end for line in lines).encode(encoding, errors="replace")


def _breaks(record, quoting) -> int:
    """How many line ends a record's own cells hold (quoted, so they do not end it)."""
    text = io.StringIO()
    csv.writer(text, lineterminator="", quoting=quoting).writerow(record)
    return len(re.findall(r"\r\n|\r|\n", text.getvalue()))


def _problem_lines(page: str) -> list[int]:
    table = page.split('class="ship-problems"', 1)[-1] if 'class="ship-problems"' in page else ""
    return [int(n) for n in re.findall(r"<tr><td>(\d+)</td>", table)]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "line", "words"),
    [
        (b"order number,carrier,tracking number\r{no},sf,SF1\r{no2},pigeon,P1\r", 3, "unknown carrier"),
        (b"order number,carrier,tracking number\n{no},sf,SF1\n{no2},sf,SF2,%s\n" % TOO_LONG.encode(), 3, "longer"),
        (b'order number,carrier,tracking number\n{no},sf,SF1\n"1\x002",sf,SF2\n', 3, "not an order number"),
        (b"order number,carrier,tracking number\n{no},sf,SF1\n" + b"x" * 200 + b"\x1b,sf,SF3\n", 3, "not an order"),
    ],
    ids=["cr-line-ends", "cell-over-128k", "nul-in-order-number", "escape-and-long-cell"],
)
def test_an_odd_file_names_its_line_and_ships_nothing(client, data, line, words):
    merchant, orders = _shop()
    client.force_login(merchant)
    data = data.replace(b"{no}", orders[0].order_no.encode()).replace(b"{no2}", orders[1].order_no.encode())
    response = _post(client, data)
    page = response.content.decode()
    assert response.status_code == 200 and words in page and _problem_lines(page) == [line]
    assert not Shipment.objects.exists()


@pytest.mark.django_db
def test_a_file_from_excel_for_mac_ships(client):
    merchant, orders = _shop()
    client.force_login(merchant)
    lines = ["order number,carrier,tracking number", *(f"{o.order_no},sf,SF{n}" for n, o in enumerate(orders))]
    page = _post(client, "\r".join(lines).encode()).content.decode()
    assert "3 orders shipped." in page


@pytest.fixture
def shop(db):
    return _shop()


# Control characters with at least one that is no space (a tracking number drops spaces).
_CONTROL = st.text(st.characters(categories=["Cc"]), min_size=1, max_size=3).filter(lambda junk: not junk.isspace())
_BAD_CELLS = st.one_of(
    _CONTROL.map(lambda junk: f"1{junk}2"),  # NUL, ESC, CR, LF…
    st.just(TOO_LONG),
    st.text(max_size=60).map(lambda text: f"#{text}"),  # no order number, carrier or tracking number
    st.just('"'),
    st.just("'=1+1"),
)


@pytest.mark.django_db
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    language=st.sampled_from(sorted(HEADINGS)),
    line_end=st.sampled_from(LINE_ENDS),
    encoding=st.sampled_from(ENCODINGS),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
    extra=st.sampled_from(["", "note", TOO_LONG]),
    bad=st.none() | st.tuples(st.integers(0, 3), st.sampled_from(["order_no", "carrier", "tracking_no"]), _BAD_CELLS),
)
def test_any_upload_ships_all_or_names_its_bad_line(client, shop, language, line_end, encoding, quoting, extra, bad):
    """A file of the three orders (at most one extra column, long or not), with at most one bad
    cell on one line: all ship, or nothing does and the page names that line. Never a 500.
    Each example's shipments are rolled back, so every one starts from three paid orders."""
    merchant, orders = shop
    client.force_login(merchant)
    columns = ["order_no", "carrier", "tracking_no"]
    lines = [[o.order_no, "sf", f"SF{n}"] for n, o in enumerate(orders)]
    if bad is not None:
        position, column, cell = bad
        lines.insert(position, [orders[0].order_no, "sf", "SF0"])
        lines[position][columns.index(column)] = cell
    records = [HEADINGS[language] + ["note"], *(line + [extra] for line in lines)]
    with transaction.atomic():
        response = _post(client, _file(records, line_end=line_end, encoding=encoding, quoting=quoting))
        page = response.content.decode()
        shipped = Shipment.objects.count()
        transaction.set_rollback(True)
    assert response.status_code == 200
    if extra == TOO_LONG:  # the csv module cannot read line 2: that is the line named
        assert shipped == 0 and _problem_lines(page) == [2]
    elif bad is None:
        assert "3 orders shipped." in page and shipped == 3
    else:
        start = 2 + sum(_breaks(record, quoting) + 1 for record in records[1 : position + 1])
        assert shipped == 0 and start in _problem_lines(page), page[:2000]


def _connect():
    """A connection of its own to the test database (a TCP host or a Unix socket directory)."""
    db = connection.settings_dict
    return psycopg2.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"] or None, host=db["HOST"] or None,
        port=db["PORT"] or None,
    )  # fmt: skip


def _waiting_for_row_locks(cursor) -> int:
    cursor.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
    )
    return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_two_uploads_of_one_file_at_once_ship_once_and_agree():
    """Both uploads read the file and reach the order while the other holds it (the test holds
    the row first, so both wait there): one ships, the other hears "shipped already"."""
    merchant, orders = _shop()
    order = orders[0]
    data = _file([HEADINGS["en"], [order.order_no, "sf", "SF77"]])
    pages = []

    def upload():
        client = Client()
        client.force_login(merchant)
        try:
            pages.append(_post(client, data).content.decode())
        finally:
            connections.close_all()

    lock, watcher = _connect(), _connect()
    watcher.autocommit = True
    try:
        lock.cursor().execute("SELECT id FROM orders_order WHERE id = %s FOR UPDATE", [order.pk])
        uploads = [threading.Thread(target=upload) for _ in range(2)]
        for thread in uploads:
            thread.start()
        assert wait_until(lambda: _waiting_for_row_locks(watcher.cursor()) == 2, 20), "the uploads never met"
        lock.rollback()
        for thread in uploads:
            thread.join(30)
    finally:
        lock.close()
        watcher.close()
    assert len(pages) == 2
    assert sorted("1 order shipped." in page for page in pages) == [False, True]
    assert sum("1 was shipped already" in page for page in pages) == 1
    assert not any("Lines not shipped" in page for page in pages)
    assert Order.objects.get(pk=order.pk).status == OrderStatus.SHIPPED
