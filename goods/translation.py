"""The goods' texts a merchant writes in each language (modeltranslation finds this module):
`name_en` and `name_zh_hans` beside `name`, and so on. `goods.name` reads the active language's,
else the other's (settings.MODELTRANSLATION_FALLBACK_LANGUAGES); Goods.clean wants a name and a
title in one language at least."""

from modeltranslation.translator import TranslationOptions, register

from goods.models import Goods

TRANSLATED = ("name", "title", "detail")


@register(Goods)
class GoodsTranslation(TranslationOptions):
    fields = TRANSLATED
    required_languages = ()  # any one will do: Goods.clean
