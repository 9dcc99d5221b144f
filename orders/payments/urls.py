"""The providers' notification endpoints, under /payments/ (seckill_site/urls.py)."""

from django.urls import path

from orders.payments import webhooks

app_name = "payments"
urlpatterns = [
    path("alipay/notify", webhooks.alipay_notify, name="alipay-notify"),
    path("stripe/webhook", webhooks.stripe_webhook, name="stripe-notify"),
]
