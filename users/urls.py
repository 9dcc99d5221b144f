from django.urls import path

from users import address_views, notice_views, views
from users.verification import views as verification_views

app_name = "users"
urlpatterns = [
    path("index", views.login_page, name="index"),
    path("login", views.login_submit, name="login"),
    path("logout", views.logout_view, name="logout"),
    path("register", views.register, name="register"),
    path("me", views.me, name="me"),
    path("sms/send", verification_views.sms_send, name="sms-send"),
    path("login/code", verification_views.login_by_code, name="login-code"),
    path("divisions", address_views.divisions_data, name="divisions"),
    path("addresses", address_views.address_book, name="addresses"),
    path("addresses/<str:address_id>", address_views.address_edit, name="address-edit"),
    path("addresses/<str:address_id>/delete", address_views.address_delete, name="address-delete"),
    path("addresses/<str:address_id>/default", address_views.address_default, name="address-default"),
    path("notifications", notice_views.notice_settings, name="notifications"),
]
