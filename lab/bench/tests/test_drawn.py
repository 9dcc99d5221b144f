"""The drawn sale the replayed opening's waiting-list polls ask about (lab.bench.drawn), on real
PostgreSQL and Redis: its draw is made and applied, its winners' orders are written, its list
holds the entrants not drawn, and the poll the bench replays is answered as a listed shopper's
page is answered, the waiting-list JSON with their place, below Django after the first."""

import json
from types import SimpleNamespace

import pytest
from django.conf import settings

from lab.bench.drawn import DrawnSale, drawn_sale_create, entered
from lab.bench.scenarios import Scenarios
from lab.shopper import Shopper, session_create
from orders.models import SeckillOrder
from sales.models import Admission, Sale, SaleDraw
from testutils.factories.sales import make_sale
from testutils.factories.users import make_users
from testutils.wsgi import call, environ, fast_path_over_django
from tools import opening_mix

pytestmark = pytest.mark.django_db


@pytest.fixture
def fast():
    """The fast path over Django's application (testutils.wsgi.fast_path_over_django)."""
    with fast_path_over_django() as (_django, app):
        yield app


@pytest.fixture
def entrants() -> list[Shopper]:
    return [Shopper(user.pk, session_create(user)) for user in make_users(4)]


class Replayed(Scenarios):
    """The bench's builders with the drawn sale and a first-come one (the opening's) handed in;
    the other requests are not asked here."""

    def __init__(self, shoppers: list[Shopper], drawn: DrawnSale) -> None:
        self.shoppers, self.drawn_sale = shoppers, drawn
        self.deployment = SimpleNamespace(secret_key=settings.SECRET_KEY)
        self.first_come = make_sale(stock=1).pk

    def _not_started_sale(self) -> int:
        return self.first_come

    def _opening_sale(self) -> int:
        return self.first_come

    def _result_polls(self, sale_id: int, shoppers: list[Shopper]) -> list:
        return []

    def _page_files(self, sale_id: int) -> dict[str, list[str]]:
        return {}


def test_the_drawn_sale_is_drawn_written_and_lists_the_entrants_not_drawn(entrants, flushes):
    drawn = drawn_sale_create(entrants, entry_seconds=1.0)
    sale = Sale.objects.get(pk=drawn.sale_id)
    draw = SaleDraw.objects.get(sale=sale)
    assert sale.admission == Admission.DRAW and draw.units == 2
    assert entered(drawn) and draw.applied_at is not None and drawn.winners == 2
    assert sorted(draw.entrant_ids) == sorted(s.user_id for s in entrants)
    assert set(SeckillOrder.objects.filter(sale=sale).values_list("user_id", flat=True)) == set(draw.winner_ids)
    assert {s.user_id for s in drawn.listed} == set(draw.entrant_ids) - set(draw.winner_ids)


def test_the_replayed_waiting_list_poll_gets_a_listed_shoppers_place(entrants, flushes, fast):
    drawn = drawn_sale_create(entrants, entry_seconds=1.0)
    builders = Replayed(entrants, drawn)._opening_builders(opening_mix.load())
    for number, shopper in enumerate(drawn.listed):
        poll = builders["GET seckill:waiting_list"]("after", number)
        cookie = f"{settings.SESSION_COOKIE_NAME}={poll.session}; csrftoken={poll.csrf}; {poll.cookies}"
        env = environ(poll.method, poll.path, HTTP_COOKIE=cookie, HTTP_ACCEPT="application/json")
        answers = [call(fast, env) for _ in range(2)]  # the first Django's, its headers learnt
        before = fast.app.calls
        answers.append(call(fast, env))
        for status, _headers, body in answers:
            assert status == "200 OK", body
            data = json.loads(body)["data"]
            assert (data["sale"], data["state"], data["position"]) == (drawn.sale_id, "waiting", number + 1)
        assert fast.app.calls == before, "the page's later polls are answered below Django"
        assert poll.session == shopper.session
