"""How `make bench`'s waiting-room opening sizes its crowd and reads its answers
(lab/bench/waiting_room.py)."""

from lab.bench.report import TAIL_TARGET
from lab.bench.waiting_room import Call, crowd_size, django_per_admitted, kind_figures, verdicts


def test_the_crowd_is_ten_times_what_the_room_admits_over_the_window():
    assert crowd_size(60, 60) == 600
    assert crowd_size(120, 30) == 600
    assert crowd_size(1, 1) == 1  # never nobody


def call(kind: str, ms: float, status: int = 200, code: str = "0", cache: str = "PASS") -> Call:
    return Call(kind, 0.0, ms / 1000, 0.001, status, code, cache)


def test_each_kind_gets_its_own_tail_and_answers_in_a_shoppers_order():
    calls = [call("wr_status", ms) for ms in range(1, 101)] + [call("wr_buy", 30), call("wr_captcha", 12, code="none")]
    figures = kind_figures(calls)
    assert list(figures) == ["wr_status", "wr_captcha", "wr_buy"]
    assert (figures["wr_status"]["p50_ms"], figures["wr_status"]["p99_ms"], figures["wr_status"]["max_ms"]) == (
        50.0, 99.0, 100.0,
    )  # fmt: skip
    assert figures["wr_captcha"]["answers"] == {"200/none": 1} and figures["wr_buy"]["edge"] == {"PASS": 1}
    assert figures["wr_buy"]["late_p99_ms"] == 1.0


def test_django_requests_count_every_kind_over_the_shoppers_admitted():
    django = {"wr_join": 300, "wr_status": 30, "wr_captcha": 30, "wr_path": 30, "wr_buy": 30, "item": 7}
    assert django_per_admitted(django, 30) == 14.0
    assert django_per_admitted({"wr_status": 5}, 0) is None


def test_a_kind_whose_p99_is_over_the_tail_target_times_its_p50_misses_it():
    facts = {"kinds": {"wr_status": {"p50_ms": 10.0, "p99_ms": 10.0 * TAIL_TARGET},
                       "wr_buy": {"p50_ms": 10.0, "p99_ms": 10.0 * TAIL_TARGET + 1}},
             "django_per_admitted": 4.5}  # fmt: skip
    found = {v["name"]: v for v in verdicts(facts)}
    assert found["waiting-room: wr_status p99 / p50 while the crowd waits"]["met"]
    assert not found["waiting-room: wr_buy p99 / p50 while the crowd waits"]["met"]
    assert found["waiting-room: Django requests per admitted shopper"]["value"] == 4.5
    assert verdicts({}) == []
