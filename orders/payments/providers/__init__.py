"""The payment providers the shop can take money through, each behind the same calls
(providers.base.Provider). A provider is on when its credentials are set."""

from django.conf import settings

from orders.models import Provider as ProviderName
from orders.payments.providers.alipay import AlipayProvider
from orders.payments.providers.base import (
    Checkout,
    GatewayDown,
    Movement,
    Notice,
    NoticeRefused,
    Provider,
    ProviderRefused,
    Trade,
    TradeState,
)
from orders.payments.providers.stripe import StripeProvider

_PROVIDERS: dict[str, Provider] = {ProviderName.ALIPAY: AlipayProvider(), ProviderName.STRIPE: StripeProvider()}


def provider(name: str) -> Provider:
    return _PROVIDERS[name]


def providers_enabled() -> list[str]:
    """The providers whose credentials are set, in the order the cashier offers them."""
    enabled = []
    if settings.ALIPAY_APP_ID and settings.ALIPAY_APP_PRIVATE_KEY and settings.ALIPAY_PUBLIC_KEY:
        enabled.append(ProviderName.ALIPAY.value)
    if settings.STRIPE_SECRET_KEY and settings.STRIPE_PUBLISHABLE_KEY:
        enabled.append(ProviderName.STRIPE.value)
    return enabled


__all__ = [
    "Checkout",
    "GatewayDown",
    "Movement",
    "Notice",
    "NoticeRefused",
    "Provider",
    "ProviderRefused",
    "Trade",
    "TradeState",
    "provider",
    "providers_enabled",
]
