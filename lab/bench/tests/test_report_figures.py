"""The bench's arithmetic and its printed figures: the ratios and their verdicts, the table's
columns, the lines beside it, and the nearest-rank percentiles every tail verdict reads."""

import json

import pytest

from lab.bench import report
from lab.bench.load import LoadResult, Request, latency_summary, write_requests
from lab.bench.report import (
    DRAIN_TARGET_SECONDS,
    TAIL_TARGET,
    extra_cpu_lines,
    figure_lines,
    ratio_lines,
    ratios,
    save_json,
    table,
)


def result(scenario: str, rps: float, *, p50: float = 10.0, p99: float = 20.0, **more) -> LoadResult:
    """A scenario that answered `rps` requests a second over 10 s."""
    latency = {"p50": p50, "p95": (p50 + p99) / 2, "p99": p99, "max": p99 * 2, "mean": p50}
    fields = {"statuses": {"200": int(rps * 10)}, "codes": {"0": int(rps * 10)}} | more
    return LoadResult(scenario, "wrk", 8, int(rps * 10), 10.0, latency, **fields)


def by_name(verdicts: list[dict]) -> dict[str, dict]:
    return {verdict["name"]: verdict for verdict in verdicts}


# --- the ratios ---------------------------------------------------------------------------------


def test_a_ratio_is_the_numerators_rate_over_the_denominators_against_its_minimum():
    verdicts = by_name(ratios([result("sold-out", 600), result("bare", 1000), result("floor", 400)], None))
    assert verdicts["sold-out / bare"] == {"name": "sold-out / bare", "value": 0.6, "target": ">= 0.5", "met": True}
    assert verdicts["sold-out / floor"] == {"name": "sold-out / floor", "value": 1.5, "target": ">= 1.2", "met": True}
    assert verdicts["floor / bare"] == {"name": "floor / bare", "value": 0.4, "target": "-", "met": None}


def test_a_ratio_under_its_minimum_is_missed_and_one_exactly_at_it_is_met():
    verdicts = by_name(ratios([result("not-started", 499), result("detail-poll", 300), result("bare", 1000)], None))
    assert verdicts["not-started / bare"]["met"] is False
    assert verdicts["detail-poll / bare"]["value"] == 0.3
    assert verdicts["detail-poll / bare"]["met"] is True


def test_a_ratio_is_left_out_when_either_scenario_is_missing_or_the_denominator_answered_nothing():
    verdicts = by_name(ratios([result("burst", 500), result("floor", 0), result("naive", 100)], None))
    assert "burst / floor" not in verdicts  # the floor answered nothing: no division by zero
    assert "burst / bare" not in verdicts  # no bare run
    assert verdicts["burst / naive"]["value"] == 5.0


def test_the_buys_tail_is_its_p99_over_its_p50_within_the_target():
    verdicts = by_name(ratios([result("burst", 100, p50=10, p99=30), result("sold-out", 100, p50=2, p99=7)], None))
    assert verdicts["burst p99 / p50"] == {"name": "burst p99 / p50", "value": 3.0, "target": f"<= {TAIL_TARGET}",
                                           "met": True}  # fmt: skip
    assert verdicts["sold-out p99 / p50"]["value"] == 3.5
    assert verdicts["sold-out p99 / p50"]["met"] is False


def test_only_the_buy_scenarios_have_a_tail_verdict_and_none_without_a_median():
    verdicts = by_name(ratios([result("floor", 100, p50=1, p99=50), result("api-burst", 100, p50=0, p99=5)], None))
    assert not [name for name in verdicts if "p99" in name]


def test_a_burst_of_two_answer_kinds_is_also_judged_within_each_kind():
    kinds = {
        "0": {"count": 300, "p50": 20.0, "p99": 50.0, "max": 60.0},
        "500500": {"count": 700, "p50": 2.0, "p99": 8.0, "max": 9.0},
    }
    verdicts = by_name(ratios([result("burst", 100, p50=3, p99=45, latency_by_code_ms=kinds)], None))
    assert verdicts["burst p99 / p50, accepted only (300)"]["value"] == 2.5
    assert verdicts["burst p99 / p50, accepted only (300)"]["met"] is True
    assert verdicts["burst p99 / p50, sold out only (700)"]["value"] == 4.0
    assert verdicts["burst p99 / p50, sold out only (700)"]["met"] is False
    assert verdicts["burst p99 / p50"]["value"] == 15.0


