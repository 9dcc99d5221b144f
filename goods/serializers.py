"""Goods in the API: the merchant's own catalogue. Field names are camelCase, as in seed 000's
JSON and the pages."""

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from goods.models import Goods


class MoneyField(serializers.DecimalField):
    """Amounts travel as strings ("9.90"), as documented: a JSON number would pass through
    a binary float on many clients."""

    default_error_messages = {"not_a_string": _('Send the amount as a string, e.g. "9.90".')}

    def __init__(self, **kwargs):
        kwargs.setdefault("max_digits", 10)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("min_value", 0)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class GoodsSerializer(serializers.ModelSerializer):
    price = MoneyField()
    ownerId = serializers.IntegerField(source="owner_id", read_only=True)
    image = serializers.SerializerMethodField(help_text="URL of the image (uploaded in the admin)")
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = Goods
        fields = ("id", "name", "title", "detail", "price", "stock", "image", "ownerId", "createdAt")

    def get_image(self, goods: Goods) -> str | None:
        return goods.image.url if goods.image else None
