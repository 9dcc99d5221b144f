import os
from collections.abc import Callable

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.production")
application: Callable = get_wsgi_application()

# After Django's setup: these read the settings.
from django.conf import settings  # noqa: E402
from django.utils.module_loading import import_string  # noqa: E402

from seckill_site.fastpath import FastPath  # noqa: E402

# Below Django's handler: the answers that sell nothing (seckill_site/fastpath.py;
# SECKILL_FASTPATH=0 turns it off), then a deployment's own outermost wrapper named by
# WSGI_OUTER (the bench's fixed answer, bench/bare.py).
if settings.SECKILL_FASTPATH:
    application = FastPath(application)
if settings.WSGI_OUTER:
    application = import_string(settings.WSGI_OUTER)(application)
