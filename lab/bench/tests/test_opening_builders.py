"""The opening mix the bench replays, built from the recording it ships (lab/data/opening_mix.json):
every recorded kind has a builder, each built request is of the kind it stands for, and asks
about the sale of its phase (the waiting list's: a drawn sale, by the shoppers on its list). A
kind with no builder fails `make bench` only after its minutes of set-up; a builder of the
wrong URL would replay another mix than the pages make."""

from collections import Counter
from types import SimpleNamespace

import pytest
from django.conf import settings

from lab.bench import opening
from lab.bench.drawn import DrawnSale
from lab.bench.load import Request
from lab.bench.scenarios import Scenarios
from lab.shopper import Shopper
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user
from tools import opening_mix
from waitingroom.wait_ticket import wait_cookie, wait_read

EARLY, GONE, DRAWN = 9001, 9002, 9003  # the not-started sale (the wait), the sold-out one (the rest), a drawn one


class Replayed(Scenarios):
    """The bench's builders with the sales, tickets and page files handed in, not made."""

    def __init__(self, shoppers: list[Shopper], gone: int) -> None:
        self.shoppers, self.gone = shoppers, gone
        self.deployment = SimpleNamespace(secret_key=settings.SECRET_KEY)

    def _drawn_sale(self) -> DrawnSale:  # the second shopper drawn, the first listed
        return DrawnSale(DRAWN, listed=self.shoppers[:1], winners=1, entries={"500507": 2})

    def _not_started_sale(self) -> int:
        return EARLY

    def _opening_sale(self) -> int:
        return self.gone

    def _result_polls(self, sale_id: int, shoppers: list[Shopper]) -> list[Request]:
        return [Request("GET", f"/seckill/result?goodsId={sale_id}", s.session, s.csrf, cookies=f"t={s.user_id}",
                        kind="result") for s in shoppers]  # fmt: skip

    def _page_files(self, sale_id: int) -> dict[str, list[str]]:
        return {"static": ["/static/js/seckill.js", "/static/css/shop.css"], "jsi18n": ["/jsi18n/"]}


@pytest.fixture
def recorded() -> dict:
    return opening_mix.load()


@pytest.fixture
def replayed(db) -> Replayed:
    sale = make_sale(stock=2)
    users = [make_user() for _ in range(2)]
    for user in users:
        buy(sale=sale, user=user)
    return Replayed([Shopper(u.pk, session=f"session{u.pk}") for u in users], sale.pk)


def test_the_shipped_recording_has_every_phase_and_rates_for_each(recorded):
    weighed = opening.weights(recorded)
    assert {phase for phase, _key in weighed} == set(opening.PHASE_SECONDS)
    assert all(weight > 0 for weight in weighed.values())
    assert ("opening", "POST seckill:do") in weighed


def test_every_recorded_kind_is_built_as_a_request_of_that_kind_for_its_phases_sale(recorded, replayed):
    builders = replayed._opening_builders(recorded)
    weighed = opening.weights(recorded)
    assert {key for _phase, key in weighed} <= set(builders)
    for number, (phase, key) in enumerate(sorted(weighed)):
        request = builders[key](phase, number)
        method, _sep, kind = key.partition(" ")
        assert request.method == method, key
        assert opening_mix.kind_of(request.path.split("?", 1)[0]) == kind, (key, request.path)
        if key == "GET seckill:waiting_list":
            assert request.path == f"/seckill/waitingList/{DRAWN}", (phase, request)
        elif "{sale}" in recorded["templates"].get(key, "") or key in ("POST seckill:do", "GET seckill:path"):
            wanted = EARLY if phase == "before" else replayed.gone
            assert str(wanted) in request.path + request.body, (phase, key, request)


def test_requests_carry_a_session_and_ticket_where_the_pages_did(recorded, replayed):
    builders = replayed._opening_builders(recorded)
    sessions = opening.shares(recorded, "with_session")
    shopper = replayed.shoppers[1]
    for key in set(recorded["templates"]) - {"GET seckill:waiting_list"}:  # a listed shopper's: below
        request = builders[key]("opening", 1)
        assert (request.session == shopper.session) == (sessions.get(key, 0) >= 0.5), key
    result = builders["GET seckill:result"]("opening", 1)
    assert (result.session, result.cookies) == (shopper.session, f"t={shopper.user_id}")
    order = builders["GET orders:detail"]("after", 0)
    assert order.path.startswith("/orders/") and order.session == replayed.shoppers[0].session


