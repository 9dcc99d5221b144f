"""The sale, its draw, stock log and reminders now belong to the sales app (sales 0001), which
took their tables as they are: the goods app forgets them without dropping anything."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("goods", "0014_goods_names_one_line"),
        ("sales", "0001_initial"),
        ("orders", "0008_sale_moves_to_sales"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="SaleReminder"),
                migrations.DeleteModel(name="SaleDraw"),
                migrations.DeleteModel(name="StockAudit"),
                migrations.DeleteModel(name="Sale"),
            ],
        ),
    ]
