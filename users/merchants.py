"""Merchants: staff in the Merchants group, who see and change only their own goods, sales and
orders, in the admin and the API alike. One definition, used by every app's admin and API."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from users.models import MERCHANTS_GROUP


def is_merchant(request: HttpRequest) -> bool:
    """Staff in the Merchants group; memoised on the request (the admin asks many times per page)."""
    if not hasattr(request, "_is_merchant"):
        user = request.user
        request._is_merchant = bool(  # type: ignore[attr-defined]  # memo for this request
            user.is_active and user.is_staff and user.groups.filter(name=MERCHANTS_GROUP).exists()
        )
    return request._is_merchant  # type: ignore[attr-defined]


def visible_to_merchant(queryset: QuerySet, *, user, owner_path: str = "owner") -> QuerySet:
    """The rows a merchant works with, in the admin and the API alike: every row for a
    superuser, else the rows whose `owner_path` is the merchant. The caller has checked that
    the user is a merchant or a superuser."""
    return queryset if user.is_superuser else queryset.filter(**{owner_path: user})


class MerchantScopedAdmin(admin.ModelAdmin):
    """Superusers see everything; merchants only rows whose `owner_path` is themselves.

    Permissions come from ownership rather than Django's per-model permission rows, so a new
    merchant needs nothing but the group, and direct URLs to another merchant's objects 404.
    """

    owner_path = "owner"
    merchant_can_add = True
    merchant_can_delete = True

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if not (request.user.is_superuser or is_merchant(request)):
            return queryset.none()
        return visible_to_merchant(queryset, user=request.user, owner_path=self.owner_path)

    def _owns(self, request, obj) -> bool:
        if obj is None:
            return True
        owner_id = obj
        for part in self.owner_path.split("__"):
            owner_id = getattr(owner_id, part)
        return owner_id == request.user

    def has_module_permission(self, request):
        return request.user.is_superuser or is_merchant(request)

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser or (is_merchant(request) and self._owns(request, obj))

    def has_change_permission(self, request, obj=None):
        return self.has_view_permission(request, obj)

    def has_add_permission(self, request):
        return request.user.is_superuser or (self.merchant_can_add and is_merchant(request))

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser or (
            self.merchant_can_delete and is_merchant(request) and self._owns(request, obj)
        )
