import pytest


@pytest.fixture
def queued(monkeypatch):
    """Record the order_write messages instead of publishing them (single-threaded tests
    only): the test decides when, and how often, each message is delivered."""
    from seckill.tasks import order_write

    sent = []
    monkeypatch.setattr(order_write, "apply_async", lambda kwargs, **options: sent.append(kwargs))
    return sent
