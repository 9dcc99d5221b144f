from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SalesConfig(AppConfig):
    name = "sales"
    verbose_name = _("Sales")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from sales import receivers  # noqa: F401  (connects the catalogue's signals)
