"""What the order pages and the API share when a shopper goes to a cashier: the shop's own
addresses as the provider will reach them."""

from typing import TypedDict

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse

from orders.models import Order
from orders.payments.providers import provider


def public_url(request: HttpRequest, path: str) -> str:
    """`path` as the providers reach the shop (settings.PAYMENT_PUBLIC_URL, else this request's host)."""
    base = settings.PAYMENT_PUBLIC_URL.rstrip("/")
    return f"{base}{path}" if base else request.build_absolute_uri(path)


def notify_path(provider_name: str) -> str:
    """Where the provider `provider_name` sends its notifications (webhooks.notice_post)."""
    return reverse("payments:notify", args=[provider_name, provider(provider_name).notify_endpoint])


class ProviderUrls(TypedDict):
    return_url: str
    notify_url: str


def provider_urls(request: HttpRequest, *, order: Order, method: str) -> ProviderUrls:
    """payment_start's return_url (where the cashier sends the shopper back: the waiting page)
    and notify_url (where the provider sends its word)."""
    return {
        "return_url": public_url(request, reverse("orders:paying", args=[order.order_no])),
        "notify_url": public_url(request, notify_path(method)),
    }
