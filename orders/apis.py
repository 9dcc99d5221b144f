"""Orders API: my orders, one order, paying (an attempt at a provider, a card), cancel, and
after paying (a refund before it ships, receipt, a return after it, the thread with the
merchant); the services and selectors of the order pages. Another shopper's order is
indistinguishable from a missing one (404). Merchants: the live figures of one of their sales
(its orders counted here, beside them)."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orders import selectors
from orders.codes import OrderCode
from orders.contact.limits import MESSAGE_RATE, message_try_refused
from orders.contact.services import UNANSWERED_MAX, MessageRefused, order_message_ask
from orders.forms import refund_reason_text, return_reason_text
from orders.fulfilment.returns import return_parcel_sent, return_request_open, return_request_withdraw
from orders.fulfilment.services import order_deliver, refund_request_open
from orders.models import MESSAGE_MAX
from orders.payments.closing import order_cancel_by_shopper
from orders.payments.http import provider_urls
from orders.payments.limits import TooOften, card_try_refused
from orders.payments.providers import card_providers, provider, provider_default, providers_enabled
from orders.payments.services import PaymentDeclined, PaymentUnavailable, payment_card_confirm, payment_start
from orders.selectors import sale_figures
from orders.serializers import (
    CardInputSerializer,
    CardResultSerializer,
    MessageInputSerializer,
    OrderPayInputSerializer,
    OrderSerializer,
    PaymentStartSerializer,
    RefundRequestInputSerializer,
    ReturnParcelInputSerializer,
    ReturnRequestInputSerializer,
    SaleFiguresSerializer,
)
from orders.services import OrderStateError
from sales.apis import SALE_ID
from sales.selectors import sales_visible_to
from seckill_site.api import BoundedJSONParser, EnvelopePagination, api_fail, api_ok, envelope, errors, one_or_404
from seckill_site.codes import Code
from users.http import signed_in
from users.permissions import IsMerchant

ORDER_NO = OpenApiParameter(
    "order_no", {"type": "string", "pattern": "^[0-9]{1,32}$"}, OpenApiParameter.PATH, description="order number"
)
TRADE_NO = OpenApiParameter(
    "trade_no",
    {"type": "string", "pattern": "^[A-Za-z0-9_]{1,64}$"},
    OpenApiParameter.PATH,
    description="payment attempt",
)


def _too_often(refusal: TooOften) -> Response:
    """429 with the refusal's words and Retry-After: started or tried too often, nothing sent."""
    response = api_fail(Code.TOO_MANY_REQUESTS, str(refusal))
    response["Retry-After"] = str(refusal.retry_after)
    return response


def _order_moved(request: Request, order_no: str, move) -> Response:
    """The shopper's move on their own order, `move(order, user)` (a service call): another
    shopper's order or none is a 404, a move the order cannot make the page's 409, and the
    answer is the order as GET orders/<no> answers it, read again."""
    user = signed_in(request)
    order = selectors.order_of_user(user=user, order_no=order_no)
    if order is None:
        return api_fail(OrderCode.ORDER_NOT_FOUND)
    try:
        move(order, user)
    except OrderStateError as refusal:
        return api_fail(OrderCode.ORDER_STATE, str(refusal))
    return api_ok(OrderSerializer(selectors.order_of_user(user=user, order_no=order_no)).data)


def _body(serializer_class, request: Request) -> dict:
    """The request's JSON body checked by `serializer_class`: a 400 (DRF's) when it is not."""
    body = serializer_class(data=request.data if request.data else {})
    body.is_valid(raise_exception=True)
    return body.validated_data


class OrderListApi(APIView):
    pagination_class = EnvelopePagination

    @extend_schema(
        tags=["orders"],
        summary="My orders, newest first",
        responses={200: OrderSerializer(many=True), **errors(400, 401, 404)},
    )
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.orders_of_user(user=signed_in(request)), request, view=self)
        return paginator.get_paginated_response(OrderSerializer(page, many=True).data)


