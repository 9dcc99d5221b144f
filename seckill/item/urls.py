"""The item page keeps its address under /goods/ (seckill_site/urls.py mounts this there) while
its view lives in seckill, where the shopper's order state is known."""

from django.urls import path

from seckill.item import views

app_name = "item"
urlpatterns = [path("<str:sale_id>", views.item_page, name="page")]
