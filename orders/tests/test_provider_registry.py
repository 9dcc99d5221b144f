"""The provider registry (orders.payments.providers.registry): settings.PAYMENT_PROVIDERS, loaded
once, and a bad entry named in the error."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from orders.payments.providers import (
    NoSuchProvider,
    card_providers,
    provider,
    provider_choices,
    provider_default,
    provider_label,
    providers_enabled,
    providers_registered,
)
from orders.payments.providers.alipay import AlipayProvider
from orders.payments.providers.stripe import StripeProvider
from testutils.providers import DUMMY_PATH

ALIPAY = "orders.payments.providers.alipay.AlipayProvider"
STRIPE = "orders.payments.providers.stripe.StripeProvider"


def test_the_settings_name_the_providers_in_their_order():
    with override_settings(PAYMENT_PROVIDERS={"stripe": STRIPE, "alipay": ALIPAY}):
        assert [type(chosen) for chosen in providers_registered()] == [StripeProvider, AlipayProvider]
        assert [name for name, _label in provider_choices()] == ["stripe", "alipay"]
        assert provider("alipay").name == "alipay"
        assert provider("alipay") is provider("alipay")  # loaded once
        assert card_providers() == ["stripe"]
        with pytest.raises(NoSuchProvider):
            provider("paypal")
        assert provider_label("paypal") == "paypal"  # an old payment's provider, gone since


def test_a_provider_is_on_only_with_its_credentials():
    with override_settings(PAYMENT_PROVIDERS={"alipay": ALIPAY, "stripe": STRIPE}, STRIPE_SECRET_KEY=""):
        assert "stripe" not in providers_enabled()
    with override_settings(PAYMENT_PROVIDERS={"stripe": STRIPE}, STRIPE_SECRET_KEY=""):
        assert (providers_enabled(), provider_default()) == ([], "")


def test_a_name_may_register_any_provider_class():
    with override_settings(PAYMENT_PROVIDERS={"test_pay": DUMMY_PATH}):
        assert providers_enabled() == ["test_pay"] and provider("test_pay").name == "test_pay"


@pytest.mark.parametrize(
    ("providers", "says"),
    [
        ({"alipay": "orders.payments.providers.nowhere.Provider"}, "cannot import"),
        ({"alipay": "orders.payments.providers.alipay.NoSuchClass"}, "cannot import"),
        ({"alipay": "orders.payments.providers.alipay.client"}, "is not a subclass"),
        ({"Alipay!": ALIPAY}, "a name is"),
        ({"a_name_far_too_long": ALIPAY}, "a name is"),
    ],
)
def test_a_bad_entry_is_improperly_configured_and_named(providers, says):
    with override_settings(PAYMENT_PROVIDERS=providers):
        with pytest.raises(ImproperlyConfigured, match=says) as refusal:
            providers_enabled()
    assert f"PAYMENT_PROVIDERS[{next(iter(providers))!r}]" in str(refusal.value)
    providers_enabled()  # the good setting is back, and loads again
