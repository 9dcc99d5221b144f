"""Sales API: the public sale list and detail, and the merchants' own sales.

Reads are sales.selectors, writes sales.services, as in the pages and the admin. A merchant
sees only their own sales; someone else's answer 404, as in the admin.
"""

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from goods.selectors import goods_visible_to
from sales import services
from sales.models import Sale
from sales.selectors import sale_detail_public, sales_for_list, sales_visible_to, stock_left
from sales.serializers import (
    MerchantSaleSerializer,
    SaleCreateSerializer,
    SaleDetailSerializer,
    SaleSerializer,
    SaleUpdateSerializer,
)
from seckill_site.api import EnvelopePagination, api_fail, api_ok, envelope, errors, id_parameter, one_or_404
from seckill_site.codes import Code
from seckill_site.http import positive_int, public_answer
from users.http import signed_in
from users.permissions import IsMerchant

SALE_ID = id_parameter("sale_id", "sale event id")

# --- public --------------------------------------------------------------------------------------


class SaleListApi(APIView):
    authentication_classes: list = []  # the same for everybody, like the cached list page
    permission_classes = [AllowAny]
    pagination_class = EnvelopePagination

    @extend_schema(
        tags=["sales"],
        summary="Sales: running and upcoming first, then those ended in the last week",
        responses={200: SaleSerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(sales_for_list(), request, view=self)
        rows = [row.wire() for row in page or []]
        return paginator.get_paginated_response(SaleSerializer(rows, many=True).data)


class SaleDetailApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        tags=["sales"],
        summary="One sale: status, seconds to the start, goods, live stock",
        parameters=[SALE_ID],
        responses={200: envelope("SaleDetailEnvelope", SaleDetailSerializer()), **errors(404)},
    )
    def get(self, request: Request, sale_id: str) -> Response:
        parsed = positive_int(sale_id)
        detail, exact_until = sale_detail_public(sale_id=parsed) if parsed is not None else (None, 0.0)
        if detail is None:
            return api_fail(Code.NOT_FOUND, _("no such sale"))
        # Everybody's answer for a second: a CDN, the browser and seckill.fastpath may keep it.
        return public_answer(api_ok(SaleDetailSerializer(detail.wire()).data), exact_until=exact_until)


# --- merchants -------------------------------------------------------------------------------------


def _sales_data(sales: list[Sale]) -> Any:
    context = {"stock_redis": stock_left([sale.pk for sale in sales])}
    return MerchantSaleSerializer(sales, many=True, context=context).data


class MerchantSaleListApi(APIView):
    permission_classes = [IsMerchant]
    pagination_class = EnvelopePagination

    @extend_schema(
        tags=["merchant"],
        summary="My sale events, latest start first, with stock in the database and in Redis",
        responses={200: MerchantSaleSerializer(many=True), **errors(400, 401, 403, 404)},
    )
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(sales_visible_to(signed_in(request)), request, view=self)
        return paginator.get_paginated_response(_sales_data(page or []))

    @extend_schema(
        tags=["merchant"],
        summary="Create a sale event of one of my goods; it is loaded into Redis at once",
        request=SaleCreateSerializer,
        responses={201: envelope("SaleCreateEnvelope", MerchantSaleSerializer()), **errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        serializer = SaleCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        goods = goods_visible_to(signed_in(request)).filter(pk=data["goodsId"]).first()
        if goods is None:
            return api_fail(Code.BAD_REQUEST, _("goodsId: no such goods of yours"), data={"goodsId": ["not found"]})
        sale = Sale(
            goods=goods,
            seckill_price=data["seckillPrice"],
            stock_count=data["stockCount"],
            start_at=data["startAt"],
            end_at=data["endAt"],
            admission=data["admission"],
            draw_window_s=data["drawWindowS"],
            entries_open_at=data["entriesOpenAt"],
        )
        services.sale_create(sale=sale, actor=signed_in(request))  # validated, and pre-heated into Redis once committed
        return api_ok(_sales_data([sale])[0], status_code=201)


# API field -> model attribute. Stock changes go through stockDelta; the goods never change.
SALE_EDITABLE = {
    "seckillPrice": "seckill_price",
    "startAt": "start_at",
    "endAt": "end_at",
    "admission": "admission",
    "drawWindowS": "draw_window_s",
    "entriesOpenAt": "entries_open_at",
}


class MerchantSaleDetailApi(APIView):
    permission_classes = [IsMerchant]

    @extend_schema(
        tags=["merchant"],
        summary="One of my sale events",
        parameters=[SALE_ID],
        responses={200: envelope("MerchantSaleEnvelope", MerchantSaleSerializer()), **errors(401, 403, 404)},
    )
    def get(self, request: Request, sale_id: str) -> Response:
        sale = one_or_404(sales_visible_to(signed_in(request)), sale_id, _("no such sale"))
        return api_ok(_sales_data([sale])[0])

    @extend_schema(
        tags=["merchant"],
        summary="Edit one of my sale events; Redis is reloaded at once",
        parameters=[SALE_ID],
        request=SaleUpdateSerializer,
        responses={
            200: envelope("MerchantSaleUpdateEnvelope", MerchantSaleSerializer()),
            **errors(400, 401, 403, 404),
        },
    )
    def patch(self, request: Request, sale_id: str) -> Response:
        sale = one_or_404(sales_visible_to(signed_in(request)), sale_id, _("no such sale"))
        serializer = SaleUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        changes = {attribute: data[field] for field, attribute in SALE_EDITABLE.items() if field in data}
        try:
            sale = services.sale_update(
                sale=sale, changes=changes, stock_delta=data.get("stockDelta", 0), actor=signed_in(request)
            )
        except services.StockShortage as shortage:
            return api_fail(Code.BAD_REQUEST, str(shortage), data={"stockDelta": [str(shortage)]})
        return api_ok(_sales_data([sale])[0])
