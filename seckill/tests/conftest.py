import pytest

from testutils.factories.users import make_user
from testutils.wsgi import fast_path_over_django


@pytest.fixture
def shopper(client):
    """Django's test client, logged in as a new shopper (`shopper.user`)."""
    user = make_user()
    client.force_login(user)
    client.user = user
    return client


@pytest.fixture
def apps():
    """(Django's application, the fast path over it with counts of its own): see
    testutils.wsgi.fast_path_over_django."""
    with fast_path_over_django() as pair:
        yield pair
