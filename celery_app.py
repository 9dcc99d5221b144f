"""The Celery application: settings come from Django's, under the CELERY_ namespace, and the
tasks from each app's tasks.py. The worker's signal handlers live beside what they serve
(seckill_site.db, .broker, .logs, .metrics), connected when Django sets up (SiteConfig.ready).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.local")

app = Celery("seckill")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