class OrderDetailApi(APIView):
    @extend_schema(
        tags=["orders"],
        summary="One of my orders",
        parameters=[ORDER_NO],
        responses={200: envelope("OrderEnvelope", OrderSerializer()), **errors(401, 404)},
    )
    def get(self, request: Request, order_no: str) -> Response:
        order = selectors.order_of_user(user=signed_in(request), order_no=order_no)
        if order is None:
            return api_fail(OrderCode.ORDER_NOT_FOUND)
        return api_ok(OrderSerializer(order).data)


class OrderPayApi(APIView):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["orders"],
        summary="Start paying an unpaid order before its deadline, at a provider's cashier or by card",
        description="Payment is asynchronous, as at any real provider: this opens an attempt and answers "
        "where to pay it (a cashier URL to send the shopper to; or, at a provider that takes cards, the "
        "attempt's client secret for its card script, then POST the card token to `payments/{tradeNo}/card`). "
        "The order turns paid when the "
        "provider's signed notification lands; poll GET orders/{order_no} (`payment`). The address is "
        "copied onto the order; without `addressId` it ships to my default address, and with no address "
        "at all the payment is refused (`code` 500602). A provider that cannot be reached: `code` 500603, "
        "nothing charged. Too many attempts on one order lately (orders.payments.limits): 429 (`code` "
        "500429) with Retry-After, nothing opened.",
        parameters=[ORDER_NO],
        request=OrderPayInputSerializer,
        responses={200: envelope("PaymentStartEnvelope", PaymentStartSerializer()), **errors(400, 401, 404, 409, 429)},
    )
    def post(self, request: Request, order_no: str) -> Response:
        order = selectors.order_of_user(user=signed_in(request), order_no=order_no)
        if order is None:
            return api_fail(OrderCode.ORDER_NOT_FOUND)
        body = OrderPayInputSerializer(data=request.data if request.data else {})
        body.is_valid(raise_exception=True)
        chosen = body.validated_data.get("addressId")
        address = selectors.shipping_address_for(user=signed_in(request), address_id=chosen)
        if address is None:
            return api_fail(OrderCode.ADDRESS_NEEDED, selectors.shipping_address_problem(address_id=chosen))
        method = body.validated_data.get("method") or provider_default()
        if method not in providers_enabled():
            return api_fail(OrderCode.PAYMENT_UNAVAILABLE, _("This way to pay is not available."))
        try:
            payment, checkout = payment_start(
                order=order,
                provider_name=method,
                address=address,
                mobile=body.validated_data["mobile"],
                **provider_urls(request, order=order, method=method),
            )
        except TooOften as refusal:
            return _too_often(refusal)
        except PaymentUnavailable as refusal:
            return api_fail(OrderCode.PAYMENT_UNAVAILABLE, str(refusal))
        except OrderStateError as refusal:
            return api_fail(OrderCode.ORDER_STATE, str(refusal))
        return api_ok(
            {
                "tradeNo": payment.trade_no,
                "provider": payment.provider,
                "amount": str(payment.amount),
                "currency": payment.currency,
                "redirectUrl": checkout.redirect_url,
                "clientSecret": checkout.client_secret,
                "publishableKey": provider(method).browser_key(),
            }
        )


class PaymentCardApi(APIView):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["orders"],
        summary="Pay a card attempt with the card the provider's script tokenized",
        description="Too many card tries on the attempt or by the shopper lately (orders.payments.limits): "
        "429 (`code` 500429) with Retry-After, and the token is not sent to the provider.",
        parameters=[ORDER_NO, TRADE_NO],
        request=CardInputSerializer,
        responses={200: envelope("CardResultEnvelope", CardResultSerializer()), **errors(400, 401, 404, 409, 429)},
    )
    def post(self, request: Request, order_no: str, trade_no: str) -> Response:
        order = selectors.order_of_user(user=signed_in(request), order_no=order_no)
        payment = order.payments.filter(trade_no=trade_no, provider__in=card_providers()).first() if order else None
        if order is None or payment is None:
            return api_fail(OrderCode.ORDER_NOT_FOUND)
        body = CardInputSerializer(data=request.data if request.data else {})
        body.is_valid(raise_exception=True)
        refusal = card_try_refused(request._request, payment=payment)
        if refusal is not None:
            return _too_often(refusal)
        try:
            payment, secret = payment_card_confirm(
                payment=payment,
                token=body.validated_data["token"],
                **provider_urls(request._request, order=order, method=payment.provider),
            )
        except TooOften as too_often:  # another card, but too many attempts lately
            return _too_often(too_often)
        except PaymentDeclined as declined:
            # Another card goes on a new attempt behind this one, whatever tradeNo it is sent to.
            return api_fail(OrderCode.PAYMENT_UNAVAILABLE, str(declined), data={"tradeNo": declined.payment.trade_no})
        except OrderStateError as refusal:
            return api_fail(OrderCode.PAYMENT_UNAVAILABLE, str(refusal))
        return api_ok({"status": payment.status, "clientSecret": secret, "tradeNo": payment.trade_no})


