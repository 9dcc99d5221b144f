"""Orders in the API: the fields of the order page's JSON (orders.views), plus the sale."""

from rest_framework import serializers

from orders.models import Order


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
        )
        read_only_fields = fields


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
    start = serializers.FloatField()
    end = serializers.FloatField()
    series = Point(many=True)
