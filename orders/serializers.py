"""Orders in the API: the fields of the order page's JSON (orders.views), plus the sale."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from orders.forms import REFUND_REASONS, RETURN_REASONS
from orders.fulfilment.services import tracking_no_clean
from orders.models import (
    MESSAGE_MAX,
    Carrier,
    MessageInvalid,
    Order,
    OrderAddress,
    RefundRequestStatus,
    ReturnRequestStatus,
    message_text_clean,
)
from orders.payments.providers import provider_choices
from orders.selectors import (
    order_address,
    order_messages_data,
    order_payment_data,
    order_refund_request_data,
    order_return_request_data,
    order_shipment_data,
)
from orders.services import OrderStateError
from seckill_site.http import ID_MAX


class OrderAddressSerializer(serializers.ModelSerializer):
    """The address a paid order ships to: a copy made when it was paid."""

    class Meta:
        model = OrderAddress
        fields = ("recipient", "phone", "region", "city", "district", "street", "postcode")
        read_only_fields = fields


class StrictIdField(serializers.IntegerField):
    """An id as a JSON integer, not a string of digits or a float."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """Text as a JSON string, not a number or a boolean made into one."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class OrderPayInputSerializer(serializers.Serializer):
    method = serializers.ChoiceField(
        choices=[],  # the registered providers, when the serializer is made (__init__)
        required=False,
        help_text="the provider whose cashier to go to (or whose card form); the shop's first when left out",
    )
    mobile = serializers.BooleanField(
        default=False, help_text="the provider's mobile-web cashier, where it has one, not the desktop one"
    )
    addressId = StrictIdField(
        required=False,
        min_value=1,
        max_value=ID_MAX,
        help_text="one of my addresses (users/addresses) to ship to; my default address when left out",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        method = self.fields["method"]
        assert isinstance(method, serializers.ChoiceField)
        method.choices = provider_choices()


class CardInputSerializer(serializers.Serializer):
    token = serializers.RegexField(
        r"^tok_[A-Za-z0-9]{1,60}$", help_text="the card, tokenized by the provider's script in the browser"
    )


class RefundSerializer(serializers.Serializer):
    status = serializers.CharField(help_text="pending, or succeeded")
    amount = serializers.CharField()
    kind = serializers.CharField(help_text="merchant, late (paid after the order closed) or duplicate (paid twice)")


class PaymentStateSerializer(serializers.Serializer):
    """orders.selectors.order_payment_data: what a client polls while a provider decides."""

    status = serializers.CharField(help_text="the order's status")
    paying = serializers.BooleanField(help_text="an attempt to pay is open at a provider, and waits for its word")
    provider = serializers.CharField(allow_null=True)
    failure = serializers.CharField(
        allow_null=True,
        help_text="the order is unpaid and its newest attempt failed: declined (the card), authentication "
        "(3-D Secure not passed) or left (the shopper left the cashier); nothing was charged, and it can be "
        "paid again until its deadline",
    )
    refund = RefundSerializer(
        allow_null=True, help_text="a refund of money the order could not take, or the merchant's"
    )


class PaymentStartSerializer(serializers.Serializer):
    tradeNo = serializers.CharField(help_text="our number for this attempt")
    provider = serializers.CharField()
    amount = serializers.CharField()
    currency = serializers.CharField()
    redirectUrl = serializers.CharField(allow_blank=True, help_text="a cashier to send the shopper to")
    clientSecret = serializers.CharField(
        allow_blank=True, help_text="a card attempt's, for the provider's card script (3-D Secure)"
    )
    publishableKey = serializers.CharField(
        allow_blank=True, help_text="a card provider's public key, for its card script"
    )


class CardResultSerializer(serializers.Serializer):
    status = serializers.CharField(help_text="the attempt's status: succeeded, or still open")
    tradeNo = serializers.CharField(
        help_text="the attempt the card went on: a new one behind the attempt posted to when that one had failed"
    )
    clientSecret = serializers.CharField(
        allow_blank=True, help_text="set when the bank asks the shopper to authenticate"
    )


class ShipmentSerializer(serializers.Serializer):
    carrier = serializers.CharField(help_text="sf, jd, ems, zto, yto, sto, yunda, jt, deppon or other")
    carrierName = serializers.CharField(help_text="the carrier's name, in the request's language")
    trackingNo = serializers.CharField()
    shippedAt = serializers.DateTimeField()
    deliveredAt = serializers.DateTimeField(allow_null=True)


class RefundRequestSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=RefundRequestStatus.choices)
    reason = serializers.CharField()
    answer = serializers.CharField(allow_blank=True, help_text="the merchant's, when declined")


class RefundRequestInputSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(
        choices=[value for value, _label in REFUND_REASONS], help_text="other: say why in `detail`"
    )
    detail = serializers.CharField(required=False, allow_blank=True, max_length=150, default="")

    def validate(self, attrs):
        if attrs["reason"] == "other" and not attrs["detail"].strip():
            raise serializers.ValidationError({"detail": _("Say why you want a refund.")})
        return attrs


