from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class OrderStatus(models.TextChoices):
    UNPAID = "unpaid", _("unpaid")
    PAID = "paid", _("paid")
    CANCELLED = "cancelled", _("cancelled")


class Order(models.Model):
    # Time prefix + PostgreSQL sequence (orders.services.order_number_next): unique across
    # Redis failovers by construction, and sortable by time.
    order_no = models.CharField(max_length=32, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="orders")
    goods = models.ForeignKey("goods.Goods", on_delete=models.PROTECT, related_name="orders")
    sale = models.ForeignKey("goods.SeckillGoods", on_delete=models.PROTECT, related_name="orders", null=True)
    # Snapshot at purchase time: later edits of the goods do not rewrite history.
    goods_name = models.CharField(max_length=64)
    price = models.DecimalField(max_digits=10, decimal_places=2)
    quantity = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=16, choices=OrderStatus.choices, default=OrderStatus.UNPAID)
    created_at = models.DateTimeField(auto_now_add=True)
    pay_deadline = models.DateTimeField()
    paid_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancel_reason = models.CharField(max_length=32, blank=True)

    class Meta:
        ordering = ("-created_at",)
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            # The expiry sweep scans unpaid orders by deadline.
            models.Index(fields=["pay_deadline"], condition=models.Q(status="unpaid"), name="order_unpaid_deadline"),
        ]

    def __str__(self) -> str:
        return self.order_no


class SeckillOrder(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="seckill_orders")
    sale = models.ForeignKey("goods.SeckillGoods", on_delete=models.PROTECT, related_name="seckill_orders")
    order = models.OneToOneField(Order, on_delete=models.PROTECT, related_name="seckill")
    # The gate's request id: a redelivered task message finds its order by it.
    request_id = models.CharField(max_length=64, unique=True)
    # False once the order is cancelled, which frees the user to buy this sale again.
    live = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # The last guard against double buying: at most one live order per user per sale.
            models.UniqueConstraint(
                fields=["user", "sale"], condition=models.Q(live=True), name="one_live_seckill_order_per_user_sale"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} / sale {self.sale_id}"
