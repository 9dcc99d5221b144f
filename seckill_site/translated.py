"""A merchant's text in each of the shop's languages (settings.LANGUAGES), as modeltranslation
keeps it (`name_en`, `name_zh_hans` beside `name`): read in the visitor's language, else in the
next one settings.MODELTRANSLATION_FALLBACK_LANGUAGES names that has a text, so a text written
in one language only is shown in every one."""

from collections.abc import Mapping

from django.conf import settings
from django.utils.translation import get_language_info
from django.utils.translation import gettext as _
from modeltranslation.utils import build_localized_fieldname, get_language, resolution_order

Texts = Mapping[str, str]
"""Language code -> the text in it; "" where the merchant wrote none."""


def languages() -> list[str]:
    """The shop's language codes, LANGUAGE_CODE's first."""
    return [code for code, _name in settings.LANGUAGES]


def field_in(field: str, language: str) -> str:
    """The name of `field`'s column in `language`: ("name", "zh-hans") -> "name_zh_hans"."""
    return build_localized_fieldname(field, language)


def texts_of(instance: object, field: str) -> dict[str, str]:
    """`field` of a translated model's `instance` in each language, "" where none was written."""
    return {code: getattr(instance, field_in(field, code)) or "" for code in languages()}


def text_in(texts: Texts, language: str | None = None) -> str:
    """The text in `language` (the active one when None), else in its fallbacks; "" when none."""
    for code in resolution_order(language or get_language()):
        if texts.get(code):
            return texts[code]
    return ""


def label_in(verbose_name: str, language: str) -> str:
    """A translated field's label in the active language: "name (English)", "名称（英语）"."""
    return _("%(field)s (%(language)s)") % {
        "field": verbose_name,
        "language": get_language_info(language)["name_translated"],
    }
