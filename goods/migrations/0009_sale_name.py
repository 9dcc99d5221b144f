from django.db import migrations


class Migration(migrations.Migration):
    """SeckillGoods is called Sale in the code. The table keeps its name, so the rename changes
    nothing in the database and old processes keep working during a rolling deploy."""

    dependencies = [
        ("goods", "0008_stock_audit_detail"),
        ("orders", "0004_order_address"),
    ]

    operations = [
        migrations.AlterModelTable(name="seckillgoods", table="goods_seckillgoods"),
        migrations.RenameModel(old_name="SeckillGoods", new_name="Sale"),
    ]