class OrderCancelApi(APIView):
    @extend_schema(
        tags=["orders"],
        summary="Cancel an unpaid order; its open payment is closed at the provider first, then the unit "
        "goes back on sale",
        parameters=[ORDER_NO],
        request=None,
        responses={200: envelope("OrderCancelEnvelope", OrderSerializer()), **errors(401, 404, 409)},
    )
    def post(self, request: Request, order_no: str) -> Response:
        order = selectors.order_of_user(user=signed_in(request), order_no=order_no)
        if order is None:
            return api_fail(OrderCode.ORDER_NOT_FOUND)
        try:
            order = order_cancel_by_shopper(order=order)
        except OrderStateError as refusal:
            return api_fail(OrderCode.ORDER_STATE, str(refusal))
        return api_ok(OrderSerializer(order).data)


class OrderRefundRequestApi(APIView):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["orders"],
        summary="Ask for a refund of a paid order that has not shipped; the merchant approves or declines",
        description="One request waits at a time; while it waits the order does not ship. Approved: the order "
        "is refunded in full through its payment provider. Declined: `refundRequest.answer` says why, and the "
        "order ships. A shipped order goes back through a return instead (409 here; `return-request`).",
        parameters=[ORDER_NO],
        request=RefundRequestInputSerializer,
        responses={200: envelope("RefundRequestEnvelope", OrderSerializer()), **errors(400, 401, 404, 409)},
    )
    def post(self, request: Request, order_no: str) -> Response:
        def ask(order, user):
            body = _body(RefundRequestInputSerializer, request)
            reason = refund_reason_text(body["reason"], body["detail"])
            refund_request_open(order_id=order.pk, reason=reason, actor_id=user.pk)

        return _order_moved(request, order_no, ask)


class OrderReceivedApi(APIView):
    @extend_schema(
        tags=["orders"],
        summary="Confirm a shipped order arrived: it is completed",
        parameters=[ORDER_NO],
        request=None,
        responses={200: envelope("OrderReceivedEnvelope", OrderSerializer()), **errors(401, 404, 409)},
    )
    def post(self, request: Request, order_no: str) -> Response:
        return _order_moved(request, order_no, lambda order, user: order_deliver(order_id=order.pk, actor_id=user.pk))


