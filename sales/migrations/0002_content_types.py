"""The moved models' content types follow them, so the admin's history of a sale, a draw or a
stock change and any permission granted on them stay theirs. Rows only: no schema changes."""

from django.db import migrations

MOVED = ["sale", "saledraw", "stockaudit", "salereminder"]


def _relabel(apps, old: str, new: str) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label=old, model__in=MOVED).update(app_label=new)


def forwards(apps, schema_editor):
    _relabel(apps, "goods", "sales")


def backwards(apps, schema_editor):
    _relabel(apps, "sales", "goods")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("sales", "0001_initial"),
        ("goods", "0015_sale_moves_to_sales"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
