"""A worker knows every task by the name beat and the shop send it under.

A worker registers what Celery's autodiscovery imports (each app's tasks.py); a task that lives
deeper, in a feature's package, is registered only if its app's tasks.py imports it. A fresh
interpreter is the worker's view: this test process may have imported the modules already.
"""

import json
import os
import subprocess
import sys

from django.conf import settings

WORKER_VIEW = """
import json, django
django.setup()
from celery_app import app
app.loader.import_default_modules()
print(json.dumps(sorted(app.tasks)))
"""

# Sent by name (seckill_site.publish), not on beat's schedule.
PUBLISHED = {
    "orders.refund_send",
    "seckill.order_flush",
    "seckill.sale_draw",
    "seckill.draw_winners_notify",
    "seckill.draw_offers_notify",
    "seckill.sale_rebuild",
}


def test_worker_registers_every_task_beat_and_the_shop_send():
    out = subprocess.run(
        [sys.executable, "-c", WORKER_VIEW],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "seckill_site.settings.test"},
    )
    registered = set(json.loads(out.stdout.strip().splitlines()[-1]))
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert scheduled | PUBLISHED <= registered, sorted((scheduled | PUBLISHED) - registered)
