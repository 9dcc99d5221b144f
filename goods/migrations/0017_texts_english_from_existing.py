"""Goods written before their texts had a column per language: what they hold is the English
text (LANGUAGE_CODE), the Chinese pages fall back to it until the merchant writes theirs."""

from django.db import migrations
from django.db.models import F


def english_from_existing(apps, schema_editor):
    Goods = apps.get_model("goods", "Goods")
    Goods.objects.filter(name_en__isnull=True).update(name_en=F("name"), title_en=F("title"), detail_en=F("detail"))


class Migration(migrations.Migration):
    dependencies = [("goods", "0016_texts_in_each_language")]

    operations = [migrations.RunPython(english_from_existing, migrations.RunPython.noop)]
