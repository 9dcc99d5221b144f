"""The recorded opening mix: its phases and rates (tools.opening_mix) and the bench's requests
made from it (lab.bench.opening). No server: hand-made recordings."""

from collections import Counter

import pytest

from lab.bench import opening
from lab.bench.load import Request
from tools import opening_mix
from tools.opening_mix import Hit, kinds, mix, phase_of, phase_spans, template_of


def hit(at: float, kind: str, shopper: int = 0, *, method: str = "GET", group: str = "first_come",
        template: str = "", session: bool = True, ticket: bool = False) -> Hit:  # fmt: skip
    return Hit(at=at, method=method, kind=kind, shopper=shopper, group=group, session=session, ticket=ticket,
               status=200, x_cache="none", template=template or f"/{kind}")  # fmt: skip


def test_a_request_falls_in_the_phase_of_its_seconds_from_the_opening():
    assert phase_of(-0.1, sold_out_at=3) == "before"
    assert phase_of(0, sold_out_at=3) == phase_of(9.9, sold_out_at=3) == "opening"
    assert phase_of(10, sold_out_at=3) == "after"
    assert phase_of(12, sold_out_at=15) is None  # past the opening, not yet sold out
    assert phase_of(12, sold_out_at=None) is None
    assert phase_spans(first_at=-60, sold_out_at=25, end_at=55) == {
        "before": (-60, 0), "opening": (0, 10), "after": (25, 55)
    }  # fmt: skip
    assert phase_spans(first_at=-60, sold_out_at=None, end_at=8) == {"before": (-60, 0), "opening": (0, 8)}


def test_rates_are_requests_per_second_a_shopper_had_a_page_open_in_each_phase():
    hits = [
        hit(-20, "item:page", 0), hit(-10, "item:page", 1),  # two shoppers arrive
        *(hit(t, "seckill:state", 0) for t in (-15, -10, -5)), *(hit(t, "seckill:state", 1) for t in (-5,)),
        hit(1, "seckill:do", 0, method="POST", template="/seckill/abc/doSeckill"),
        hit(2, "seckill:do", 1, method="POST", template="/seckill/def/doSeckill"),
        hit(3, "seckill:result", 0, ticket=True),
        hit(15, "seckill:state", 1), hit(16, "seckill:state", 0),
        hit(7, "draw:page", 2, group="draw"),
    ]  # fmt: skip
    made = mix(hits, sold_out_at=4, end_at=20)
    phases = made["groups"]["first_come"]["phases"]
    # before: shopper 0 for 20 s, shopper 1 for 10 s; opening and after: 10 s each, both there.
    assert [phases[p]["shopper_seconds"] for p in ("before", "opening", "after")] == [30, 20, 20]
    assert phases["before"]["counts"] == {"GET item:page": 2, "GET seckill:state": 4}
    assert phases["before"]["per_shopper_second"] == {"GET item:page": round(2 / 30, 5),
                                                      "GET seckill:state": round(4 / 30, 5)}  # fmt: skip
    assert phases["opening"]["counts"] == {"POST seckill:do": 2, "GET seckill:result": 1}
    assert phases["opening"]["with_ticket"] == {"GET seckill:result": 1}
    assert phases["after"]["per_shopper_second"] == {"GET seckill:state": 0.1}
    # Every shopper, whichever sale: the draw's shopper counts from their first request (7 s).
    assert made["groups"]["all"]["phases"]["opening"]["shopper_seconds"] == 23
    assert made["groups"]["draw"]["shoppers"] == 1
    # One URL for everyone: a template; one path per shopper: none.
    assert made["templates"]["GET seckill:state"] == "/seckill:state"
    assert "POST seckill:do" not in made["templates"]
    assert kinds(made) >= {"GET item:page", "POST seckill:do", "GET draw:page"}


def test_a_kind_is_the_route_name_django_resolves_so_a_new_url_is_a_new_kind():
    assert opening_mix.kind_of("/seckill/result") == "seckill:result"
    assert opening_mix.kind_of("/seckill/0123abc/doSeckill") == "seckill:do"
    assert opening_mix.kind_of("/goods/detail/12") == "item:page"
    assert opening_mix.kind_of("/zh-hans/goods/detail/12") == "item:page"
    assert opening_mix.kind_of("/jsi18n/") == "jsi18n"
    assert opening_mix.kind_of("/static/js/seckill.js") == "static"
    assert opening_mix.kind_of("/no/such/page") == "unrouted"


def test_a_template_names_the_sale_and_drops_the_cache_buster():
    assert template_of("http://h:1/seckill/verifyCode?goodsId=12&t=1764646512345", 12) == (
        "/seckill/verifyCode?goodsId={sale}"
    )
    assert template_of("http://h:1/goods/detail/12", 12) == "/goods/detail/{sale}"
    assert template_of("http://h:1/orders/2026120212", 12) == "/orders/2026120212"


RECORDED = {
    "groups": {
        "all": {
            "shoppers": 10,
            "phases": {
                "before": {"per_shopper_second": {"GET seckill:state": 0.2, "GET static": 0.01},
                           "counts": {"GET seckill:state": 200, "GET static": 10},
                           "with_session": {"GET seckill:state": 200, "GET static": 10}, "with_ticket": {}},
                "opening": {"per_shopper_second": {"POST seckill:do": 0.05, "GET seckill:result": 0.1},
                            "counts": {"POST seckill:do": 5, "GET seckill:result": 10},
                            "with_session": {"POST seckill:do": 5, "GET seckill:result": 10},
                            "with_ticket": {"GET seckill:result": 9}},
            },
        }
    },
    "templates": {"GET seckill:state": "/seckill/state?goodsId={sale}"},
}  # fmt: skip


