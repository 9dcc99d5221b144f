"""The users app's pages under /user/, in each language (seckill_site/urls.py mounts them under
the language prefixes); its data for scripts is users/data_urls.py."""

from django.urls import include, path

from users import views
from users.verification import views as verification_views

app_name = "users"
urlpatterns = [
    path("index", views.login_page, name="index"),
    path("login", views.login_submit, name="login"),
    path("logout", views.logout_view, name="logout"),
    path("register", views.register, name="register"),
    path("login/code", verification_views.login_by_code, name="login-code"),
    path("", include("users.addresses.urls")),
    path("notifications", views.notice_settings, name="notifications"),
]
