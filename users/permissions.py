"""Who may call an API endpoint: a logged-in shopper, or a merchant. (The gate's endpoints use
seckill_site.api.HasUserId, which needs no user row.)"""

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from seckill_site.api import Credentials
from users.merchants import is_merchant


class IsShopper(BasePermission):
    """Logged in as an active user (loads the row: for endpoints that read the database anyway).

    Credentials whose user is gone or deactivated are not logged in: 401, never a 403 (and
    never a view handed an anonymous user)."""

    def has_permission(self, request: Request, view) -> bool:
        if not (isinstance(request.auth, Credentials) and request.user.is_authenticated):
            raise exceptions.NotAuthenticated()
        return True


class IsMerchant(BasePermission):
    """Merchants (users.merchants.is_merchant: staff in the Merchants group) and superusers, as in the admin."""

    message = _("merchants only")

    def has_permission(self, request: Request, view) -> bool:
        if not (isinstance(request.auth, Credentials) and request.user.is_authenticated):
            raise exceptions.NotAuthenticated()
        return request.user.is_superuser or is_merchant(request)
