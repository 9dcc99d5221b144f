from django.db import migrations

# Order numbers draw from this sequence (orders.services.order_number_next): PostgreSQL never
# hands a value out twice, where a Redis counter could repeat after a failover to a replica
# that had not seen the latest increments. Starts past any number drawn from Redis before.
SEQUENCE = "orders_order_number_seq"


class Migration(migrations.Migration):
    dependencies = [("orders", "0002_initial")]

    operations = [
        migrations.RunSQL(
            f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE} START WITH 100000000",
            f"DROP SEQUENCE IF EXISTS {SEQUENCE}",
        )
    ]
