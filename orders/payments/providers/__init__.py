"""The payment providers the shop can take money through, each behind the same calls
(providers.base.Provider), registered by name in settings.PAYMENT_PROVIDERS (providers.registry).
A provider is on when its credentials are set."""

from orders.payments.providers.base import (
    CardDeclined,
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
from orders.payments.providers.registry import (
    NoSuchProvider,
    card_providers,
    provider,
    provider_choices,
    provider_default,
    provider_label,
    providers_enabled,
    providers_on,
    providers_registered,
)

__all__ = [
    "CardDeclined",
    "Checkout",
    "GatewayDown",
    "Movement",
    "NoSuchProvider",
    "Notice",
    "NoticeRefused",
    "Provider",
    "ProviderRefused",
    "Trade",
    "TradeState",
    "card_providers",
    "provider",
    "provider_choices",
    "provider_default",
    "provider_label",
    "providers_enabled",
    "providers_on",
    "providers_registered",
]
