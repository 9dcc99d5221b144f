import os
from collections.abc import Callable

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.production")
application: Callable = get_wsgi_application()

# After Django's setup: these read the settings.
from django.conf import settings  # noqa: E402
from django.utils.module_loading import import_string  # noqa: E402

# WSGI_MIDDLEWARE wraps Django's handler as MIDDLEWARE wraps a view: the first is outermost.
for wrapper in reversed(settings.WSGI_MIDDLEWARE):
    application = import_string(wrapper)(application)

# Each web process sets up its publisher now, beside its first requests, rather than in its
# first buy while that shopper waits; a thread, so that a broker out of reach delays nothing.
import threading  # noqa: E402

from seckill_site.publish import publisher_warm  # noqa: E402

threading.Thread(target=publisher_warm, name="publisher-warm", daemon=True).start()