def test_a_single_answer_kind_adds_no_verdict_of_its_own():
    kinds = {"500500": {"count": 700, "p50": 2.0, "p99": 8.0, "max": 9.0}}
    verdicts = ratios([result("sold-out", 100, p50=2, p99=8, latency_by_code_ms=kinds)], None)
    assert [v["name"] for v in verdicts] == ["sold-out p99 / p50"]


def test_each_request_kind_of_the_open_loop_is_judged_within_its_own_median():
    kinds = {
        "item_page": {"count": 50, "p50": 4.0, "p99": 10.0, "max": 12.0},
        "sale_state": {"count": 500, "p50": 1.0, "p99": 5.0, "max": 7.0},
        "never_answered_fast": {"count": 3, "p50": 0.0, "p99": 1.0, "max": 1.0},
    }
    verdicts = by_name(ratios([result("opening-open", 100, latency_by_kind_ms=kinds)], None))
    assert verdicts["opening-open p99 / p50, item_page (50)"]["met"] is True
    assert verdicts["opening-open p99 / p50, sale_state (500)"]["value"] == 5.0
    assert verdicts["opening-open p99 / p50, sale_state (500)"]["met"] is False
    assert not [name for name in verdicts if "never_answered_fast" in name]


@pytest.mark.parametrize(("seconds", "met"), [(0.2, True), (DRAIN_TARGET_SECONDS, True), (0.51, False)])
def test_the_drain_is_judged_against_its_target(seconds, met):
    (verdict,) = ratios([], seconds)
    assert verdict["name"] == "queue drain after the last burst request (s)"
    assert verdict["value"] == round(seconds, 2)
    assert verdict["met"] is met


def test_the_writer_below_four_hot_rows_misses_and_no_figures_make_no_verdict():
    (verdict,) = ratios([], None, hot_row={"purchases_per_second": 1000.0}, drain={"orders_per_second": 3000.0})
    assert (verdict["value"], verdict["met"]) == (3.0, False)
    assert ratios([], None, hot_row={"purchases_per_second": None}, drain={"orders_per_second": 3000.0}) == []
    assert ratios([], None, hot_row={}, drain=None) == []


def test_the_verdict_lines_say_met_missed_or_nothing():
    lines = ratio_lines(
        [
            {"name": "a / b", "value": 1.5, "target": ">= 1.0", "met": True},
            {"name": "c / d", "value": 0.5, "target": ">= 1.0", "met": False},
            {"name": "e / f", "value": 2.0, "target": "-", "met": None},
        ]
    ).splitlines()
    assert [line.split()[-1] for line in lines] == ["met", "MISSED", "-"]
    assert lines[0].split()[:4] == ["a", "/", "b", "1.5"]


# --- the table ---------------------------------------------------------------------------------


def test_a_scenarios_row_has_its_rate_percentiles_cpu_shares_and_answers():
    row = result("burst", 123.4, p50=4.25, p99=9.5, statuses={"200": 1000, "429": 234}, codes={"0": 300, "500500": 934},
                 generator_cpu_seconds=2.0, generator_wall_seconds=10.0)  # fmt: skip
    cpu = {"burst": {"web": 150.0, "celery": 20.0, "postgres": 30.0, "redis": 12.0, "machine": 190.0}}
    lines = table([row], cpu).splitlines()
    assert lines[0].split()[:3] == ["scenario", "requests", "req/s"]
    cells = lines[2].split()
    assert cells[:7] == ["burst", "1234", "123", "4.2", "6.9", "9.5", "19.0"]
    assert cells[7:13] == ["20%", "150%", "20%", "30%", "12%", "190%"]
    assert lines[2].endswith("200:1000 429:234 / 0:300 500500:934")


def test_a_scenario_without_cpu_figures_shows_zero_and_socket_errors_are_named():
    row = result("floor", 10, socket_errors={"connect": 2, "timeout": 1})
    line = table([row], {}).splitlines()[2]
    assert "0%" in line.split()
    assert line.endswith("socket errors connect:2 timeout:1")


def test_the_open_loop_line_gives_the_share_answered_and_the_send_lag():
    row = result("opening-open", 90, rate=100.0, send_lag_ms={"p50": 0.5, "p99": 12.25})
    lines = table([row], {}).splitlines()
    assert lines[3].split()[:9] == ["open", "loop:", "100", "req/s", "scheduled,", "90", "answered", "a", "second"]
    assert "(90 %)" in lines[3]
    assert lines[3].endswith("sent p50 0.5 / p99 12.2 ms past due")


