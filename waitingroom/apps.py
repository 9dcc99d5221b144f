"""The waiting room in front of a sale: arrivals queued (shuffled before the opening, first come
after it), admitted at a pace the shop's health allows, each admitted shopper holding a signed,
short-lived pass that the buy path checks below Django (docs/waiting-room.md)."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WaitingRoomConfig(AppConfig):
    name = "waitingroom"
    # Named for what the section holds (rooms, the shop-wide switches, their log), apart from
    # its WaitingRoom model, so the admin's breadcrumb does not read the same name twice.
    verbose_name = _("Sale openings")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from waitingroom import figures, receivers  # noqa: F401  (connects the sales' signals)

        # The merchant's live view of a sale (orders) shows its room's figures: orders cannot import them.
        figures.live_cards_register()
