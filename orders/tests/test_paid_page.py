"""A card payment keeps the card's last four digits, for the shopper's receipt."""

import pytest

from orders.payments.services import payment_card_confirm, payment_start
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_address, make_user
from testutils.providers import stripe_card_token

pytestmark = pytest.mark.django_db


def test_a_card_payment_keeps_the_cards_last_four_digits():
    shopper = make_user()
    order = buy(sale=make_sale(), user=shopper)
    payment, _checkout = payment_start(
        order=order, provider_name="stripe", address=make_address(shopper), return_url="", notify_url=""
    )
    payment, _secret = payment_card_confirm(payment=payment, token=stripe_card_token("4242424242424242"))
    assert payment.card_last4 == "4242"
