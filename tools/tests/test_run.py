"""`make run`'s environment for its children (tools/run.py)."""

from tools import run


def test_the_texts_links_follow_the_demos_port(monkeypatch):
    monkeypatch.delenv("SHOP_PUBLIC_URL", raising=False)
    monkeypatch.delenv("PAYMENT_PUBLIC_URL", raising=False)
    assert run.demo_env(dev=False, port=8123)["SHOP_PUBLIC_URL"] == "http://127.0.0.1:8123"


def test_an_address_set_for_the_shop_wins_over_the_port(monkeypatch):
    monkeypatch.setenv("SHOP_PUBLIC_URL", "https://shop.example")
    assert "SHOP_PUBLIC_URL" not in run.demo_env(dev=False, port=8123)
    monkeypatch.delenv("SHOP_PUBLIC_URL")
    monkeypatch.setenv("PAYMENT_PUBLIC_URL", "https://pay.example")  # which SHOP_PUBLIC_URL defaults to
    assert "SHOP_PUBLIC_URL" not in run.demo_env(dev=False, port=8123)
