"""This app's endpoints of the REST API, under /api/v1/ (seckill_site/api_urls.py includes them)."""

from django.urls import include, path

from users import apis as users
from users.verification import apis as verification

urlpatterns = [
    path("users/register", users.RegisterApi.as_view(), name="register"),
    path("users/login", users.LoginApi.as_view(), name="login"),
    path("users/logout", users.LogoutApi.as_view(), name="logout"),
    path("users/logout-everywhere", users.LogoutEverywhereApi.as_view(), name="logout-everywhere"),
    path("users/tokens", users.TokenListApi.as_view(), name="tokens"),
    path("users/me", users.MeApi.as_view(), name="me"),
    path("users/sms/send", verification.SmsSendApi.as_view(), name="sms-send"),
    path("users/login/code", verification.CodeLoginApi.as_view(), name="login-code"),
    path("", include("users.addresses.api_urls")),
]
