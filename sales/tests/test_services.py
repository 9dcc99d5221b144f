"""The goods services the admin and the API share: validated saves, stock edits as
differences, and the caches and Redis state that follow them."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from goods import services as goods_services
from goods.models import Goods
from sales import services
from sales.models import Sale
from sales.sale_state import keys
from sales.selectors import sale_get
from seckill_site.redis import client as redis
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user

pytestmark = pytest.mark.django_db


def test_removing_more_units_than_are_left_changes_nothing(django_capture_on_commit_callbacks):
    sale = make_sale(stock=3)
    with pytest.raises(services.StockShortage), django_capture_on_commit_callbacks(execute=True) as callbacks:
        services.sale_update(sale=sale, changes={"seckill_price": Decimal("5.00")}, stock_delta=-4)
    fresh = Sale.objects.get(pk=sale.pk)
    assert (fresh.stock_count, fresh.seckill_price) == (3, Decimal("1.00"))  # the price did not change either
    assert callbacks == []  # nor was Redis reloaded
    services.sale_update(sale=fresh, changes={}, stock_delta=-3)
    assert Sale.objects.get(pk=sale.pk).stock_count == 0


def test_an_edit_never_writes_back_a_stock_count_it_read_earlier(django_capture_on_commit_callbacks):
    sale = make_sale(stock=10)
    stale = Sale.objects.get(pk=sale.pk)  # a form or API client loads the sale: 10 units
    buy(sale=sale, user=make_user())  # an order is written meanwhile: 9 units
    with django_capture_on_commit_callbacks(execute=True):
        edited = services.sale_update(sale=stale, changes={"seckill_price": Decimal("2.00")}, stock_delta=2)
    assert edited.stock_count == 11  # 9 + 2, not 10 + 2, and not the 10 it was loaded with
    assert Sale.objects.get(pk=sale.pk).seckill_price == Decimal("2.00")
    assert redis().get(keys.stock(sale.pk)) == b"11"


def test_a_sale_must_end_after_it_starts():
    sale = make_sale()
    with pytest.raises(ValidationError):
        services.sale_update(sale=sale, changes={"end_at": sale.start_at - timedelta(minutes=1)})
    with pytest.raises(ValueError):
        services.sale_update(sale=sale, changes={"stock_count": 99})


def test_renaming_goods_reaches_the_cached_sale_the_order_writer_reads(django_capture_on_commit_callbacks):
    goods = make_goods(name="Old name")
    sale = make_sale(goods=goods)
    assert sale_get(sale_id=sale.pk).goods_name == "Old name"  # now cached
    goods.name = "New name"
    with django_capture_on_commit_callbacks(execute=True):
        goods_services.goods_save(goods=goods)
    assert sale_get(sale_id=sale.pk).goods_name == "New name"


def test_a_new_sale_is_in_redis_once_committed(django_capture_on_commit_callbacks):
    goods = make_goods()
    now = timezone.now()
    sale = Sale(goods=goods, seckill_price=Decimal("1"), stock_count=4, start_at=now, end_at=now)
    with pytest.raises(ValidationError):
        services.sale_create(sale=sale)
    sale.end_at = now + timedelta(hours=1)
    with django_capture_on_commit_callbacks(execute=True):
        services.sale_create(sale=sale)
    assert redis().get(keys.stock(sale.pk)) == b"4"


# --- the stock audit -------------------------------------------------------------------------


def test_stock_audit_adds_up_to_the_stock_through_every_kind_of_change(django_capture_on_commit_callbacks):
    from django.db.models import Sum

    from orders.models import Order
    from orders.payments.closing import order_cancel_by_shopper, orders_expire_unpaid
    from sales.models import StockAudit, StockChange
    from seckill.tasks import reconcile_sales as reconcile
    from testutils.factories.users import make_merchant

    merchant = make_merchant()
    now = timezone.now()
    sale = Sale(
        goods=make_goods(owner=merchant),
        seckill_price=Decimal("1"),
        stock_count=5,
        start_at=now,
        end_at=now + timedelta(hours=1),
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.sale_create(sale=sale, actor=merchant)  # +5
        services.sale_update(sale=sale, changes={}, stock_delta=3, actor=merchant)  # +3
    shoppers = [make_user() for _ in range(3)]
    with django_capture_on_commit_callbacks(execute=True):
        orders = [buy(sale=sale, user=user) for user in shoppers]  # -3
        order_cancel_by_shopper(order=orders[0])  # +1, by the shopper
        Order.objects.filter(pk=orders[1].pk).update(pay_deadline=now - timedelta(minutes=1))
        assert orders_expire_unpaid() == 1  # +1, by nobody
    redis().set(keys.stock(sale.pk), 99)  # Redis drifted
    assert reconcile() == 1  # squares Redis with the database: audited with delta 0

    sale.refresh_from_db()
    assert sale.stock_count == 5 + 3 - 3 + 1 + 1 == 7
    rows = StockAudit.objects.filter(sale=sale)
    assert rows.aggregate(total=Sum("delta"))["total"] == sale.stock_count
    changes = sorted((row.reason, row.delta, row.actor_id) for row in rows)
    assert changes == sorted(
        [
            (StockChange.MERCHANT_EDIT, 5, merchant.pk),
            (StockChange.MERCHANT_EDIT, 3, merchant.pk),
            *[(StockChange.PURCHASE, -1, user.pk) for user in shoppers],
            (StockChange.CANCELLATION, 1, shoppers[0].pk),
            (StockChange.EXPIRY, 1, None),
            (StockChange.RECONCILE_REPAIR, 0, None),
        ]
    )
    assert rows.get(reason=StockChange.RECONCILE_REPAIR).detail == {
        "stock_before": 99,
        "stock_after": 7,
        "buyers_before": 1,  # the third shopper's order is still live
        "buyers_after": 1,
    }
    assert rows.get(reason=StockChange.CANCELLATION).detail == {"cancelled_by": "shopper"}
    assert rows.get(reason=StockChange.EXPIRY).detail == {}
    assert rows.get(reason=StockChange.MERCHANT_EDIT, delta=5).detail == {"created": True}
    assert rows.get(reason=StockChange.CANCELLATION).reference == orders[0].order_no


def test_a_refused_stock_edit_leaves_no_audit_row():
    from sales.models import StockAudit

    sale = make_sale(stock=2)
    with pytest.raises(services.StockShortage):
        services.sale_update(sale=sale, changes={}, stock_delta=-3)
    assert not StockAudit.objects.filter(sale=sale).exists()


def test_an_edit_of_goods_deleted_meanwhile_does_not_bring_them_back():
    goods = make_goods(name="Gone")
    stale = Goods.objects.get(pk=goods.pk)
    Goods.objects.filter(pk=goods.pk).delete()
    stale.name = "Edited"
    with pytest.raises(Goods.DoesNotExist):
        goods_services.goods_save(goods=stale)
    assert not Goods.objects.filter(pk=goods.pk).exists()


def test_an_edit_writes_only_the_fields_it_names():
    goods = make_goods(name="Old", title="Old title")
    stale = Goods.objects.get(pk=goods.pk)
    Goods.objects.filter(pk=goods.pk).update(title="Changed meanwhile")
    stale.name = "New"
    goods_services.goods_save(goods=stale, fields=["name"])
    assert Goods.objects.values_list("name", "title").get(pk=goods.pk) == ("New", "Changed meanwhile")


def _draw_sale(**fields):
    from sales.models import Admission

    sale = make_sale(admission=Admission.DRAW, **fields)
    services.draw_seed_ensure(sale=sale)
    return sale


def test_a_started_draw_sale_keeps_its_start_even_from_a_stale_read():
    sale = _draw_sale(starts_in=60)
    stale = Sale.objects.get(pk=sale.pk)  # read while the window had not opened
    opened = timezone.now() - timedelta(seconds=1)
    Sale.objects.filter(pk=sale.pk).update(start_at=opened)
    with pytest.raises(ValidationError) as refused:
        services.sale_update(sale=stale, changes={"start_at": opened - timedelta(minutes=1)})
    assert "start_at" in refused.value.message_dict
    assert Sale.objects.get(pk=sale.pk).start_at == opened


def test_a_draw_sale_cannot_be_moved_to_start_in_the_past():
    sale = _draw_sale(starts_in=600)
    with pytest.raises(ValidationError):
        services.sale_update(sale=sale, changes={"start_at": timezone.now() - timedelta(seconds=5)})
    later = timezone.now() + timedelta(hours=1)
    services.sale_update(sale=sale, changes={"start_at": later, "end_at": later + timedelta(hours=1)})
    assert Sale.objects.get(pk=sale.pk).start_at == later


def test_a_started_first_come_sale_may_still_move_its_start():
    sale = make_sale(starts_in=-10)
    earlier = sale.start_at - timedelta(minutes=5)
    services.sale_update(sale=sale, changes={"start_at": earlier})
    assert Sale.objects.get(pk=sale.pk).start_at == earlier


def test_the_merchant_api_refuses_moving_a_started_draw_sale(client):
    sale = _draw_sale(starts_in=-5)
    client.force_login(sale.goods.owner)
    moved = (sale.start_at + timedelta(minutes=1)).isoformat()
    answer = client.patch(f"/api/v1/merchant/sales/{sale.pk}", {"startAt": moved}, content_type="application/json")
    assert answer.status_code == 400
    assert Sale.objects.get(pk=sale.pk).start_at == sale.start_at
