import pytest

from users.tests.factories import make_user


@pytest.fixture
def shopper(client):
    """Django's test client, logged in as a new shopper (`shopper.user`)."""
    user = make_user()
    client.force_login(user)
    client.user = user
    return client
