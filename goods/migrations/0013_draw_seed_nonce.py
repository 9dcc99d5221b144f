"""A draw's seed is no longer stored before the draw: a nonce is, and the seed is derived from it
under a key the database never holds (goods.draw_seed).

Draws not yet made had their seed in a column a query could reach: they get a new nonce and a
new published hash, since the old seed cannot be trusted to have stayed secret. Draws already
made keep their seed, which is public.
"""

import hashlib
import secrets

from django.conf import settings
from django.db import migrations, models
from django.utils.crypto import salted_hmac


def _commit() -> tuple[str, str]:
    # goods.draw_seed's derivation as of this migration, copied so that it stays what it was.
    nonce = secrets.token_hex(32)
    key = settings.DRAW_SEED_KEY or settings.SECRET_KEY
    seed = salted_hmac("seckill.draw.seed", nonce, secret=key, algorithm="sha256").hexdigest()
    return nonce, hashlib.sha256(seed.encode()).hexdigest()


def undrawn_reseed(apps, schema_editor):
    SaleDraw = apps.get_model("goods", "SaleDraw")
    for draw in SaleDraw.objects.filter(drawn_at__isnull=True):
        draw.seed_nonce, draw.seed_sha256 = _commit()
        draw.seed = ""
        draw.save(update_fields=["seed_nonce", "seed_sha256", "seed"])


class Migration(migrations.Migration):
    dependencies = [
        ("goods", "0012_sale_entries_open_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="saledraw",
            name="seed_nonce",
            field=models.CharField(default="", max_length=64, verbose_name="seed nonce"),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="saledraw",
            name="seed",
            field=models.CharField(blank=True, default="", max_length=64, verbose_name="seed"),
        ),
        migrations.RunPython(undrawn_reseed, migrations.RunPython.noop),
    ]
