"""Fixtures of the orders tests."""

import pytest

from orders.payments.providers.dummy import gateway

DUMMY_PATH = "orders.payments.providers.dummy.DummyProvider"


@pytest.fixture
def dummy(settings):
    """The dummy provider registered as "dummy" (orders.payments.providers.dummy) and on, its
    records empty: the test plays the provider's side through the gateway this returns."""
    settings.PAYMENT_PROVIDERS = {**settings.PAYMENT_PROVIDERS, "dummy": DUMMY_PATH}
    gateway.reset()
    yield gateway
    gateway.reset()
