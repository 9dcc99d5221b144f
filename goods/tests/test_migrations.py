"""goods 0008: the stock log's English notes become figures in `detail`, and back again.

Run on the test database itself: migrated back to 0007, given rows with the notes the
services used to write, migrated forward; always left at the latest migration.
"""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from sales.models import StockAudit
from testutils.factories.sales import make_sale

BEFORE = [("goods", "0007_draw_applied_at")]
AFTER = [("goods", "0008_stock_audit_detail")]

# The notes the services wrote before 0008, and what each becomes.
NOTES = {
    "created": {"created": True},
    "12 orders in one batch": {"orders": 12},
    "cancelled by shopper": {"cancelled_by": "shopper"},
    "cancelled by merchant": {"cancelled_by": "merchant"},
    "expired": {},
    "Redis stock 99 -> 7, buyers 2 -> 3": {"stock_before": 99, "stock_after": 7, "buyers_before": 2, "buyers_after": 3},
    "Redis stock None -> 7, buyers 0 -> 3": {
        "stock_before": None,
        "stock_after": 7,
        "buyers_before": 0,
        "buyers_after": 3,
    },
    "restocked after a phone call": {"note": "restocked after a phone call"},
    "": {},
}
REASONS = {"expired": "expiry", "cancelled by shopper": "cancellation", "cancelled by merchant": "cancellation"}


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_0008_reads_the_old_notes_into_detail_and_back():
    sale = make_sale(warm=False)
    try:
        old = _migrate(BEFORE).get_model("goods", "StockAudit")
        for note in NOTES:
            old.objects.create(sale_id=sale.pk, delta=0, reason=REASONS.get(note, "merchant edit"), note=note)

        _migrate(AFTER)
        rows = StockAudit.objects.filter(sale=sale).order_by("pk")
        assert [row.detail for row in rows] == list(NOTES.values())
        # The column stays for a release, with a default: this release's inserts leave it out.
        StockAudit.objects.create(sale=sale, delta=1, reason="merchant edit")

        old = _migrate(BEFORE).get_model("goods", "StockAudit")
        assert list(old.objects.filter(sale_id=sale.pk).order_by("pk").values_list("note", flat=True)) == [
            *NOTES,
            "",
        ]
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
