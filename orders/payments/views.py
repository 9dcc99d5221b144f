"""The shopper's payment pages: going to a cashier from the order page, the card form, and the
page that waits for the provider's word. The providers' notifications are webhooks.py's."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django_ratelimit.core import is_ratelimited

from orders import selectors
from orders.codes import OrderCode
from orders.models import Order
from orders.payments.closing import payments_check
from orders.payments.http import provider_urls
from orders.payments.limits import TooOften, card_try_refused
from orders.payments.models import Payment, PaymentStatus
from orders.payments.providers import card_providers, provider, provider_default, providers_enabled
from orders.payments.receipt import order_receipt
from orders.payments.services import (
    PaymentDeclined,
    PaymentUnavailable,
    payment_card_confirm,
    payment_returned,
    payment_start,
)
from orders.services import OrderStateError
from seckill_site.codes import Code, EnvelopeCode
from seckill_site.errors import answer
from seckill_site.http import allow, fail, ok, wants_json
from users.http import signed_in

# Phones get a provider's mobile-web cashier, where it has one; the rest its desktop page.
_MOBILE = ("Mobile", "Android", "iPhone", "iPad")


def _order_or_404(request: HttpRequest, order_no: str) -> Order:
    order = selectors.order_of_user(user=signed_in(request), order_no=order_no)
    if order is None:
        raise Http404(_("No such order."))
    return order


def _too_often(request: HttpRequest, refusal: TooOften) -> HttpResponse:
    """429 with the refusal's words and Retry-After, as JSON or as a page."""
    response = answer(request, Code.TOO_MANY_REQUESTS, str(refusal))
    response["Retry-After"] = str(refusal.retry_after)
    return response


def _back(
    request: HttpRequest, order: Order, message: str, code: EnvelopeCode = OrderCode.PAYMENT_UNAVAILABLE
) -> HttpResponse:
    if wants_json(request):
        return fail(code, message)
    messages.error(request, message)
    return redirect("orders:detail", order_no=order.order_no)


@allow("POST")
def order_pay(request: HttpRequest, order_no: str) -> HttpResponse:
    """Go to the chosen cashier (`method`: a provider's name, the first one on when left out),
    shipping to the chosen address."""
    if not request.user.is_authenticated:
        if wants_json(request):
            return fail(Code.NOT_LOGGED_IN)
        return redirect_to_login(reverse("orders:detail", args=[order_no[:32]]))
    order = _order_or_404(request, order_no)
    method = request.POST.get("method") or provider_default()
    if method not in providers_enabled():
        return _back(request, order, _("Choose how to pay."), Code.BAD_REQUEST)
    chosen = request.POST.get("address")
    address = selectors.shipping_address_for(user=request.user, address_id=chosen)
    if address is None:
        return _back(request, order, selectors.shipping_address_problem(address_id=chosen), OrderCode.ADDRESS_NEEDED)
    try:
        payment, checkout = payment_start(
            order=order,
            provider_name=method,
            address=address,
            mobile=any(word in request.headers.get("User-Agent", "") for word in _MOBILE),
            **provider_urls(request, order=order, method=method),
        )
    except TooOften as refusal:
        return _too_often(request, refusal)
    except PaymentUnavailable as refusal:
        return _back(request, order, str(refusal))
    except OrderStateError as refusal:
        return _back(request, order, str(refusal), OrderCode.ORDER_STATE)
    if checkout.redirect_url:
        return redirect(checkout.redirect_url)
    return redirect("orders:card", order_no=order.order_no, trade_no=payment.trade_no)


def _card_payment(order: Order, trade_no: str) -> Payment:
    payment = order.payments.filter(trade_no=trade_no, provider__in=card_providers()).first()
    if payment is None:
        raise Http404(_("No such payment."))
    return payment


@allow("GET", "POST")
@login_required
def card(request: HttpRequest, order_no: str, trade_no: str) -> HttpResponse:
    """GET: the card form (the provider's own script tokenizes the card in the browser). POST
    (JSON, from that form's script): pay with the token; the answer says what the bank said."""
    order = _order_or_404(request, order_no)
    payment = _card_payment(order, trade_no)
    if request.method == "GET":
        if payment.status != PaymentStatus.OPEN:
            return redirect("orders:paying", order_no=order.order_no)
        taking = provider(payment.provider)
        return render(
            request,
            "orders/card.html",
            {
                "order": order,
                "payment": payment,
                "now": timezone.now(),
                "card_script": taking.card_script_url(),
                "card_key": taking.browser_key(),
            },
        )
    try:
        token = json.loads(request.body or b"{}").get("token")
    except (ValueError, AttributeError):
        token = None
    if not isinstance(token, str) or not token.startswith("tok_") or len(token) > 64:
        return fail(Code.BAD_REQUEST, _("The card form sent nothing to pay with; try again."))
    refusal = card_try_refused(request, payment=payment)
    if refusal is not None:
        return _too_often(request, refusal)
    try:
        payment, secret = payment_card_confirm(
            payment=payment, token=token, **provider_urls(request, order=order, method=payment.provider)
        )
    except TooOften as too_often:  # another card, but too many attempts lately
        return _too_often(request, too_often)
    except PaymentDeclined as declined:
        # The form stays for another card; the next goes on a new attempt behind this one.
        return fail(OrderCode.PAYMENT_UNAVAILABLE, str(declined), data={"payUrl": _card_url(order, declined.payment)})
    except OrderStateError as refusal:
        return fail(OrderCode.PAYMENT_UNAVAILABLE, str(refusal))
    return ok(
        {
            "status": payment.status,
            "clientSecret": secret,
            "payUrl": _card_url(order, payment),
            "next": reverse("orders:paying", args=[order.order_no]),
        }
    )


def _card_url(order: Order, payment: Payment) -> str:
    return reverse("orders:card", kwargs={"order_no": order.order_no, "trade_no": payment.trade_no})


@allow("GET", "POST")
@login_required
def paying(request: HttpRequest, order_no: str) -> HttpResponse:
    """GET: the page a shopper waits on after a cashier (its return_url too): the provider is
    asked about the newest attempt on arrival (payment_returned), then its script polls the
    order until the provider's word lands, or shows that the payment did not go through.
    POST: "check now" — ask the providers about this order's attempts, for a notification
    that is slow or lost (payments_check)."""
    order = _order_or_404(request, order_no)
    if request.method == "GET":
        limited = is_ratelimited(
            request, group="orders.paying.return", key="user", rate="12/m", method=is_ratelimited.ALL, increment=True
        )
        if not limited:
            payment_returned(order=order, params=request.GET.dict())
            order.refresh_from_db()
    if request.method == "POST":
        limited = is_ratelimited(
            request, group="orders.paying", key="user", rate="6/m", method=is_ratelimited.ALL, increment=True
        )
        if not limited:
            payments_check(order=order)
        order.refresh_from_db()
        if wants_json(request):
            return ok(selectors.order_payment_data(order))
        return redirect("orders:paying", order_no=order.order_no)
    payment = selectors.order_payment_shown(order)
    context = {
        "order": order,
        "payment": payment,
        "now": timezone.now(),
        "failure_words": selectors.PAYMENT_FAILURE_WORDS.get(payment["failure"], ""),
        "receipt": None if payment["refund"] else order_receipt(order),
        "address": selectors.order_address(order),
    }
    return render(request, "orders/paying.html", context)
