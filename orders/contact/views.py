"""The shopper's side of an order's thread: write to the merchant from the order page. A page
form answers a redirect to the order's thread (or the page again, 400, with the form's
errors); a JSON client the envelope with the thread."""

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _

from orders import selectors
from orders.codes import OrderCode
from orders.contact.limits import message_try_refused
from orders.contact.services import MessageRefused, order_message_ask
from orders.forms import MessageForm
from orders.views import order_page
from seckill_site.codes import Code
from seckill_site.errors import answer
from seckill_site.http import allow, fail, ok, wants_json
from users.http import signed_in


@allow("POST")
def order_message(request: HttpRequest, order_no: str) -> HttpResponse:
    if not request.user.is_authenticated:
        if wants_json(request):
            return fail(Code.NOT_LOGGED_IN)
        return redirect_to_login(reverse("orders:detail", args=[order_no[:32]]))
    order = selectors.order_of_user(user=request.user, order_no=order_no)
    if order is None:  # another shopper's order, like a missing one
        if wants_json(request):
            return fail(OrderCode.ORDER_NOT_FOUND)
        raise Http404(_("No such order."))
    form = MessageForm(request.POST)
    if not form.is_valid():
        if wants_json(request):
            return fail(Code.BAD_REQUEST, " ".join(str(error) for error in form.errors.get("text", [])))
        return order_page(request, order, message_form=form, status=400)
    slow_down = message_try_refused(request)
    if slow_down is not None:
        return answer(request, Code.TOO_MANY_REQUESTS, str(slow_down))
    try:
        order_message_ask(order_id=order.pk, text=form.cleaned_data["text"], actor_id=signed_in(request).pk)
    except MessageRefused as refused:
        if wants_json(request):
            return fail(OrderCode.ORDER_STATE, str(refused))
        messages.error(request, str(refused))
        return redirect(reverse("orders:detail", args=[order.order_no]) + "#messages")
    if wants_json(request):
        return ok({"messages": selectors.order_messages_data(order)})
    messages.success(request, _("Sent. The merchant answers here, and we text you when they do."))
    return redirect(reverse("orders:detail", args=[order.order_no]) + "#messages")
