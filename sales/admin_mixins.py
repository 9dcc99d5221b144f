"""What the sale's admins share beyond the merchant's scope (users.merchants.MerchantScopedAdmin)."""

from typing import Any

from django.http import HttpRequest


class ReadOnlyAdminMixin:
    """Rows listed and viewed but never added, changed or deleted by hand, because another
    part of the shop writes them (the stock log by the stock services, a draw by the draw).
    Put it before the ModelAdmin base, so that its answers are the ones asked."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
