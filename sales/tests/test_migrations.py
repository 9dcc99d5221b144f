"""The sale's move from the goods app: no SQL, the same rows, and the history follows.

Run on the test database itself, migrated back to before the move and forward again; always
left at the latest migration.
"""

import re

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from sales.models import Sale, SaleDraw, SaleReminder, StockAudit
from testutils.factories.sales import make_sale

MOVE = [("sales", "0001_initial"), ("goods", "0015_sale_moves_to_sales"), ("orders", "0008_sale_moves_to_sales")]
# Before the move: the goods app still holds the sale, and orders point at goods.Sale.
BEFORE = [("goods", "0014_goods_names_one_line"), ("orders", "0007_fulfilment")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db
@pytest.mark.parametrize(("app", "name"), MOVE)
def test_the_move_runs_no_sql(app, name, capsys):
    call_command("sqlmigrate", app, name)
    statements = [line for line in capsys.readouterr().out.splitlines() if line and not line.startswith("--")]
    assert statements in ([], ["BEGIN;", "COMMIT;"]), statements


@pytest.mark.django_db
def test_the_tables_keep_their_goods_names():
    """An old process of a rolling deploy still queries these names."""
    assert [model._meta.db_table for model in (Sale, StockAudit, SaleDraw, SaleReminder)] == [
        "goods_seckillgoods",
        "goods_stockaudit",
        "goods_saledraw",
        "goods_salereminder",
    ]
    with connection.cursor() as cursor:
        tables = set(connection.introspection.table_names(cursor))
    assert {"goods_seckillgoods", "goods_stockaudit", "goods_saledraw", "goods_salereminder"} <= tables
    assert not any(re.match(r"sales_", table) for table in tables)


@pytest.mark.django_db(transaction=True)
def test_a_sale_made_before_the_move_is_the_same_row_after_it_with_its_history():
    sale = make_sale(warm=False)
    try:
        old = _migrate(BEFORE)
        old_content_type = old.get_model("contenttypes", "ContentType")
        # The content types as a database from before the move has them.
        ContentType.objects.filter(app_label="sales").delete()
        for model in ("sale", "stockaudit", "saledraw", "salereminder"):
            old_content_type.objects.get_or_create(app_label="goods", model=model)
        goods_sale = old.get_model("goods", "Sale")
        assert goods_sale.objects.get(pk=sale.pk).stock_count == sale.stock_count
        goods_sale.objects.filter(pk=sale.pk).update(stock_count=7)  # an old process writes

        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
        assert Sale.objects.get(pk=sale.pk).stock_count == 7
        ContentType.objects.clear_cache()
        assert ContentType.objects.get_for_model(Sale).app_label == "sales"
        assert not ContentType.objects.filter(app_label="goods", model__in=["sale", "stockaudit"]).exists()
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
