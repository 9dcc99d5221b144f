from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from orders import selectors
from seckill_site.http import allow


@allow("GET")
@login_required
def my_orders(request: HttpRequest) -> HttpResponse:
    orders = selectors.orders_of_user(user=request.user)[:100]
    return render(request, "orders/list.html", {"orders": orders})


@allow("GET")
@login_required
def order_detail(request: HttpRequest, order_no: str) -> HttpResponse:
    order = selectors.order_of_user(user=request.user, order_no=order_no[:32])
    if order is None:
        raise Http404("no such order")
    return render(request, "orders/detail.html", {"order": order})
