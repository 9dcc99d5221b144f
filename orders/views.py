from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _

from orders import selectors
from orders.payments.closing import order_cancel_by_shopper
from orders.payments.providers import providers_enabled
from orders.services import OrderStateError
from seckill_site.codes import Code
from seckill_site.http import allow, fail, ok, positive_int, wants_json
from users.http import signed_in
from users.selectors import addresses_of_user


def _order_data(order) -> dict:
    return {
        "id": order.pk,
        "orderNo": order.order_no,
        "goodsName": order.goods_name,
        "price": str(order.price),
        "status": order.status,
        "createdAt": order.created_at.isoformat(),
        "payDeadline": order.pay_deadline.isoformat(),
        "paidAt": order.paid_at.isoformat() if order.paid_at else None,
        "cancelledAt": order.cancelled_at.isoformat() if order.cancelled_at else None,
        "address": selectors.order_address_data(order),
        "payment": selectors.order_payment_data(order),
    }


@allow("GET")
@login_required
def my_orders(request: HttpRequest) -> HttpResponse:
    # The item page links here with the order id /seckill/result gave it.
    order_id = positive_int(request.GET.get("order"))
    if order_id is not None:
        order = selectors.orders_of_user(user=signed_in(request)).filter(pk=order_id).first()
        if order is not None:
            return redirect(f"/orders/{order.order_no}")
    orders = selectors.orders_listed(user=signed_in(request))[:100]
    return render(request, "orders/list.html", {"orders": orders, "now": timezone.now()})


@allow("GET")
@login_required
def order_detail(request: HttpRequest, order_no: str) -> HttpResponse:
    order = selectors.order_of_user(user=signed_in(request), order_no=order_no)
    if order is None:
        raise Http404(_("No such order."))
    if wants_json(request):
        return ok(_order_data(order))
    context = {"order": order, "now": timezone.now(), "payment": selectors.order_payment_data(order)}
    if order.status == "unpaid":
        context["addresses"] = list(addresses_of_user(user=signed_in(request)))
        context["methods"] = providers_enabled()
    return render(request, "orders/detail.html", context)


@allow("GET", "POST")
def order_cancel(request: HttpRequest, order_no: str) -> HttpResponse:
    """GET: "Cancel the order?" with what it costs (the flash price is given up). POST: the
    cancellation. A page form must carry confirm=yes, which only that page sends, so no
    single click cancels an order; JSON clients (the API's twin) confirm by POSTing."""
    if request.method == "GET" or (not wants_json(request) and request.POST.get("confirm") != "yes"):
        if not request.user.is_authenticated:
            return redirect(f"/user/index?next=/orders/{quote(order_no[:32])}/cancel")
        order = selectors.order_of_user(user=request.user, order_no=order_no)
        if order is None:
            raise Http404(_("No such order."))
        if order.status == "unpaid":
            return render(request, "orders/cancel.html", {"order": order})
        if request.method == "GET":
            return redirect(f"/orders/{order.order_no}")
    return _cancel(request, order_no)


def _cancel(request: HttpRequest, order_no: str) -> HttpResponse:
    as_json = wants_json(request)
    # request.user, not the session's user id: a session whose user was deactivated (or whose
    # password changed) still holds an id, but its user is anonymous and owns nothing.
    if not request.user.is_authenticated:
        return fail(Code.NOT_LOGGED_IN) if as_json else redirect(f"/user/index?next=/orders/{quote(order_no[:32])}")
    order = selectors.order_of_user(user=request.user, order_no=order_no)
    if order is None:
        if as_json:
            return fail(Code.ORDER_NOT_FOUND)
        raise Http404(_("No such order."))
    try:
        order = order_cancel_by_shopper(order=order)
    except OrderStateError as refusal:  # it says why
        if as_json:
            return fail(Code.ORDER_STATE, str(refusal))
        messages.error(request, str(refusal))
        return redirect(f"/orders/{order.order_no}")
    if as_json:
        return ok(_order_data(order))
    messages.success(request, _("Order cancelled."))
    return redirect(f"/orders/{order.order_no}")
