"""The shopper's side of an order after paying it: ask for a refund before it ships (and
withdraw the request while it waits), confirm the parcel arrived, and send it back for a
refund after (ask, withdraw, give the tracking number of the parcel sent back). Each answers a page (a
redirect to the order, with a message) or, for a JSON client, the envelope with the order, as
cancelling does (orders.views)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from orders import selectors
from orders.codes import OrderCode
from orders.forms import RefundRequestForm, ReturnParcelForm, ReturnRequestForm
from orders.fulfilment.returns import return_parcel_sent, return_request_open, return_request_withdraw
from orders.fulfilment.services import order_deliver, refund_request_open, refund_request_withdraw, tracking_no_clean
from orders.models import OrderStatus
from orders.services import OrderStateError
from orders.views import order_page
from seckill_site.codes import Code
from seckill_site.http import allow, fail, ok, wants_json
from users.http import signed_in


def _order_or_answer(request: HttpRequest, order_no: str):
    """The signed-in shopper's order, or the response that says it is not theirs to touch."""
    as_json = wants_json(request)
    if not request.user.is_authenticated:
        if as_json:
            return None, fail(Code.NOT_LOGGED_IN)
        return None, redirect_to_login(reverse("orders:detail", args=[order_no[:32]]))
    order = selectors.order_of_user(user=request.user, order_no=order_no)
    if order is None:
        if as_json:
            return None, fail(OrderCode.ORDER_NOT_FOUND)
        raise Http404(_("No such order."))
    return order, None


def _form_errors(form) -> str:
    return " ".join(str(error) for field_errors in form.errors.values() for error in field_errors)


def _answer(request: HttpRequest, order, *, refusal: str | None = None, done: str = "") -> HttpResponse:
    if wants_json(request):
        if refusal:
            return fail(OrderCode.ORDER_STATE, refusal)
        order.refresh_from_db()
        return ok(selectors.order_data(order))
    if refusal:
        messages.error(request, refusal)
    else:
        messages.success(request, done)
    return redirect("orders:detail", order_no=order.order_no)


@allow("POST")
def refund_request(request: HttpRequest, order_no: str) -> HttpResponse:
    order, answer = _order_or_answer(request, order_no)
    if answer is not None:
        return answer
    user = signed_in(request)
    form = RefundRequestForm(request.POST)
    if not form.is_valid():
        if wants_json(request):
            return fail(Code.BAD_REQUEST, _form_errors(form))
        return order_page(request, order, refund_form=form, status=400)
    try:
        refund_request_open(order_id=order.pk, reason=form.reason_text(), actor_id=user.pk)
    except OrderStateError as refusal:
        return _answer(request, order, refusal=str(refusal))
    return _answer(request, order, done=_("Refund requested: the merchant will answer here."))


@allow("POST")
def refund_request_withdrawn(request: HttpRequest, order_no: str) -> HttpResponse:
    order, answer = _order_or_answer(request, order_no)
    if answer is not None:
        return answer
    try:
        refund_request_withdraw(order_id=order.pk, actor_id=signed_in(request).pk)
    except OrderStateError as refusal:
        return _answer(request, order, refusal=str(refusal))
    return _answer(request, order, done=_("Refund request withdrawn: the order ships as usual."))


@allow("GET", "POST")
def order_received(request: HttpRequest, order_no: str) -> HttpResponse:
    """GET: "Did the parcel arrive?", what confirming means. POST: the confirmation. A page form
    must carry confirm=yes, which only that page sends, so no single click completes an
    order; JSON clients (the API's twin) confirm by POSTing."""
    order, answer = _order_or_answer(request, order_no)
    if answer is not None:
        return answer
    if request.method == "GET" or (not wants_json(request) and request.POST.get("confirm") != "yes"):
        if order.status != OrderStatus.SHIPPED:
            return redirect("orders:detail", order_no=order.order_no)
        return render(request, "orders/received.html", {"order": order, "return_days": settings.RETURN_WINDOW_DAYS})
    try:
        order_deliver(order_id=order.pk, actor_id=request.user.pk)
    except OrderStateError as refusal:
        return _answer(request, order, refusal=str(refusal))
    return _answer(request, order, done=_("Thank you: the order is complete."))


@allow("POST")
def return_request(request: HttpRequest, order_no: str) -> HttpResponse:
    order, answer = _order_or_answer(request, order_no)
    if answer is not None:
        return answer
    form = ReturnRequestForm(request.POST)
    if not form.is_valid():
        if wants_json(request):
            return fail(Code.BAD_REQUEST, _form_errors(form))
        return order_page(request, order, return_form=form, status=400)
    try:
        return_request_open(order_id=order.pk, reason=form.reason_text(), actor_id=signed_in(request).pk)
    except OrderStateError as refusal:
        return _answer(request, order, refusal=str(refusal))
    return _answer(request, order, done=_("Return requested: the merchant will answer here."))


@allow("POST")
def return_request_withdrawn(request: HttpRequest, order_no: str) -> HttpResponse:
    order, answer = _order_or_answer(request, order_no)
    if answer is not None:
        return answer
    try:
        return_request_withdraw(order_id=order.pk, actor_id=signed_in(request).pk)
    except OrderStateError as refusal:
        return _answer(request, order, refusal=str(refusal))
    return _answer(request, order, done=_("Return withdrawn: you keep the order."))


@allow("POST")
def return_parcel(request: HttpRequest, order_no: str) -> HttpResponse:
    """The parcel sent back: its carrier and tracking number."""
    order, answer = _order_or_answer(request, order_no)
    if answer is not None:
        return answer
    form = ReturnParcelForm(request.POST)
    if form.is_valid():
        try:
            form.cleaned_data["tracking_no"] = tracking_no_clean(form.cleaned_data["tracking_no"])
        except OrderStateError as problem:
            form.add_error("tracking_no", str(problem))
    if not form.is_valid():
        if wants_json(request):
            return fail(Code.BAD_REQUEST, _form_errors(form))
        return order_page(request, order, parcel_form=form, status=400)
    try:
        return_parcel_sent(
            order_id=order.pk,
            carrier=form.cleaned_data["carrier"],
            tracking_no=form.cleaned_data["tracking_no"],
            actor_id=signed_in(request).pk,
        )
    except OrderStateError as refusal:
        return _answer(request, order, refusal=str(refusal))
    return _answer(request, order, done=_("Thank you: the merchant refunds you once the parcel is back."))