class OrderReturnRequestApi(APIView):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["orders"],
        summary="Ask to send a shipped or delivered order back for a refund; the merchant approves or declines",
        description="Asked on a shipped order, or on a delivered one within the return window after "
        "delivery (RETURN_WINDOW_DAYS, 7 by default); one return is under way at a time, and meanwhile a "
        "shipped order does not complete by itself. Approved: `returnRequest.returnAddress` says where the "
        "parcel goes; POST its carrier and tracking number to `return-request/parcel`. Declined: "
        "`returnRequest.answer` says why. An order that has not shipped, is past its window or has a return "
        "under way: 409 (`code` 500601).",
        parameters=[ORDER_NO],
        request=ReturnRequestInputSerializer,
        responses={200: envelope("ReturnRequestEnvelope", OrderSerializer()), **errors(400, 401, 404, 409)},
    )
    def post(self, request: Request, order_no: str) -> Response:
        def ask(order, user):
            body = _body(ReturnRequestInputSerializer, request)
            reason = return_reason_text(body["reason"], body["detail"])
            return_request_open(order_id=order.pk, reason=reason, actor_id=user.pk)

        return _order_moved(request, order_no, ask)

    @extend_schema(
        tags=["orders"],
        summary="Withdraw my return before the parcel is sent back: the order goes on as if none was asked",
        description="Allowed while the return waits for the merchant or after they approved it; once the "
        "parcel is on its way back, or with no return under way: 409 (`code` 500601).",
        parameters=[ORDER_NO],
        request=None,
        responses={200: envelope("ReturnWithdrawEnvelope", OrderSerializer()), **errors(401, 404, 409)},
    )
    def delete(self, request: Request, order_no: str) -> Response:
        return _order_moved(
            request, order_no, lambda order, user: return_request_withdraw(order_id=order.pk, actor_id=user.pk)
        )


class OrderReturnParcelApi(APIView):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["orders"],
        summary="The parcel I sent back, once the merchant approved the return: its carrier and tracking number",
        description="The tracking number is kept as the shipping desk keeps it (spaces dropped, upper case); "
        "anything no carrier prints is a 400. Before the approval, or a second time: 409 (`code` 500601). "
        "The merchant refunds the order in full once the parcel is back (`returnRequest.refundedAt`).",
        parameters=[ORDER_NO],
        request=ReturnParcelInputSerializer,
        responses={200: envelope("ReturnParcelEnvelope", OrderSerializer()), **errors(400, 401, 404, 409)},
    )
    def post(self, request: Request, order_no: str) -> Response:
        def sent(order, user):
            body = _body(ReturnParcelInputSerializer, request)
            return_parcel_sent(
                order_id=order.pk, carrier=body["carrier"], tracking_no=body["trackingNo"], actor_id=user.pk
            )

        return _order_moved(request, order_no, sent)


class OrderMessageApi(APIView):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["orders"],
        summary="Write to the merchant about my paid order; the answer comes on the order's thread (`messages`)",
        description=f"Plain text (`text`), at most {MESSAGE_MAX} characters as the thread keeps it; control "
        "characters and bidirectional overrides are a 400. An unpaid or closed order has no thread, and "
        f"{UNANSWERED_MAX} messages waiting for the merchant's answer are enough: 409 (`code` 500601). At most "
        f"{MESSAGE_RATE} (messages per shopper over all their orders, shared with the order page): 429 "
        "(`code` 500429) with Retry-After, nothing kept.",
        parameters=[ORDER_NO],
        request=MessageInputSerializer,
        responses={200: envelope("OrderMessageEnvelope", OrderSerializer()), **errors(400, 401, 404, 409, 429)},
    )
    def post(self, request: Request, order_no: str) -> Response:
        user = signed_in(request)
        order = selectors.order_of_user(user=user, order_no=order_no)
        if order is None:
            return api_fail(OrderCode.ORDER_NOT_FOUND)
        text = _body(MessageInputSerializer, request)["text"]
        refusal = message_try_refused(request._request)
        if refusal is not None:
            return _too_often(refusal)
        try:
            order_message_ask(order_id=order.pk, text=text, actor_id=user.pk)
        except MessageRefused as refused:
            return api_fail(OrderCode.ORDER_STATE, str(refused))
        return api_ok(OrderSerializer(selectors.order_of_user(user=user, order_no=order_no)).data)


class MerchantSaleFiguresApi(APIView):
    permission_classes = [IsMerchant]

    @extend_schema(
        tags=["merchant"],
        summary="Live figures of one of my sales: stock in Redis and the database, orders by status",
        parameters=[SALE_ID],
        responses={200: envelope("SaleFiguresEnvelope", SaleFiguresSerializer()), **errors(401, 403, 404)},
    )
    def get(self, request: Request, sale_id: str) -> Response:
        sale = one_or_404(sales_visible_to(signed_in(request)), sale_id, _("no such sale"))
        return api_ok(SaleFiguresSerializer(sale_figures(sale=sale)).data)
