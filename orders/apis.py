"""Orders API: my orders, one order, pay, cancel; orders.selectors and orders.services, as
the order pages. Another shopper's order is indistinguishable from a missing one (404)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from orders import selectors, services
from orders.serializers import OrderSerializer
from seckill_site.api import EnvelopePagination, api_fail, api_ok, envelope, errors
from seckill_site.codes import Code

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
        page = paginator.paginate_queryset(selectors.orders_of_user(user=request.user), request, view=self)
        return paginator.get_paginated_response(OrderSerializer(page, many=True).data)


class OrderDetailApi(APIView):
    @extend_schema(
        tags=["orders"],
        summary="One of my orders",
        parameters=[ORDER_NO],
        responses={200: envelope("OrderEnvelope", OrderSerializer()), **errors(401, 404)},
    )
    def get(self, request: Request, order_no: str) -> Response:
        order = selectors.order_of_user(user=request.user, order_no=order_no)
        if order is None:
            return api_fail(Code.ORDER_NOT_FOUND)
        return api_ok(OrderSerializer(order).data)


class _OrderActionApi(APIView):
    """Pay or cancel: the service decides whether the order's state allows it."""

    order_action: staticmethod

    def post(self, request: Request, order_no: str) -> Response:
        order = selectors.order_of_user(user=request.user, order_no=order_no)
        if order is None:
            return api_fail(Code.ORDER_NOT_FOUND)
        try:
            order = self.order_action(order=order)
        except services.OrderStateError as refusal:
            return api_fail(Code.ORDER_STATE, str(refusal))
        return api_ok(OrderSerializer(order).data)


_ACTION_ERRORS = errors(401, 404, 409)


class OrderPayApi(_OrderActionApi):
    order_action = staticmethod(services.order_pay)

    @extend_schema(
        tags=["orders"],
        summary="Pay an unpaid order before its deadline (simulated provider)",
        parameters=[ORDER_NO],
        request=None,
        responses={200: envelope("OrderPayEnvelope", OrderSerializer()), **_ACTION_ERRORS},
    )
    def post(self, request: Request, order_no: str) -> Response:
        return super().post(request, order_no)


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
