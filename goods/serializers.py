"""Goods in the API: the merchant's own catalogue. Field names are camelCase, as in seed 000's
JSON and the pages.

The texts travel in each language (`nameEn`, `nameZhHans` ...) and as `name`, `title`,
`detail`: read, the request's language, else the other; written, the request's language's."""

from django.db.models import Field
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from goods.models import Goods
from seckill_site.translated import field_in


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


def _in_language(field: str, language: str) -> serializers.CharField:
    """A text in one language, writable; none is required (Goods.clean wants one of each)."""
    model_field = Goods._meta.get_field(field_in(field, language))
    assert isinstance(model_field, Field)
    return serializers.CharField(
        source=field_in(field, language),
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=model_field.max_length,
        validators=model_field.validators,
    )


class GoodsSerializer(serializers.ModelSerializer):
    price = MoneyField()
    nameEn = _in_language("name", "en")
    nameZhHans = _in_language("name", "zh-hans")
    titleEn = _in_language("title", "en")
    titleZhHans = _in_language("title", "zh-hans")
    detailEn = _in_language("detail", "en")
    detailZhHans = _in_language("detail", "zh-hans")
    ownerId = serializers.IntegerField(source="owner_id", read_only=True)
    image = serializers.SerializerMethodField(help_text="URL of the image (uploaded in the admin)")
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = Goods
        fields = (
            "id",
            "name",
            "title",
            "detail",
            "nameEn",
            "nameZhHans",
            "titleEn",
            "titleZhHans",
            "detailEn",
            "detailZhHans",
            "price",
            "stock",
            "image",
            "ownerId",
            "createdAt",
        )
        extra_kwargs = {"name": {"required": False}, "title": {"required": False}}

    def get_image(self, goods: Goods) -> str | None:
        return goods.image.url if goods.image else None
