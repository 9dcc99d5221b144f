"""The waiting page, under each language's URL (seckill_site/urls.py mounts it)."""

from django.urls import path

from waitingroom import views

app_name = "waitingroom"
urlpatterns = [path("<str:sale_id>", views.waiting_page, name="page")]
