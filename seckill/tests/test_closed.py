"""sales.sale_state.refusal_known is the one closed-sale rule: each layer that refuses a buy as
sold out, not started or ended before reserve.lua refuses by what it answers and by nothing
else. Here it calls an open sale ENDED, and every layer says so."""

import pytest

from sales import sale_state
from sales.codes import SaleCode
from seckill.services import gate
from testutils.factories.sales import make_sale
from testutils.wsgi import answered_below_django, call, environ

pytestmark = pytest.mark.django_db

LAYERS = ["seckill.fastpath.refusal", "seckill.middleware", "seckill.services.gate"]


def _ended(monkeypatch, module: str) -> list[tuple[int, bool]]:
    asked: list[tuple[int, bool]] = []

    def refusal_known(sale_id: int, *, ask: bool) -> sale_state.Refusal:
        asked.append((sale_id, ask))
        return sale_state.Refusal.ENDED

    monkeypatch.setattr(f"{module}.refusal_known", refusal_known)
    return asked


def test_the_fast_path_refuses_by_the_rule(apps, monkeypatch):
    _django, fast = apps
    sale = make_sale(stock=5)
    asked = _ended(monkeypatch, LAYERS[0])
    with answered_below_django(fast, expected=True):
        _status, _headers, body = call(fast, environ("POST", f"/api/v1/sales/{sale.pk}/buy/p"))
    assert asked == [(sale.pk, False)] and b'"code": 500510' in body


def test_the_middleware_refuses_by_the_rule(client, monkeypatch):
    sale = make_sale(stock=5)
    asked = _ended(monkeypatch, LAYERS[1])
    response = client.post("/seckill/p/doSeckill", {"goodsId": sale.pk})
    assert asked == [(sale.pk, True)] and response.json()["code"] == SaleCode.ENDED.code


def test_the_gate_refuses_by_the_rule(monkeypatch):
    sale = make_sale(stock=5)
    asked = _ended(monkeypatch, LAYERS[2])
    assert gate.seckill_attempt(user_id=1, sale_id=sale.pk, path="p").code is SaleCode.ENDED
    assert asked == [(sale.pk, True)]