def test_rows_by_request_and_by_answer_follow_the_scenario():
    kinds = {"item_page": {"count": 5, "p50": 1.0, "p99": 2.0, "max": 3.0}}
    codes = {
        "0": {"count": 4, "p50": 10.0, "p99": 20.0, "max": 30.0},
        "500500": {"count": 6, "p50": 1.0, "p99": 2.0, "max": 3.0},
        "500100": {"count": 1, "p50": 5.0, "p99": 5.0, "max": 5.0},
    }
    lines = table([result("burst", 1, latency_by_kind_ms=kinds, latency_by_code_ms=codes)], {}).splitlines()
    assert lines[3].strip() == "by request: item_page 5: p50 1.0 p99 2.0 max 3.0 ms"
    assert lines[4].strip() == (
        "by answer: accepted 4: p50 10.0 p99 20.0 max 30.0 ms; sold out 6: p50 1.0 p99 2.0 max 3.0 ms;"
        " code 500100 1: p50 5.0 p99 5.0 max 5.0 ms"
    )


def test_one_answer_kind_makes_no_by_answer_line():
    codes = {"0": {"count": 4, "p50": 10.0, "p99": 20.0, "max": 30.0}}
    assert len(table([result("burst", 1, latency_by_code_ms=codes)], {}).splitlines()) == 3


def test_the_clusters_own_process_kinds_get_a_line_per_scenario():
    cpu = {"burst": {"haproxy": 12.4, "pgbouncer": 3.6}}
    lines = extra_cpu_lines([result("burst", 1), result("floor", 1)], cpu, ("haproxy", "pgbouncer"))
    assert [line.split() for line in lines] == [
        ["burst", "haproxy", "12%", "pgbouncer", "4%"],
        ["floor", "haproxy", "0%", "pgbouncer", "0%"],
    ]


# --- the figures beside the table ---------------------------------------------------------------


HOT_ROW = {
    "tool": "pgbench",
    "clients": 4,
    "purchases": 12000,
    "purchases_per_second": 1200.5,
    "latency_ms": 3.3,
    "cpu_percent_of_one_core": {"machine": 190.0, "redis": 1.0, "postgres": 80.0, "other": 5.0, "web": 0.0},
}
DRAIN = {
    "queued": 5000,
    "units": 5000,
    "reservations_per_second": 2500,
    "reserve_processes": 2,
    "orders_landed": 5000,
    "drain_seconds": 0.8,
    "orders_per_second": 6250,
    "cpu_percent_of_one_core": {
        "reserving": {"redis": 40.0, "machine": 200.0, "haproxy": 10.0},
        "draining": {"celery": 90.0, "postgres": 60.0},
    },
    "redis_bytes_per_1000_reservations": {"used_memory": 204800, "sale_keys": 102400, "broker_messages": 51200},
}


def test_the_hot_row_line_names_its_tool_rate_and_cpu_in_a_fixed_order():
    lines = figure_lines(hot_row=HOT_ROW, drain={}, memory=[], profiles={})
    assert lines[0].strip() == (
        "single hot-row purchase rate (pgbench, 4 clients, UPDATE + INSERT per transaction): 1200.5 purchases/s"
        " (12000 purchases, 3.3 ms each)"
    )
    assert lines[1] == "  CPU % of one core: web 0%, postgres 80%, redis 1%, other 5%, machine 190%"


def test_the_hot_row_of_the_thread_loop_has_no_latency():
    lines = figure_lines(hot_row=HOT_ROW | {"tool": "psycopg2 loop", "latency_ms": None}, drain={}, memory=[],
                         profiles={})  # fmt: skip
    assert lines[0].endswith("(12000 purchases)")


def test_the_drain_lines_give_rates_cpu_and_memory_in_kib():
    lines = figure_lines(hot_row={}, drain=DRAIN, memory=[], profiles={})
    assert "5000 of 5000 units reserved through the gate's service at 2500/s (2 processes" in lines[0]
    assert lines[1].strip() == "then 5000 orders in PostgreSQL 0.8 s after the writer resumed: 6250 orders/s"
    assert "redis 40%, haproxy 10%, machine 200%" in lines[2]  # the deployment's own kinds before machine
    assert lines[3].endswith("celery 90%, postgres 60%")
    assert lines[4].strip() == (
        "Redis memory per 1,000 reservations: 200 KiB (INFO used_memory), of which the sale's keys 100 KiB"
        " and the broker's messages 50 KiB"
    )


