"""The shopper's thread with the merchant, under /orders/ in the app's namespace (orders/urls.py)."""

from django.urls import path

from orders.contact import views

urlpatterns = [
    path("<str:order_no>/messages", views.order_message, name="message"),
]
