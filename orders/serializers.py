"""Orders in the API: the fields of the order page's JSON (orders.views), plus the sale."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from orders.models import Order, OrderAddress
from orders.selectors import order_address
from seckill_site.http import ID_MAX


class OrderAddressSerializer(serializers.ModelSerializer):
    """The address a paid order ships to: a copy made when it was paid."""

    class Meta:
        model = OrderAddress
        fields = ("recipient", "phone", "region", "city", "street", "postcode")
        read_only_fields = fields


class StrictIdField(serializers.IntegerField):
    """An id as a JSON integer, not a string of digits or a float."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class OrderPayInputSerializer(serializers.Serializer):
    addressId = StrictIdField(
        required=False,
        min_value=1,
        max_value=ID_MAX,
        help_text="one of my addresses (users/addresses) to ship to; my default address when left out",
    )


class OrderSerializer(serializers.ModelSerializer):
    orderNo = serializers.CharField(source="order_no")
    goodsId = serializers.IntegerField(source="goods_id")
    saleId = serializers.IntegerField(source="sale_id", allow_null=True)
    goodsName = serializers.CharField(source="goods_name")
    createdAt = serializers.DateTimeField(source="created_at")
    payDeadline = serializers.DateTimeField(source="pay_deadline")
    paidAt = serializers.DateTimeField(source="paid_at", allow_null=True)
    cancelledAt = serializers.DateTimeField(source="cancelled_at", allow_null=True)
    cancelReason = serializers.CharField(source="cancel_reason", allow_blank=True)
    address = serializers.SerializerMethodField(help_text="where it ships: a copy made when it was paid; null before")

    class Meta:
        model = Order
        fields = (
            "id",
            "orderNo",
            "goodsId",
            "saleId",
            "goodsName",
            "price",
            "quantity",
            "status",
            "createdAt",
            "payDeadline",
            "paidAt",
            "cancelledAt",
            "cancelReason",
            "address",
        )
        read_only_fields = fields

    @extend_schema_field(OrderAddressSerializer(allow_null=True))
    def get_address(self, order: Order) -> dict | None:
        address = order_address(order)
        return OrderAddressSerializer(address).data if address is not None else None


class SaleFiguresSerializer(serializers.Serializer):
    """orders.selectors.sale_figures: what the admin's live page shows."""

    class Point(serializers.Serializer):
        t = serializers.FloatField(help_text="epoch second")
        orders = serializers.IntegerField()
        cumulative = serializers.IntegerField()

    saleId = serializers.IntegerField()
    status = serializers.IntegerField(help_text="0 not started, 1 on sale, 2 ended")
    remainSeconds = serializers.IntegerField()
    stockDatabase = serializers.IntegerField()
    stockRedis = serializers.IntegerField(allow_null=True)
    inFlight = serializers.IntegerField(help_text="units handed out whose orders are not written yet")
    unpaid = serializers.IntegerField()
    paid = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    refusedCaptcha = serializers.IntegerField(help_text="captchas refused by the limit per shopper per sale")
    refusedPath = serializers.IntegerField(help_text="captcha answers refused by the limit per shopper per sale")
    revenue = serializers.DecimalField(max_digits=14, decimal_places=2, help_text="sum of the paid orders")
    serverTime = serializers.FloatField(help_text="the shop's clock, epoch seconds")
    start = serializers.FloatField()
    end = serializers.FloatField()
    series = Point(many=True)