def test_a_broker_outside_redis_leaves_its_messages_out_of_the_memory_line():
    memory = DRAIN["redis_bytes_per_1000_reservations"] | {"broker_messages": None}
    lines = figure_lines(hot_row={}, drain=DRAIN | {"redis_bytes_per_1000_reservations": memory}, memory=[],
                         profiles={})  # fmt: skip
    assert lines[4].endswith("of which the sale's keys 100 KiB")


def test_memory_is_listed_per_kind_supervisor_first_and_profiles_by_their_heaviest_frames():
    memory = [
        {"kind": "web", "pid": 30, "rss_mb": 80.4, "uss_mb": 40.6},
        {"kind": "web", "pid": 10, "rss_mb": 50.0, "uss_mb": 20.0},
        {"kind": "celery", "pid": 20, "rss_mb": 90.0, "uss_mb": 70.0},
    ]
    frames = {f"frame{i}": 20.0 - i for i in range(8)}
    profiles = {"burst": {"samples": 900, "svg": "flame.svg", "self_percent": frames}}
    lines = figure_lines(hot_row={}, drain={}, memory=memory, profiles=profiles)
    assert lines[1] == "  web    2 processes (supervisor first): 50 / 20, 80 / 41"
    assert lines[2] == "  celery 1 processes (supervisor first): 90 / 70"
    assert lines[3].strip() == "profile of burst (900 samples, flame.svg), the heaviest frames:"
    assert lines[4:] == [f"  {20.0 - i:5.1f}% self   frame{i}" for i in range(6)]


def test_the_saved_json_reads_back_with_what_json_cannot_hold_as_text(tmp_path):
    path = tmp_path / "bench.json"
    save_json(path, {"results": [result("floor", 1).as_dict()], "where": tmp_path})
    saved = json.loads(path.read_text())
    assert saved["where"] == str(tmp_path)
    assert saved["results"][0]["rps"] == 1.0
    assert saved["results"][0]["scenario"] == "floor"


def test_every_ratio_target_names_two_scenarios_the_bench_can_run():
    from lab.bench.run import SCENARIOS

    named = {top for _, top, _, _ in report.RATIO_TARGETS} | {bottom for _, _, bottom, _ in report.RATIO_TARGETS}
    # "captcha" also records its drawn-in-the-request half under this name (lab/bench/scenarios.py)
    assert named <= {*SCENARIOS, "captcha-drawn"}


# --- the load generator's figures ----------------------------------------------------------------


def test_percentiles_are_the_nearest_rank_in_milliseconds():
    summary = latency_summary([5000, 1000, 3000, 2000, 4000])  # microseconds, in any order
    assert summary == {"count": 5, "p50": 3.0, "p99": 5.0, "max": 5.0}
    hundred = latency_summary(list(range(1000, 101000, 1000)))
    assert (hundred["p50"], hundred["p99"], hundred["max"]) == (50.0, 99.0, 100.0)
    assert latency_summary([7000]) == {"count": 1, "p50": 7.0, "p99": 7.0, "max": 7.0}


def test_a_result_rate_and_generator_share_guard_against_zero_time():
    assert result("floor", 0).rps == 0.0
    idle = LoadResult("x", "wrk", 1, 0, 0.0, {}, {}, {})
    assert (idle.rps, idle.generator_cpu_percent) == (0.0, 0.0)
    busy = LoadResult("x", "wrk", 1, 10, 5.0, {}, {}, {}, generator_cpu_seconds=1.0)
    assert busy.generator_cpu_percent == 20.0  # over the scenario when the process lifetime is unknown


def test_the_request_file_has_one_tab_separated_line_per_request(tmp_path):
    requests = [
        Request("GET", "/goods/1"),
        Request(
            "POST", "/seckill/x/doSeckill", session="s", csrf="c", body="a=1", token="t", cookies="k=v", kind="buy"
        ),  # fmt: skip
    ]
    path = write_requests(requests, tmp_path, "mix")
    assert path.name == "mix.requests"
    assert path.read_text().splitlines() == [
        "GET\t/goods/1\t\t\t\t\t\t",
        "POST\t/seckill/x/doSeckill\ts\tc\ta=1\tt\tk=v\tbuy",
    ]
