"""How an API request says who it is (settings.REST_FRAMEWORK names these classes): a token
from Redis or the browser's Redis session, either way without loading the user row, which
only the endpoints that need it ever read (a lazy user)."""

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import AnonymousUser
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.request import Request

from seckill_site.api import Credentials
from seckill_site.http import positive_int
from users.models import User
from users.tokens import api_token_user_id


def _active_user(user_id: int):
    return User.objects.filter(pk=user_id, is_active=True).first() or AnonymousUser()


class CachedTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`, resolved to a user id from Redis (see api_token_user_id)."""

    def authenticate_credentials(self, key: str):
        if len(key) > 64 or not key.isascii():
            raise exceptions.AuthenticationFailed(_("invalid or revoked token"))
        user_id = api_token_user_id(key)
        if user_id is None:
            raise exceptions.AuthenticationFailed(_("invalid or revoked token"))
        return SimpleLazyObject(lambda: _active_user(user_id)), Credentials(user_id=user_id, token=key)


class SessionIdAuthentication(SessionAuthentication):
    """The browser's Redis session, read like the pages' gate does (seckill.views.session_user_id):
    the user id from the session, the row only if an endpoint asks for `request.user`.
    Unsafe methods need the CSRF token, as in DRF's SessionAuthentication."""

    def authenticate(self, request: Request):
        raw = request._request.session.get(SESSION_KEY)
        user_id = positive_int(raw)
        if user_id is None:
            return None
        self.enforce_csrf(request)
        return request._request.user, Credentials(user_id=user_id)


class CachedTokenScheme(OpenApiAuthenticationExtension):
    target_class = "users.authentication.CachedTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>`, as returned by POST /api/v1/users/login",
        }


class SessionIdScheme(OpenApiAuthenticationExtension):
    target_class = "users.authentication.SessionIdAuthentication"
    name = "cookieAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "cookie", "name": settings.SESSION_COOKIE_NAME}
