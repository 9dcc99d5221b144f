"""URLs of the bench deployment only (lab.bench.settings): the product's URLs plus three views
the load test compares the product against. Never routed in the product.

- `/bench/floor`: the cheapest authenticated view through the same middleware stack (the
  session is read from Redis, nothing else): what Django itself costs per request.
- `/bench/naive/doSeckill`: the textbook synchronous purchase (seed 000's flow before the
  queue), database only: read the stock, look for an earlier order, then conditional UPDATE
  of the stock and INSERT of the order in one transaction, inside the request. The baseline
  the Redis gate + Celery queue must beat. Generous to itself: no captcha path and no rate
  limit, and a sold-out request costs it a single indexed SELECT.
- `/bench/goodsList-cold`: the goods list rendered from PostgreSQL as on a cache miss.
"""

import secrets
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import path
from django.utils import timezone

from orders.models import Order, SeckillOrder
from sales.codes import SaleCode
from sales.models import Sale
from sales.selectors import sales_for_list
from seckill.sale_id import sale_id_invalid, sale_id_read
from seckill.views import session_user_id
from seckill_site.codes import Code
from seckill_site.http import allow, fail, ok
from seckill_site.urls import handler400, handler403, handler404, handler500  # noqa: F401
from seckill_site.urls import urlpatterns as product_urlpatterns


@allow("GET")
def floor(request: HttpRequest) -> HttpResponse:
    user_id = session_user_id(request)
    if user_id is None:
        return fail(Code.NOT_LOGGED_IN)
    return ok({"userId": user_id})


@allow("POST")
def naive_seckill(request: HttpRequest) -> HttpResponse:
    user_id = session_user_id(request)
    if user_id is None:
        return fail(Code.NOT_LOGGED_IN)
    sale_id = sale_id_read(request.POST)
    if sale_id is None:
        return sale_id_invalid()
    # Seed 000's synchronous flow, with the database as the only guard: read the stock,
    # look for an earlier order, then take a unit and write the order in one transaction.
    sale = Sale.objects.select_related("goods").filter(pk=sale_id).first()
    if sale is None:
        return fail(Code.NOT_FOUND)
    if sale.stock_count <= 0:
        return fail(SaleCode.SOLD_OUT)
    if SeckillOrder.objects.filter(user_id=user_id, sale_id=sale_id, live=True).exists():
        return fail(SaleCode.ALREADY_BOUGHT)
    try:
        with transaction.atomic():
            taken = Sale.objects.filter(pk=sale_id, stock_count__gt=0).update(stock_count=F("stock_count") - 1)
            if not taken:
                return fail(SaleCode.SOLD_OUT)
            order = Order.objects.create(
                order_no=f"{timezone.now():%Y%m%d%H%M%S}N{secrets.randbelow(10**12):012d}",
                user_id=user_id,
                goods_id=sale.goods_id,
                sale_id=sale_id,
                goods_name=sale.goods.name,
                price=sale.seckill_price,
                pay_deadline=timezone.now() + timedelta(seconds=settings.SECKILL_ORDER_TTL),
            )
            SeckillOrder.objects.create(user_id=user_id, sale_id=sale_id, order=order, request_id=secrets.token_hex(16))
    except IntegrityError:  # the partial unique index: one live order per user and sale
        return fail(SaleCode.ALREADY_BOUGHT)
    return ok({"orderId": order.pk})


@allow("GET")
def goods_list_cold(request: HttpRequest) -> HttpResponse:
    return HttpResponse(render_to_string("goods/list.html", {"sales": sales_for_list()}))


urlpatterns = [
    path("bench/floor", floor),
    path("bench/naive/doSeckill", naive_seckill),
    path("bench/goodsList-cold", goods_list_cold),
    *product_urlpatterns,
]