def test_the_waiting_list_is_polled_by_a_listed_shopper_with_the_wait_ticket_of_its_first_poll(recorded, replayed):
    # The recording's polls are the draw's entrants' (the draw group alone), each with a session.
    draw_only = {key for phase in recorded["groups"]["first_come"]["phases"].values() for key in phase["counts"]}
    assert "GET seckill:waiting_list" not in draw_only
    listed = replayed.shoppers[0]
    for number in range(3):
        poll = replayed._opening_builders(recorded)["GET seckill:waiting_list"]("after", number)
        assert (poll.path, poll.session, poll.csrf) == (f"/seckill/waitingList/{DRAWN}", listed.session, listed.csrf)
        name, _sep, value = poll.cookies.partition("=")
        assert name == wait_cookie(DRAWN)
        assert wait_read(value, sale_id=DRAWN, session_key=listed.session) == listed.user_id


def test_the_static_files_are_taken_in_turn_from_the_item_pages_links(recorded, replayed):
    builders = replayed._opening_builders(recorded)
    assert [builders["GET static"]("before", n).path for n in range(3)] == [
        "/static/js/seckill.js", "/static/css/shop.css", "/static/js/seckill.js"
    ]  # fmt: skip


def test_the_replayed_opening_keeps_the_recorded_proportions(recorded, replayed):
    weighed = opening.weights(recorded)
    steps = opening.plan(weighed, size=3000)
    made = opening.requests_made(steps, replayed._opening_builders(recorded))
    assert len(made) == 3000
    counts = Counter(request.kind for request in made)
    total = sum(weighed.values())
    for key in {key for _phase, key in weighed}:
        share = sum(w for (_p, k), w in weighed.items() if k == key) / total
        assert abs(counts[opening.kind_word(key)] / 3000 - share) <= 1 / 3000 * len(opening.PHASE_SECONDS), key
    assert counts["seckill_sale_state"] > counts["post_seckill_do"]


def test_the_plan_is_the_same_for_a_seed_and_the_largest_remainders_fill_it():
    weighed = {("a", "GET x"): 1.0, ("a", "GET y"): 1.0, ("a", "GET z"): 1.0}
    steps = opening.plan(weighed, size=10)
    assert steps == opening.plan(weighed, size=10) and steps != opening.plan(weighed, size=10, seed=1)
    assert sorted(Counter(steps).values()) == [3, 3, 4]
    assert len(opening.plan(weighed, size=2)) == 3  # never fewer steps than kinds
    with pytest.raises(opening.Unbuildable):
        opening.plan({("a", "GET x"): 0.0}, size=10)


def test_a_kind_is_a_word_with_the_method_unless_it_is_a_get():
    assert opening.kind_word("GET seckill:sale_state") == "seckill_sale_state"
    assert opening.kind_word("POST seckill:do") == "post_seckill_do"
    assert opening.kind_word("GET seckill:verify-code") == "seckill_verify_code"


def test_the_kind_lines_show_missing_figures_as_a_dash():
    rows = {
        "by_kind": {
            "static": {"rps_closed": 120.4, "rps_open": None, "p50_ms_open": None, "p99_ms_open": 3.25,
                       "edge_share": 0.5, "fast_path_share": 0.25, "django_share": 0.25},
        },
        "django_per_shopper_minute": {"before": 12.5, "opening": 30.0},
    }  # fmt: skip
    lines = opening.kind_lines(rows)
    assert lines[1].split() == ["static", "120/-", "req/s", "-/3.2", "ms", "50.0", "%", "/", "25.0", "%", "/",
                                "25.0", "%"]  # fmt: skip
    assert lines[2].endswith("by recorded phase: before 12.5, opening 30")
    assert opening.kind_lines({}) == []
    assert opening.kind_rows({}, recorded={}) == {}
