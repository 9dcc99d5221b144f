"""The providers' notification endpoints, under /payments/ (seckill_site/urls.py)."""

from django.urls import path

from orders.payments import webhooks

app_name = "payments"
urlpatterns = [
    # Each provider's own address (Provider.notify_endpoint); webhooks.notice_post answers a
    # 404 for any other.
    path("<slug:provider_name>/<slug:endpoint>", webhooks.notice_post, name="notify"),
]
