"""The users app's data under /user/ (seckill_site/urls.py mounts it outside the language
prefixes): JSON and a code's sending for the pages' scripts, one address in every language."""

from django.urls import path

from users import views
from users.addresses import views as address_views
from users.verification import views as verification_views

app_name = "user-data"
urlpatterns = [
    path("me", views.me, name="me"),
    path("sms/send", verification_views.sms_send, name="sms-send"),
    path("divisions", address_views.divisions_data, name="divisions"),
]
