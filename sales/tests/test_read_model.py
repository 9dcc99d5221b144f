"""The sale's read model (sales.read_model): camelCase only on the wire, and the cache rows a
rolling deploy's older processes wrote still read (and the ones written still readable by them)."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import OperationalError, connection

from sales import cache_keys as keys
from sales import selectors
from sales.read_model import SaleView
from seckill_site.redis import now as redis_now
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale

pytestmark = pytest.mark.django_db

START = datetime(2030, 1, 1, 10, tzinfo=UTC)
END = datetime(2030, 1, 1, 11, tzinfo=UTC)
TEXTS = ("goodsNames", "goodsTitles", "goodsDetails")


def old_row(*, sale_id: int, goods_id: int, name: str) -> dict:
    """A sale cache row exactly as the processes before the read model wrote it."""
    return {
        "id": sale_id,
        "goodsId": goods_id,
        "ownerId": 7,
        "goodsName": name,
        "goodsTitle": "Kept title",
        "goodsImg": None,
        "goodsDetail": "Kept detail",
        "goodsPrice": "100.00",
        "goodsStock": 40,
        "seckillPrice": "25.00",
        "stockCount": 9,
        "startDate": START.isoformat(),
        "endDate": END.isoformat(),
        "startEpoch": START.timestamp(),
        "endEpoch": END.timestamp(),
        "startAt": START,
        "endAt": END,
        "entriesEpoch": None,
        "drawEpoch": None,
    }


def test_the_wire_form_is_seed_000s_detail_with_the_goods_id_as_goods_id(client):
    make_goods()  # so the goods' id and the sale's differ
    goods = make_goods(name="Wire phone", title="On the wire", price=Decimal("200.00"), detail="Details")
    sale = make_sale(goods=goods, stock=6, seckill_price=Decimal("150.00"))
    while sale.pk == goods.pk:  # the two tables' sequences may stand level
        sale = make_sale(goods=goods, stock=6, seckill_price=Decimal("150.00"))
    detail = selectors.sale_detail(sale_id=sale.pk)
    assert detail is not None and detail.sale.goods_id == goods.pk and detail.sale.sale_id == sale.pk
    wire = detail.wire()
    assert wire == {
        "seckillStatus": 1,
        "remainSeconds": 0,
        "goods": {
            "id": sale.pk,  # the sale: what every endpoint's goodsId names
            "goodsId": goods.pk,  # the goods, as the seed's detail has it
            "goodsName": "Wire phone",
            "goodsTitle": "On the wire",
            "goodsImg": None,
            "goodsDetail": "Details",
            "goodsPrice": "200.00",
            "goodsStock": goods.stock,
            "seckillPrice": "150.00",
            "stockCount": 6,
            "startDate": sale.start_at.isoformat(),
            "endDate": sale.end_at.isoformat(),
        },
    }
    page = client.get(f"/goods/getDetails/{sale.pk}").json()["data"]
    assert {key: value for key, value in page.items() if key != "user"} == wire
    assert client.get(f"/api/v1/sales/{sale.pk}").json()["data"] == wire
    row = next(row for row in client.get("/api/v1/sales").json()["data"]["results"] if row["id"] == sale.pk)
    assert (row["goodsId"], row["seckillPrice"], row["stockLeft"], row["discount"]) == (goods.pk, "150.00", 6, 25)


def test_a_sale_cache_row_an_older_process_wrote_is_read_and_the_row_written_is_that_shape():
    sale = make_sale()
    cache.set(keys.sale_cache(sale.pk), (redis_now() + 60, old_row(sale_id=sale.pk, goods_id=4242, name="Kept")), 120)
    view = selectors.sale_get(sale_id=sale.pk)
    assert view is not None
    assert (view.sale_id, view.goods_id, view.goods_name) == (sale.pk, 4242, "Kept")
    assert (view.sale_price, view.goods_price, view.discount) == (Decimal("25.00"), Decimal("100.00"), 75)
    assert (view.start_at, view.end_epoch, view.stock_offered) == (START, END.timestamp(), None)

    cache.delete(keys.sale_cache(sale.pk))
    assert selectors.sale_get(sale_id=sale.pk) is not None  # read from PostgreSQL and stored
    _fresh_until, stored = cache.get(keys.sale_cache(sale.pk))
    assert type(stored) is dict  # never a pickled dataclass an older process cannot load
    # The texts in every language beside them (older processes read goodsName, in LANGUAGE_CODE).
    assert set(stored) == set(old_row(sale_id=0, goods_id=0, name="")) | {"stockOffered", *TEXTS}
    assert (stored["id"], stored["goodsId"], stored["seckillPrice"]) == (sale.pk, sale.goods_id, "1.00")
    assert SaleView.from_cache_row(stored) == selectors.sale_get(sale_id=sale.pk)


def test_the_lists_kept_rows_an_older_process_wrote_serve_the_list_while_postgresql_fails():
    sale = make_sale(stock=3)
    cache.set(keys.goods_list_rows(), ([old_row(sale_id=sale.pk, goods_id=4242, name="Kept")], {sale.pk: 12}), 60)

    def refused(execute, sql, params, many, context):
        raise OperationalError("no leader")

    with connection.execute_wrapper(refused):
        [row] = selectors.sales_for_list()
    assert (row.sale.sale_id, row.sale.goods_id, row.sale.goods_name) == (sale.pk, 4242, "Kept")
    assert (row.stock_left, row.claimed) == (3, 75)  # the live stock: 9 of 12 offered are gone
    assert row.wire()["goodsId"] == 4242