def test_the_kinds_weigh_their_rate_times_their_phase_seconds_and_each_is_replayed():
    weighed = opening.weights(RECORDED, seconds={"before": 100, "opening": 10})
    assert weighed == {("before", "GET seckill:state"): 20.0, ("before", "GET static"): 1.0,
                       ("opening", "POST seckill:do"): 0.5, ("opening", "GET seckill:result"): 1.0}  # fmt: skip
    steps = opening.plan(weighed, size=450)
    counts = Counter(steps)
    assert len(steps) == 450
    assert counts[("before", "GET seckill:state")] == 400
    assert counts[("opening", "POST seckill:do")] == 10
    # A kind too rare for its share of the plan is still sent once.
    rare = opening.plan({("a", "GET x"): 1000.0, ("a", "GET y"): 0.001}, size=100)
    assert Counter(rare)[("a", "GET y")] == 1
    assert opening.shares(RECORDED, "with_ticket") == {"GET seckill:state": 0, "GET static": 0,
                                                        "POST seckill:do": 0, "GET seckill:result": 0.9}  # fmt: skip


def test_requests_carry_their_kind_and_a_kind_without_a_builder_fails_loudly():
    steps = [("before", "GET seckill:state"), ("opening", "POST seckill:do")]
    builders = {
        "GET seckill:state": lambda phase, n: Request("GET", f"/seckill/state?goodsId={n}"),
        "POST seckill:do": lambda phase, n: Request("POST", f"/seckill/p{n}/doSeckill", body="goodsId=1"),
    }
    made = opening.requests_made(steps, builders)
    assert [(r.method, r.path, r.kind) for r in made] == [
        ("GET", "/seckill/state?goodsId=0", "seckill_state"), ("POST", "/seckill/p1/doSeckill", "post_seckill_do")
    ]  # fmt: skip
    with pytest.raises(opening.Unbuildable, match=r"\['GET seckill:saleState'\]"):
        opening.requests_made([*steps, ("before", "GET seckill:saleState")], builders)


def test_django_requests_per_shopper_minute_are_the_recorded_rates_times_the_share_reaching_django():
    rows = opening.kind_rows(
        {"opening-mix": {"seconds": 10.0, "latency_by_kind_ms": {},
                         "by_kind": {"seckill_state": {"none": 1000}, "static": {"HIT": 50, "MISS": 50},
                                     "post_seckill_do": {"none": 100}, "seckill_result": {"none": 100}},
                         "django_by_kind": {"seckill_state": 1000, "static": 50, "seckill_result": 10}}},
        RECORDED,
    )  # fmt: skip
    assert rows["by_kind"]["static"] == {"rps_closed": 10.0, "rps_open": None, "p50_ms_open": None,
                                         "p99_ms_open": None, "edge_share": 0.5, "fast_path_share": 0.0,
                                         "django_share": 0.5}  # fmt: skip
    assert rows["by_kind"]["post_seckill_do"]["fast_path_share"] == 1.0
    # before: 0.2 state/s all in Django + 0.01 static/s half in Django; opening: a tenth of 0.1 polls/s.
    assert rows["django_per_shopper_minute"] == {"before": round((0.2 + 0.005) * 60, 2), "opening": 0.6}
    assert "Django requests per shopper-minute" in "\n".join(opening.kind_lines(rows))


def test_a_kind_answered_400_or_404_where_no_page_is_answered_so_is_named_with_its_counts():
    statuses = {
        "seckill_path": {"400": 30, "429": 2},  # the page's check of a typed answer: a 400 it expects
        "seckill_waiting_list": {"404": 12},  # a first-come sale's URL: it has no waiting list
        "seckill_sale_state": {"200": 900, "400": 1},
        "static": {"200": 50, "404": 0},
    }
    refused = opening.refused_kinds(statuses, expected={"seckill_path": {"400"}})
    assert refused == {"seckill_sale_state": {"400": 1}, "seckill_waiting_list": {"404": 12}}
    assert opening.refused_kinds({"seckill_path": {"404": 3}}, expected={"seckill_path": {"400"}}) == {
        "seckill_path": {"404": 3}
    }


def test_the_replayed_opening_names_each_kind_refused_as_a_violation():
    from lab.bench.load import LoadResult
    from lab.bench.measure import Measurement
    from lab.bench.scenarios import Scenarios

    class Bench(Measurement, Scenarios):
        def __init__(self) -> None:
            self.violations = []

    def answered(statuses: dict, codes: dict, by_kind: dict) -> LoadResult:
        return LoadResult("opening-mix", "wrk", 8, sum(statuses.values()), 1.0, {"p50": 1.0, "p99": 2.0}, statuses,
                          codes, statuses_by_kind=by_kind)  # fmt: skip

    bench = Bench()
    bench._opening_expect(answered({"200": 100, "400": 10}, {"0": 100, "500505": 10},
                                   {"seckill_path": {"400": 10}, "seckill_sale_state": {"200": 100}}))  # fmt: skip
    assert bench.violations == []
    # The waiting-list poll replayed against a first-come sale: it has no list.
    refused = {"seckill_waiting_list": {"404": 12}, "seckill_sale_state": {"200": 100}}
    bench._opening_expect(answered({"200": 100, "404": 12}, {"0": 100, "500404": 12}, refused))
    assert bench.violations[-1] == (
        "opening-mix: kinds refused as no page's request is {'seckill_waiting_list': {'404': 12}}"
    )
