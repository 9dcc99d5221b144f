from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from orders import selectors
from orders.codes import OrderCode
from orders.forms import MessageForm, RefundRequestForm, ReturnParcelForm, ReturnRequestForm
from orders.models import RETURN_ACTIVE, THREAD_STATUSES, OrderStatus, RefundRequestStatus, ReturnRequestStatus
from orders.payments.closing import order_cancel_by_shopper
from orders.payments.providers import providers_on
from orders.services import OrderStateError
from orders.tracking import shipment_tracking_link
from seckill_site.codes import Code
from seckill_site.http import allow, fail, ok, positive_int, wants_json
from users.addresses.selectors import addresses_of_user
from users.http import signed_in


@allow("GET")
@login_required
def my_orders(request: HttpRequest) -> HttpResponse:
    # The item page links here with the order id /seckill/result gave it.
    order_id = positive_int(request.GET.get("order"))
    if order_id is not None:
        order = selectors.orders_of_user(user=signed_in(request)).filter(pk=order_id).first()
        if order is not None:
            return redirect("orders:detail", order_no=order.order_no)
    tab = request.GET.get("tab", "")
    if tab and tab not in selectors.ORDER_TABS:
        raise Http404(_("No such list of orders."))
    user = signed_in(request)
    counts = selectors.order_tab_counts(user=user)
    tabs = [
        {"slug": slug, "name": name, "count": counts[slug.replace("-", "_")]}
        for slug, (name, _where) in selectors.ORDER_TABS.items()
    ]
    rows = [
        {"order": order, "pill": selectors.order_pill(order, refund_asked=asked, returning=returning)}
        for order, asked, returning in selectors.orders_listed_with_returns(user=user, tab=tab, limit=100)
    ]
    context = {"rows": rows, "now": timezone.now(), "tabs": tabs, "tab": tab}
    return render(request, "orders/list.html", context)


@allow("GET")
@login_required
def order_detail(request: HttpRequest, order_no: str) -> HttpResponse:
    order = selectors.order_of_user(user=signed_in(request), order_no=order_no)
    if order is None:
        raise Http404(_("No such order."))
    if wants_json(request):
        return ok(selectors.order_data(order))
    return order_page(request, order)


def order_page(
    request: HttpRequest,
    order,
    *,
    refund_form: RefundRequestForm | None = None,
    message_form: MessageForm | None = None,
    return_form: ReturnRequestForm | None = None,
    parcel_form: ReturnParcelForm | None = None,
    status: int = 200,
):
    """The order's page: its story, its parcel, its thread with the merchant, and what the
    shopper can do with it now (pay, cancel, ask for a refund or withdraw it, confirm
    receipt, send it back, write to the merchant). A form given carries a refused one."""
    refund_request = order.refund_requests.first()
    asked = refund_request is not None and refund_request.status == RefundRequestStatus.OPEN
    return_request = order.return_requests.first()
    returning = return_request.status if return_request and return_request.status in RETURN_ACTIVE else None
    pill_class, status_name = selectors.order_pill(order, refund_asked=asked, returning=returning)
    payment = selectors.order_payment_shown(order)
    shipment = selectors.order_shipment(order)
    context = {
        "order": order,
        "now": timezone.now(),
        "payment": payment,
        "failure_words": selectors.PAYMENT_FAILURE_WORDS.get(payment["failure"], ""),
        "pill_class": pill_class,
        "status_name": status_name,
        "timeline": selectors.order_timeline(order),
        "shipment": shipment,
        "tracking": shipment_tracking_link(shipment),
        "refund_request": refund_request,
        "return_request": return_request,
        "returning": returning,
    }
    if order.status in THREAD_STATUSES:
        context["thread"] = selectors.order_messages(order)
        context["message_form"] = message_form or MessageForm()
    if order.status == OrderStatus.PAID and not asked:
        context["refund_form"] = refund_form or RefundRequestForm()
    context.update(_after_sales(order, context["shipment"], returning, return_form, parcel_form))
    if order.status == OrderStatus.UNPAID:
        context["addresses"] = list(addresses_of_user(user=order.user))
        context["methods"] = providers_on()
    return render(request, "orders/detail.html", context, status=status)


def _after_sales(order, shipment, returning: str | None, return_form, parcel_form) -> dict:
    """What the order page offers after shipping: when the order completes by itself, until
    when it may go back, the return form, and the parcel form once the merchant approved."""
    if order.status not in (OrderStatus.SHIPPED, OrderStatus.DELIVERED):
        return {}
    now = timezone.now()
    context: dict = {}
    if order.status == OrderStatus.SHIPPED and not returning:
        context["auto_complete_at"] = selectors.auto_complete_at(shipment)
    until = selectors.return_until(shipment)
    if not returning and (until is None or until > now):
        context["return_form"] = return_form or ReturnRequestForm()
        context["return_until"] = until
    if returning == ReturnRequestStatus.APPROVED:
        context["parcel_form"] = parcel_form or ReturnParcelForm()
    return context


@allow("GET", "POST")
def order_cancel(request: HttpRequest, order_no: str) -> HttpResponse:
    """GET: "Cancel the order?" with what it costs (the flash price is given up). POST: the
    cancellation. A page form must carry confirm=yes, which only that page sends, so no
    single click cancels an order; JSON clients (the API's twin) confirm by POSTing."""
    if request.method == "GET" or (not wants_json(request) and request.POST.get("confirm") != "yes"):
        if not request.user.is_authenticated:
            return redirect_to_login(reverse("orders:cancel", args=[order_no[:32]]))
        order = selectors.order_of_user(user=request.user, order_no=order_no)
        if order is None:
            raise Http404(_("No such order."))
        if order.status == "unpaid":
            return render(request, "orders/cancel.html", {"order": order})
        if request.method == "GET":
            return redirect("orders:detail", order_no=order.order_no)
    return _cancel(request, order_no)


def _cancel(request: HttpRequest, order_no: str) -> HttpResponse:
    as_json = wants_json(request)
    # request.user, not the session's user id: a session whose user was deactivated (or whose
    # password changed) still holds an id, but its user is anonymous and owns nothing.
    if not request.user.is_authenticated:
        if as_json:
            return fail(Code.NOT_LOGGED_IN)
        return redirect_to_login(reverse("orders:detail", args=[order_no[:32]]))
    order = selectors.order_of_user(user=request.user, order_no=order_no)
    if order is None:
        if as_json:
            return fail(OrderCode.ORDER_NOT_FOUND)
        raise Http404(_("No such order."))
    try:
        order = order_cancel_by_shopper(order=order)
    except OrderStateError as refusal:  # it says why
        if as_json:
            return fail(OrderCode.ORDER_STATE, str(refusal))
        messages.error(request, str(refusal))
        return redirect("orders:detail", order_no=order.order_no)
    if as_json:
        return ok(selectors.order_data(order))
    messages.success(request, _("Order cancelled."))
    return redirect("orders:detail", order_no=order.order_no)
