import pytest
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections

from seckill.fastpath import FastPath
from seckill_site.metrics import ThreadCounts
from testutils.factories.users import make_user


@pytest.fixture
def shopper(client):
    """Django's test client, logged in as a new shopper (`shopper.user`)."""
    user = make_user()
    client.force_login(user)
    client.user = user
    return client


class Spy:
    """Django's application, counting the requests that reach it."""

    def __init__(self, app):
        self.app, self.calls = app, 0

    def __call__(self, environ, start_response):
        self.calls += 1
        return self.app(environ, start_response)


@pytest.fixture
def apps():
    """(Django's application, the fast path over it with counts of its own), with the database
    connection kept across requests as the test client keeps it (one test transaction)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        django = WSGIHandler()
        fast = FastPath(Spy(django), counts=ThreadCounts())
        yield django, fast
        fast.counts.fold()  # nothing left for its folder thread to add to a later test's figures
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
