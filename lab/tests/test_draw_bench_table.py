"""`make draw-bench`'s printed figures: a row per size and shard count, as a log line and as the
Markdown table docs/draw.md quotes."""

from lab.draw_bench import SLOW_US, _line, _table, _us

ROW = {
    "entrants": 100_000,
    "where": "cluster",
    "shards": 16,
    "client_rate": 45_678.9,
    "enter_us": 12.345,
    "busiest_share": 0.41,
    "calls_by_node": "41/30/29",
    "capacity": 81_000.4,
    "set_mib": 5.25,
    "answers_mib": 1.0,
    "read_ms": 1_234.4,
    "pages": 1_600,
    "sscan_us": 95.6,
    "rank_ms": 310.2,
    "apply_ms": 4.56,
    "draw_ms": 1_600.7,
    "longest_enter_us": 2_500,
    "longest_enter": "EVALSHA",
    "longest_draw_us": 80,
    "longest_draw": "SSCAN",
    "enter_over_ms": 3,
    "draw_over_ms": 1,
    "enter_calls": 100_000,
    "draw_calls": 1_700,
}


def test_a_rows_log_line_gives_rates_shares_and_the_longest_calls():
    assert _line(ROW) == (
        "100,000 entrants, K=16: 45,679 entries/s (client), 12.3 us a call, busiest primary 41%; draw 1,601 ms;"
        " longest call 2500 / 80 us; calls >= 1 ms 3 / 1"
    )


def test_a_skipped_size_says_why():
    assert _line({"entrants": 1_000_000, "shards": 1, "skipped": "past the budget"}) == (
        "1,000,000 entrants, K=1: skipped (past the budget)"
    )


def test_a_call_under_the_slowlog_threshold_is_shown_as_under_a_tenth_of_a_millisecond():
    assert _us(SLOW_US - 1) == "< 0.1 ms"
    assert _us(SLOW_US) == "0.1 ms"
    assert _us(2_500) == "2.5 ms"


def test_the_table_has_a_column_per_header_and_names_where_it_ran():
    lines = _table([ROW, ROW | {"where": "server", "shards": 1}, {"entrants": 10, "where": "server", "shards": 1,
                                                                  "skipped": "no time"}]).splitlines()  # fmt: skip
    header = lines[0].strip("|").split(" | ")
    assert len(header) == 13 and lines[1].count("---") == 13
    cells = [cell.strip() for cell in lines[2].strip("|").split(" | ")]
    assert cells == [
        "100,000", "3-primary cluster", "16", "45,679", "12.3 µs", "41% (41/30/29)", "≈ 81,000", "5.2 + 1.0 MiB",
        "1,234 ms (1,600 × 96 µs)", "310 ms", "4.6 ms", "2.5 ms EVALSHA / < 0.1 ms SSCAN", "3 of 100,000 / 1 of 1,700",
    ]  # fmt: skip
    assert lines[3].startswith("| 100,000 | one server | 1 |")
    assert lines[4] == "| 10 | one server | 1 | skipped: no time |"
