"""Orders point at the sale in its new app: the same table and the same foreign key, so no SQL
runs (sales 0001)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0007_fulfilment"),
        ("sales", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name="order",
                    name="sale",
                    field=models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="orders",
                        to="sales.sale",
                        verbose_name="sale",
                    ),
                ),
                migrations.AlterField(
                    model_name="seckillorder",
                    name="sale",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="seckill_orders", to="sales.sale"
                    ),
                ),
            ],
        ),
    ]
