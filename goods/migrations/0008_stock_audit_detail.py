"""The stock log keeps figures in `detail` instead of English sentences in `note`.

The notes the services wrote are read back into figures (see sales.models.StockAuditDetail);
a note that matches none of them is kept as it was under "note". `note` leaves the model
here but its column stays one more release, with an empty default: processes of the release
before this one still insert it during a rolling deploy, and this release's inserts leave it
out. A later migration drops the column.
"""

import re

from django.db import migrations, models

BATCH = re.compile(r"^(\d+) orders in one batch$")
REPAIR = re.compile(r"^Redis stock (\S+) -> (\S+), buyers (\S+) -> (\S+)$")
PLAIN = {
    "created": {"created": True},
    "expired": {},  # the reason, expiry, says it all
    "cancelled by shopper": {"cancelled_by": "shopper"},
    "cancelled by merchant": {"cancelled_by": "merchant"},
}


def _number(text):
    return None if text == "None" else int(text)


def detail_of(note):
    """The figures an English note held; {"note": note} for one that is none of the services'."""
    if note in PLAIN:
        return dict(PLAIN[note])
    if match := BATCH.match(note):
        return {"orders": int(match[1])}
    if match := REPAIR.match(note):
        try:
            before, after, buyers_before, buyers_after = (_number(part) for part in match.groups())
        except ValueError:
            return {"note": note}
        return {"stock_before": before, "stock_after": after, "buyers_before": buyers_before, "buyers_after": buyers_after}
    return {"note": note}


def note_of(reason, detail):
    """The English note a row had before, from its detail (for migrating backwards)."""
    if "note" in detail:
        return detail["note"][:200]
    if detail.get("created"):
        return "created"
    if "orders" in detail:
        return f"{detail['orders']} orders in one batch"
    if "cancelled_by" in detail:
        return f"cancelled by {detail['cancelled_by']}"
    if "stock_after" in detail:
        return (
            f"Redis stock {detail['stock_before']} -> {detail['stock_after']}, "
            f"buyers {detail['buyers_before']} -> {detail['buyers_after']}"
        )
    return "expired" if reason == "expiry" else ""


def notes_to_detail(apps, schema_editor):
    StockAudit = apps.get_model("goods", "StockAudit")
    rows = []
    for row in StockAudit.objects.exclude(note="").only("pk", "note").iterator(chunk_size=2000):
        row.detail = detail_of(row.note)
        rows.append(row)
        if len(rows) == 2000:
            StockAudit.objects.bulk_update(rows, ["detail"])
            rows = []
    StockAudit.objects.bulk_update(rows, ["detail"])


def detail_to_notes(apps, schema_editor):
    StockAudit = apps.get_model("goods", "StockAudit")
    rows = []
    for row in StockAudit.objects.only("pk", "reason", "detail").iterator(chunk_size=2000):
        note = note_of(row.reason, row.detail)
        if note:
            row.note = note
            rows.append(row)
        if len(rows) == 2000:
            StockAudit.objects.bulk_update(rows, ["note"])
            rows = []
    StockAudit.objects.bulk_update(rows, ["note"])


class Migration(migrations.Migration):

    dependencies = [
        ('goods', '0007_draw_applied_at'),
    ]

    operations = [
        migrations.AddField(
            model_name='stockaudit',
            name='detail',
            field=models.JSONField(blank=True, db_default={}, default=dict, verbose_name='detail'),
        ),
        migrations.RunPython(notes_to_detail, detail_to_notes),
        migrations.AlterField(
            model_name='stockaudit',
            name='note',
            field=models.CharField(blank=True, db_default='', max_length=200, verbose_name='note'),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='stockaudit',
                    name='note',
                ),
            ],
        ),
    ]
