from django.apps import AppConfig
from django.contrib.admin.apps import AdminConfig


class SiteConfig(AppConfig):
    """The site itself: no models, only the Celery signal handlers to connect."""

    name = "seckill_site"
    label = "seckill_site"

    def ready(self) -> None:
        from seckill_site import broker, db, logs, metrics  # noqa: F401  here: their handlers connect on import, once Django is set up


class ShopAdminConfig(AdminConfig):
    """django.contrib.admin with users.admin_site.ShopAdminSite as `admin.site`."""

    default_site = "users.admin_site.ShopAdminSite"