class ReturnRequestInputSerializer(serializers.Serializer):
    """The page's form (orders.forms.ReturnRequestForm), as JSON."""

    reason = serializers.ChoiceField(
        choices=[value for value, _label in RETURN_REASONS], help_text="other: say why in `detail`"
    )
    detail = serializers.CharField(required=False, allow_blank=True, max_length=150, default="")

    def validate(self, attrs):
        if attrs["reason"] == "other" and not attrs["detail"].strip():
            raise serializers.ValidationError({"detail": _("Say why you want to send it back.")})
        return attrs


class ReturnParcelInputSerializer(serializers.Serializer):
    """The page's form (orders.forms.ReturnParcelForm), as JSON; the tracking number is checked
    as the shipping desk checks it."""

    carrier = serializers.ChoiceField(choices=Carrier.choices)
    trackingNo = StrictCharField(max_length=60, help_text="letters, digits and dashes; spaces are dropped")

    def validate_trackingNo(self, value: str) -> str:  # noqa: N802 (the field's name)
        try:
            return tracking_no_clean(value)
        except OrderStateError as problem:
            raise serializers.ValidationError(str(problem)) from problem


class ReturnRequestSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=ReturnRequestStatus.choices)
    reason = serializers.CharField()
    answer = serializers.CharField(allow_blank=True, help_text="the merchant's, when declined")
    returnAddress = serializers.CharField(allow_blank=True, help_text="where the parcel goes back, once approved")
    carrier = serializers.CharField(allow_blank=True, help_text="of the parcel sent back")
    carrierName = serializers.CharField(allow_blank=True)
    trackingNo = serializers.CharField(allow_blank=True)
    sentAt = serializers.DateTimeField(allow_null=True)
    refundedAt = serializers.DateTimeField(allow_null=True)


class MessageSerializer(serializers.Serializer):
    """One message of the order's thread with the merchant (orders.contact)."""

    fromMerchant = serializers.BooleanField(help_text="the merchant's answer, else mine")
    text = serializers.CharField(help_text="plain text: show it as text, line ends kept")
    at = serializers.DateTimeField()


class MessageInputSerializer(serializers.Serializer):
    """The page's form (orders.forms.MessageForm), as JSON: the text as the thread keeps it."""

    text = StrictCharField(
        trim_whitespace=False,
        allow_blank=True,  # message_text_clean says what a message needs, in its own words
        help_text=f"plain text, at most {MESSAGE_MAX} characters once trailing spaces and excess blank lines "
        "are dropped; no control characters",
    )

    def validate_text(self, value: str) -> str:
        try:
            return message_text_clean(value)
        except MessageInvalid as invalid:
            raise serializers.ValidationError(str(invalid)) from invalid


class OrderSerializer(serializers.ModelSerializer):
    orderNo = serializers.CharField(source="order_no")
    goodsId = serializers.IntegerField(source="goods_id")
    saleId = serializers.IntegerField(source="sale_id", allow_null=True)
    goodsName = serializers.CharField(source="item_name")
    createdAt = serializers.DateTimeField(source="created_at")
    payDeadline = serializers.DateTimeField(source="pay_deadline")
    paidAt = serializers.DateTimeField(source="paid_at", allow_null=True)
    cancelledAt = serializers.DateTimeField(source="cancelled_at", allow_null=True)
    cancelReason = serializers.CharField(source="cancel_reason", allow_blank=True)
    address = serializers.SerializerMethodField(help_text="where it ships: a copy made at the cashier; null before")
    payment = serializers.SerializerMethodField(help_text="the money side: an open attempt, a refund")
    shipment = serializers.SerializerMethodField(help_text="the parcel once shipped; null before")
    refundRequest = serializers.SerializerMethodField(help_text="my latest refund request; null if none")
    returnRequest = serializers.SerializerMethodField(help_text="my latest return request; null if none")
    messages = serializers.SerializerMethodField(help_text="my thread with the merchant, oldest first")

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
            "payment",
            "shipment",
            "refundRequest",
            "returnRequest",
            "messages",
        )
        read_only_fields = fields

    @extend_schema_field(ShipmentSerializer(allow_null=True))
    def get_shipment(self, order: Order) -> dict | None:
        return order_shipment_data(order)

    @extend_schema_field(RefundRequestSerializer(allow_null=True))
    def get_refundRequest(self, order: Order) -> dict | None:  # noqa: N802 (the field's name)
        return order_refund_request_data(order)

    @extend_schema_field(ReturnRequestSerializer(allow_null=True))
    def get_returnRequest(self, order: Order) -> dict | None:  # noqa: N802 (the field's name)
        return order_return_request_data(order)

    @extend_schema_field(MessageSerializer(many=True))
    def get_messages(self, order: Order) -> list[dict]:
        return order_messages_data(order)

    @extend_schema_field(PaymentStateSerializer())
    def get_payment(self, order: Order) -> dict:
        return order_payment_data(order)

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
