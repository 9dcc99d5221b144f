from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from seckill_site.translated import Texts, text_in
from users.divisions import place_line


class OrderStatus(models.TextChoices):
    """An order's life: unpaid → paid (waiting to ship) → shipped → delivered, or unpaid →
    cancelled, or paid, shipped or delivered → refunded. Each move is a service in
    orders.services, orders.fulfilment or orders.payments that takes the order's row lock and
    checks where it is first, so two moves never both happen."""

    UNPAID = "unpaid", _("unpaid")
    PAID = "paid", _("paid")
    SHIPPED = "shipped", _("shipped")
    DELIVERED = "delivered", _("delivered")
    CANCELLED = "cancelled", _("cancelled")
    # Refunded in full by the merchant (orders.payments.refunds).
    REFUNDED = "refunded", _("refunded")


# The statuses of an order whose money the shop keeps: it has exactly one captured payment.
PAID_STATUSES = (OrderStatus.PAID, OrderStatus.SHIPPED, OrderStatus.DELIVERED)


class Order(models.Model):
    # Time prefix + PostgreSQL sequence (orders.services.order_number_next): unique across
    # Redis failovers by construction, and sortable by time.
    order_no = models.CharField(_("order number"), max_length=32, unique=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="orders", verbose_name=_("buyer")
    )
    goods = models.ForeignKey("goods.Goods", on_delete=models.PROTECT, related_name="orders", verbose_name=_("goods"))
    sale = models.ForeignKey(
        "sales.Sale", on_delete=models.PROTECT, related_name="orders", null=True, verbose_name=_("sale")
    )
    # Snapshot at purchase time: later edits of the goods do not rewrite history. `goods_name`
    # in LANGUAGE_CODE (else the other), for the merchant's lists and whatever reads the column;
    # `goods_names` in each language the goods had, for `item_name` (goods_name_snapshot).
    goods_name = models.CharField(_("item"), max_length=64)
    goods_names = models.JSONField(_("item in each language"), default=dict, blank=True)
    price = models.DecimalField(_("price"), max_digits=10, decimal_places=2)
    quantity = models.PositiveSmallIntegerField(_("quantity"), default=1)
    status = models.CharField(_("status"), max_length=16, choices=OrderStatus.choices, default=OrderStatus.UNPAID)
    created_at = models.DateTimeField(_("ordered at"), auto_now_add=True)
    pay_deadline = models.DateTimeField(_("pay by"))
    paid_at = models.DateTimeField(_("paid at"), null=True, blank=True)
    cancelled_at = models.DateTimeField(_("cancelled at"), null=True, blank=True)
    cancel_reason = models.CharField(_("cancel reason"), max_length=32, blank=True)

    class Meta:
        verbose_name = _("order")
        verbose_name_plural = _("orders")
        ordering = ("-created_at",)
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            # The expiry sweep scans unpaid orders by deadline.
            models.Index(fields=["pay_deadline"], condition=models.Q(status="unpaid"), name="order_unpaid_deadline"),
        ]

    def __str__(self) -> str:
        return self.order_no

    @property
    def item_name(self) -> str:
        """The goods' name as ordered, in the active language, else in the other (an order
        written before the names were kept per language has `goods_name` only)."""
        return text_in(self.goods_names) or self.goods_name


def goods_name_snapshot(names: Texts) -> dict[str, Any]:
    """An order's snapshot of goods named `names` (language -> name, "" where none): its
    `goods_name` in LANGUAGE_CODE, else the other, and `goods_names` in each."""
    return {"goods_name": text_in(names, settings.LANGUAGE_CODE), "goods_names": dict(names)}


class SeckillOrder(models.Model):
    """The sale's side of an order: who bought which sale, under which gate request."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="seckill_orders")
    sale = models.ForeignKey("sales.Sale", on_delete=models.PROTECT, related_name="seckill_orders")
    order = models.OneToOneField(Order, on_delete=models.PROTECT, related_name="seckill")
    # The gate's request id: a redelivered task message finds its order by it.
    request_id = models.CharField(max_length=64, unique=True)
    # False once the order is cancelled, which frees the user to buy this sale again.
    live = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("sale order")
        verbose_name_plural = _("sale orders")
        constraints = [
            # The last guard against double buying: at most one live order per user per sale.
            models.UniqueConstraint(
                fields=["user", "sale"], condition=models.Q(live=True), name="one_live_seckill_order_per_user_sale"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} / sale {self.sale_id}"


# What paying copies from the shopper's address book (users.Address) onto the order.
ORDER_ADDRESS_FIELDS = ("recipient", "phone", "region", "city", "district", "street", "postcode")


class OrderAddress(models.Model):
    """Where an order ships: a copy of the shopper's address made when they go to the cashier
    (orders.payments.services.payment_start), so editing or deleting the address book entry
    later changes no order. Its own table, written with the payment: the order writers' hot
    INSERT of unpaid orders stays as narrow as it was."""

    order = models.OneToOneField(
        Order, on_delete=models.CASCADE, primary_key=True, related_name="address", verbose_name=_("order")
    )
    recipient = models.CharField(_("recipient"), max_length=32)
    phone = models.CharField(_("phone"), max_length=11)
    region = models.CharField(_("province or region"), max_length=32)
    city = models.CharField(_("city"), max_length=32, blank=True)
    district = models.CharField(_("district"), max_length=32, blank=True)  # blank on orders paid before it
    street = models.CharField(_("street address"), max_length=120)
    postcode = models.CharField(_("postcode"), max_length=6, blank=True)

    class Meta:
        verbose_name = _("shipping address")
        verbose_name_plural = _("shipping addresses")

    def __str__(self) -> str:
        return f"{self.recipient} {self.phone}, {self.place} {self.street} {self.postcode}".strip()

    @property
    def place(self) -> str:
        return place_line(region=self.region, city=self.city, district=self.district)
