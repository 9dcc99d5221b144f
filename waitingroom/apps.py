from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WaitingRoomConfig(AppConfig):
    name = "waitingroom"
    verbose_name = _("Waiting rooms")
    default_auto_field = "django.db.models.BigAutoField"
