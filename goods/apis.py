"""Goods API: the merchants' own catalogue.

Reads are goods.selectors, writes goods.services, as in the admin. A merchant sees only their
own goods; someone else's answer 404, as in the admin.
"""

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from goods import services
from goods.models import Goods
from goods.selectors import goods_visible_to
from goods.serializers import GoodsSerializer
from seckill_site.api import EnvelopePagination, api_fail, api_ok, envelope, errors, id_parameter, one_or_404
from seckill_site.codes import Code
from users.http import signed_in
from users.permissions import IsMerchant

GOODS_ID = id_parameter("goods_id", "goods id")


class MerchantGoodsListApi(APIView):
    permission_classes = [IsMerchant]
    pagination_class = EnvelopePagination

    @extend_schema(
        tags=["merchant"],
        summary="My goods",
        responses={200: GoodsSerializer(many=True), **errors(400, 401, 403, 404)},
    )
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(goods_visible_to(signed_in(request)), request, view=self)
        return paginator.get_paginated_response(GoodsSerializer(page, many=True).data)

    @extend_schema(
        tags=["merchant"],
        summary="Add goods (owned by me; images are uploaded in the admin)",
        request=GoodsSerializer,
        responses={201: envelope("GoodsEnvelope", GoodsSerializer()), **errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        serializer = GoodsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        goods = services.goods_save(goods=Goods(owner=signed_in(request), **serializer.validated_data))
        return api_ok(GoodsSerializer(goods).data, status_code=201)


class MerchantGoodsDetailApi(APIView):
    permission_classes = [IsMerchant]

    @extend_schema(
        tags=["merchant"],
        summary="One of my goods",
        parameters=[GOODS_ID],
        responses={200: envelope("GoodsDetailEnvelope", GoodsSerializer()), **errors(401, 403, 404)},
    )
    def get(self, request: Request, goods_id: str) -> Response:
        goods = one_or_404(goods_visible_to(signed_in(request)), goods_id, _("no such goods"))
        return api_ok(GoodsSerializer(goods).data)

    @extend_schema(
        tags=["merchant"],
        summary="Edit one of my goods (any subset of the fields)",
        parameters=[GOODS_ID],
        request=GoodsSerializer(partial=True),
        responses={200: envelope("GoodsUpdateEnvelope", GoodsSerializer()), **errors(400, 401, 403, 404)},
    )
    def patch(self, request: Request, goods_id: str) -> Response:
        goods = one_or_404(goods_visible_to(signed_in(request)), goods_id, _("no such goods"))
        serializer = GoodsSerializer(goods, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        for field, value in serializer.validated_data.items():
            setattr(goods, field, value)
        try:
            saved = services.goods_save(goods=goods, fields=list(serializer.validated_data))
        except Goods.DoesNotExist:
            return api_fail(Code.NOT_FOUND, _("no such goods"))
        return api_ok(GoodsSerializer(saved).data)
