"""Sale events in the API: the public sale rows (sales.selectors) and the merchant's own
sales. Field names are camelCase, as in seed 000's JSON and the pages."""

from rest_framework import serializers

from goods.serializers import MoneyField
from sales.models import DRAW_WINDOW_DEFAULT, DRAW_WINDOW_MAX, DRAW_WINDOW_MIN, DRAW_WINDOW_NONE, Admission, Sale


class SaleSerializer(serializers.Serializer):
    """A row of sales.selectors.sales_for_list: the sale event with its goods."""

    id = serializers.IntegerField(help_text="the sale event id: what the buy endpoints call goodsId")
    goodsId = serializers.IntegerField()
    goodsName = serializers.CharField()
    goodsTitle = serializers.CharField()
    goodsImg = serializers.CharField(allow_null=True)
    goodsPrice = serializers.DecimalField(max_digits=10, decimal_places=2)
    seckillPrice = serializers.DecimalField(max_digits=10, decimal_places=2)
    stockLeft = serializers.IntegerField(help_text="units left: the live Redis counter")
    status = serializers.IntegerField(help_text="0 not started, 1 on sale, 2 ended")
    remainSeconds = serializers.IntegerField(help_text="seconds to the start; 0 while on; -1 ended")
    startDate = serializers.DateTimeField()
    endDate = serializers.DateTimeField()
    discount = serializers.IntegerField(help_text="percent off the goods price")


class SaleGoodsSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    goodsId = serializers.IntegerField()
    goodsName = serializers.CharField()
    goodsTitle = serializers.CharField()
    goodsImg = serializers.CharField(allow_null=True)
    goodsDetail = serializers.CharField(allow_blank=True)
    goodsPrice = serializers.DecimalField(max_digits=10, decimal_places=2)
    goodsStock = serializers.IntegerField()
    seckillPrice = serializers.DecimalField(max_digits=10, decimal_places=2)
    stockCount = serializers.IntegerField(help_text="units left: the live Redis counter")
    startDate = serializers.DateTimeField()
    endDate = serializers.DateTimeField()


class SaleDetailSerializer(serializers.Serializer):
    """Seed 000's /goods/getDetails without the user (see /api/v1/users/me)."""

    seckillStatus = serializers.IntegerField(help_text="0 not started, 1 on sale, 2 ended")
    remainSeconds = serializers.IntegerField(help_text="seconds to the start; 0 while on; -1 ended")
    goods = SaleGoodsSerializer()


# --- merchants ------------------------------------------------------------------------------------


class MerchantSaleSerializer(serializers.ModelSerializer):
    """A sale event as its merchant sees it; `stockRedis` comes from the serializer context."""

    goodsId = serializers.IntegerField(source="goods_id", read_only=True)
    goodsName = serializers.CharField(source="goods.name", read_only=True)
    seckillPrice = serializers.DecimalField(source="seckill_price", max_digits=10, decimal_places=2)
    stockCount = serializers.IntegerField(source="stock_count", help_text="units left in the database")
    stockRedis = serializers.SerializerMethodField(help_text="units left in Redis; null when not loaded")
    startAt = serializers.DateTimeField(source="start_at")
    endAt = serializers.DateTimeField(source="end_at")
    status = serializers.SerializerMethodField(help_text="0 not started, 1 on sale, 2 ended")
    admission = serializers.CharField(read_only=True, help_text="fcfs (first come, first served) or draw")
    drawWindowS = serializers.IntegerField(source="draw_window_s", read_only=True)
    entriesOpenAt = serializers.DateTimeField(source="entries_open_at", read_only=True, allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = Sale
        fields = (
            "id",
            "goodsId",
            "goodsName",
            "seckillPrice",
            "stockCount",
            "stockRedis",
            "startAt",
            "endAt",
            "status",
            "admission",
            "drawWindowS",
            "entriesOpenAt",
            "createdAt",
        )

    def get_stockRedis(self, sale: Sale) -> int | None:
        return self.context.get("stock_redis", {}).get(sale.pk)

    def get_status(self, sale: Sale) -> int:
        return int(sale.status_at())


ADMISSION_HELP = (
    "fcfs: first come, first served; draw: shoppers who enter in the opening window are drawn at random "
    "(changes refused once the sale has started)"
)
WINDOW_HELP = (
    f"seconds of the draw's opening window, {DRAW_WINDOW_MIN} to {DRAW_WINDOW_MAX}; "
    f"{DRAW_WINDOW_NONE} when entriesOpenAt is set (the draw is at the start)"
)
ENTRIES_OPEN_HELP = (
    "draw sales only: entries are taken from this time (before startAt, not in the past) until the draw; "
    "null: only in the opening window. Refused once entries have opened"
)


class SaleCreateSerializer(serializers.Serializer):
    """Input only; the rules (end after start, stock not negative) are the model's, checked
    by sales.services.sale_create."""

    goodsId = serializers.IntegerField(min_value=1, max_value=10**18 - 1, help_text="one of your goods")
    seckillPrice = MoneyField()
    stockCount = serializers.IntegerField(min_value=0, max_value=2**31 - 1)
    startAt = serializers.DateTimeField()
    endAt = serializers.DateTimeField()
    admission = serializers.ChoiceField(choices=Admission.values, default=Admission.FCFS, help_text=ADMISSION_HELP)
    drawWindowS = serializers.IntegerField(
        min_value=DRAW_WINDOW_NONE, max_value=DRAW_WINDOW_MAX, default=DRAW_WINDOW_DEFAULT, help_text=WINDOW_HELP
    )
    entriesOpenAt = serializers.DateTimeField(
        required=False, allow_null=True, default=None, help_text=ENTRIES_OPEN_HELP
    )


class SaleUpdateSerializer(serializers.Serializer):
    seckillPrice = MoneyField(required=False)
    startAt = serializers.DateTimeField(required=False)
    endAt = serializers.DateTimeField(required=False)
    admission = serializers.ChoiceField(choices=Admission.values, required=False, help_text=ADMISSION_HELP)
    drawWindowS = serializers.IntegerField(
        min_value=DRAW_WINDOW_NONE, max_value=DRAW_WINDOW_MAX, required=False, help_text=WINDOW_HELP
    )
    entriesOpenAt = serializers.DateTimeField(required=False, allow_null=True, help_text=ENTRIES_OPEN_HELP)
    stockDelta = serializers.IntegerField(
        required=False,
        min_value=-(2**31 - 1),
        max_value=2**31 - 1,
        help_text="units to add (or, negative, remove). A difference, not an absolute count, so units sold "
        "meanwhile stay sold (sales.services.sale_update); refused when fewer units are left.",
    )
