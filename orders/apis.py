"""Orders API: my orders, one order, pay, cancel; orders.selectors and orders.services, as
the order pages. Another shopper's order is indistinguishable from a missing one (404).
Merchants: the live figures of one of their sales (its orders counted here, beside them)."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from goods.apis import SALE_ID
from goods.selectors import sales_visible_to
from orders import selectors, services
from orders.selectors import sale_figures
from orders.serializers import OrderPayInputSerializer, OrderSerializer, SaleFiguresSerializer
from seckill_site.api import BoundedJSONParser, EnvelopePagination, api_fail, api_ok, envelope, errors, one_or_404
from seckill_site.codes import Code
from users.http import signed_in
from users.permissions import IsMerchant

ORDER_NO = OpenApiParameter(
    "order_no", {"type": "string", "pattern": "^[0-9]{1,32}$"}, OpenApiParameter.PATH, description="order number"
)


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
            return api_fail(Code.ORDER_NOT_FOUND)
        return api_ok(OrderSerializer(order).data)


class _OrderActionApi(APIView):
    """Pay or cancel: the service decides whether the order's state allows it."""

    order_action: staticmethod

    def post(self, request: Request, order_no: str) -> Response:
        order = selectors.order_of_user(user=signed_in(request), order_no=order_no)
        if order is None:
            return api_fail(Code.ORDER_NOT_FOUND)
        try:
            order = self.order_action(order=order)
        except services.OrderStateError as refusal:
            return api_fail(Code.ORDER_STATE, str(refusal))
        return api_ok(OrderSerializer(order).data)


_ACTION_ERRORS = errors(401, 404, 409)


class OrderPayApi(APIView):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["orders"],
        summary="Pay an unpaid order before its deadline (simulated provider), shipping to one of my addresses",
        description="The address is copied onto the order: later edits of the address book change no paid "
        "order. Without `addressId` the order ships to my default address; with no address at all the "
        "payment is refused (`code` 500602): add one with POST users/addresses first.",
        parameters=[ORDER_NO],
        request=OrderPayInputSerializer,
        responses={200: envelope("OrderPayEnvelope", OrderSerializer()), **errors(400, 401, 404, 409)},
    )
    def post(self, request: Request, order_no: str) -> Response:
        order = selectors.order_of_user(user=signed_in(request), order_no=order_no)
        if order is None:
            return api_fail(Code.ORDER_NOT_FOUND)
        body = OrderPayInputSerializer(data=request.data if request.data else {})
        body.is_valid(raise_exception=True)
        chosen = body.validated_data.get("addressId")
        address = selectors.shipping_address_for(user=signed_in(request), address_id=chosen)
        if address is None:
            return api_fail(Code.ADDRESS_NEEDED, selectors.shipping_address_problem(address_id=chosen))
        try:
            order = services.order_pay(order=order, address=address)
        except services.OrderStateError as refusal:
            return api_fail(Code.ORDER_STATE, str(refusal))
        return api_ok(OrderSerializer(order).data)


class OrderCancelApi(_OrderActionApi):
    order_action = staticmethod(services.order_cancel_by_user)

    @extend_schema(
        tags=["orders"],
        summary="Cancel an unpaid order; the unit goes back on sale",
        parameters=[ORDER_NO],
        request=None,
        responses={200: envelope("OrderCancelEnvelope", OrderSerializer()), **_ACTION_ERRORS},
    )
    def post(self, request: Request, order_no: str) -> Response:
        return super().post(request, order_no)


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
