"""Shapes of the seckill API for the OpenAPI schema only: the gate's endpoints parse their
few inputs by hand and answer plain dicts, so no serializer runs on the hot path."""

from rest_framework import serializers

from seckill.captcha import ANSWER_MAX, ANSWER_MIN


class PathInputSerializer(serializers.Serializer):
    verifyCode = serializers.IntegerField(
        min_value=ANSWER_MIN, max_value=ANSWER_MAX, help_text="the captcha's answer (single use: any try consumes it)"
    )


class PathSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="one-time path for POST .../buy/{path}; valid 60 s, single use")


class QueuedSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["queued"])
    requestId = serializers.CharField()


class BuyEnvelopeSerializer(serializers.Serializer):
    code = serializers.IntegerField(
        help_text="0 queued; 500500 sold out, 500501 already bought, 500502 not started, 500510 ended, "
        "500507 entered in the sale's draw (data.drawAt: epoch seconds of the draw), 500508 the draw is being made, "
        "500509 entries to the draw have closed and no units are left (sold out after a draw)"
    )
    msg = serializers.CharField()
    data = QueuedSerializer(  # type: ignore[assignment]  # the envelope's field, documented only
        allow_null=True, help_text="null unless queued (or entered: status, drawAt)"
    )


class ResultSerializer(serializers.Serializer):
    orderId = serializers.IntegerField(
        help_text="the order id once written; 0 while queued; -1 failed; -2 entered in the draw; -3 not drawn"
    )
    state = serializers.ChoiceField(choices=["ordered", "queued", "failed", "entered", "not drawn"])
