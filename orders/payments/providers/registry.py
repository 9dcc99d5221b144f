"""The payment providers this shop is set up with: settings.PAYMENT_PROVIDERS maps each name to
the dotted path of its Provider subclass, as Django's own backends are named. Loaded once and
kept (forgotten when a test overrides the setting); a bad entry is an ImproperlyConfigured that
says which. The rest of the shop asks here, never names a provider itself."""

import re
from functools import cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.functional import Promise
from django.utils.module_loading import import_string

from orders.payments.providers.base import Provider

# Stored in Payment.provider (16 characters) and in the notification's path.
_NAME = re.compile(r"[a-z][a-z0-9_]{0,15}")


class NoSuchProvider(KeyError):
    """No provider is registered under this name (any more)."""


@cache
def _registered() -> dict[str, Provider]:
    loaded: dict[str, Provider] = {}
    for name, path in settings.PAYMENT_PROVIDERS.items():
        where = f"PAYMENT_PROVIDERS[{name!r}]"
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ImproperlyConfigured(f"{where}: a name is 1-16 lowercase letters, digits or _, a letter first")
        try:
            found = import_string(path)
        except ImportError as error:
            raise ImproperlyConfigured(f"{where}: cannot import {path!r}: {error}") from error
        if not (isinstance(found, type) and issubclass(found, Provider)):
            raise ImproperlyConfigured(f"{where}: {path!r} is not a subclass of {Provider.__module__}.Provider")
        loaded[name] = found(name)
    return loaded


@receiver(setting_changed)
def _forget(*, setting: str, **kwargs) -> None:
    if setting == "PAYMENT_PROVIDERS":
        _registered.cache_clear()


def provider(name: str) -> Provider:
    """The provider registered as `name`, on or off; NoSuchProvider when there is none."""
    try:
        return _registered()[name]
    except KeyError:
        raise NoSuchProvider(name) from None


def providers_registered() -> list[Provider]:
    """Every registered provider, on or off, in the setting's order."""
    return list(_registered().values())


def providers_on() -> list[Provider]:
    """The providers whose credentials are set, in the order the cashier offers them."""
    return [chosen for chosen in _registered().values() if chosen.configured()]


def providers_enabled() -> list[str]:
    """The names of providers_on."""
    return [chosen.name for chosen in providers_on()]


def provider_default() -> str:
    """The provider a shopper who chose none pays with: the first one on; "" when none is."""
    return next(iter(providers_enabled()), "")


def card_providers() -> list[str]:
    """The names of the registered providers that take cards (card_confirm)."""
    return [chosen.name for chosen in _registered().values() if chosen.takes_cards]


def provider_choices() -> list[tuple[str, str | Promise]]:
    """(name, label) of every registered provider: the admin's filters, the API's enum."""
    return [(chosen.name, chosen.label) for chosen in _registered().values()]


def provider_label(name: str) -> str | Promise:
    """`name`'s label; the bare name of one no longer registered (its old payments stay)."""
    found = _registered().get(name)
    return found.label if found is not None else name
