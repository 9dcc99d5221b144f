"""The tables `make faults`, `make cluster-test` and `make partition-test` print: a column per
figure in the header's order, what a row that did not run or crashed shows, and the JSON."""

import json

from lab import faults
from lab.cluster.scenario import ClusterRow, as_json, database_cells, table


def cells(text: str, line: int = 2) -> list[str]:
    return [cell.strip() for cell in text.splitlines()[line].split("|")]


def columns(text: str) -> dict[str, str]:
    return dict(zip(cells(text, 0), cells(text), strict=True))


def test_each_figure_lands_under_its_own_header():
    row = ClusterRow(
        scenario="4. Redis primary",
        requests=1500,
        accepted=290,
        orders=288,
        stranded=2,
        lost=1,
        told_failed=3,
        failed_allowed=True,
        busy=41,
        other_5xx=5,
        errors_outside_window=6,
        asked_login=7,
        inconsistent=1,
        revocations=9,
        revocations_undone=2,
        failover_seconds=12.5,
        window_seconds=8.25,
        recovery_seconds=3.0,
        page_views=1000,
        page_hits=990,
        fault_views=40,
        fault_hits=39,
        page_errors_outside=4,
        purge_seconds=0.5,
        switch_on_seconds=0.91,
        switch_off_seconds=0.87,
        switch_limit=1.05,
    )
    got = columns(table([row]))
    assert got == {
        "scenario": "4. Redis primary",
        "requests": "1500",
        "queued": "290",
        "orders": "288",
        "oversold": "0",
        "dup": "0",
        "stranded": "2",
        "lost": "1",
        "queued→-1": "3 (allowed)",
        "503": "41",
        "other 5xx": "5",
        "5xx*": "6",
        "401": "7",
        "nodes differ": "1",
        "revoked undone": "2/9",
        "failover s": "12.5",
        "window s": "8.25",
        "drain s": "3.0",
        "edge hits": "990/1000",
        "in fault": "39/40",
        "page err*": "4",
        "purge s": "+0.50",
        "queue-all on/off s": "0.91/0.87 (<= 1.05)",
        "acked lost": "-",
        "paid lost": "-",
        "no leader s": "-",
        "no writes s": "-",
        "queued/503 w/o leader": "-",
        "ok": "NO",
    }


def test_a_row_without_figures_of_a_kind_shows_a_dash_and_the_sell_out_before_the_page_a_minus():
    got = columns(table([ClusterRow(scenario="web-restart", requests=10, purge_seconds=-0.125)]))
    assert (got["revoked undone"], got["edge hits"], got["in fault"], got["purge s"]) == ("-", "-", "-", "-0.12")
    assert got["queued→-1"] == "0" and got["other 5xx"] == "0"
    assert columns(table([ClusterRow(scenario="x", requests=1)]))["purge s"] == "-"


def test_a_row_not_run_or_crashed_says_so_instead_of_yes_or_no():
    text = table([ClusterRow(scenario="not run", requests=0), ClusterRow(scenario="crashed", requests=-1)])
    assert cells(text, 2)[-1] == "not run"
    assert cells(text, 3)[-1] == "CRASHED"


def test_the_columns_line_up_and_each_rows_notes_follow_the_legend():
    rows = [
        ClusterRow(scenario="a", requests=5, notes="db 0 redis 0"),
        ClusterRow(scenario="a much longer name", requests=123456, notes="late"),
    ]
    lines = table(rows).splitlines()
    assert len({len(line) for line in lines[:4]}) == 1
    assert set(lines[1]) <= {"-", "+"}
    assert lines[-2:] == ["  a: db 0 redis 0", "  a much longer name: late"]


def test_the_database_cells_give_losses_over_totals_with_the_cut_and_errors():
    assert database_cells(ClusterRow(scenario="x")) == ("-",) * 5
    row = ClusterRow(scenario="pg", acked=500, acked_lost=2, acked_after_cut=3, paid=40, paid_lost=1,
                     payment_5xx=4, leaderless_seconds=19.5, write_gap_seconds=23.75, queued_in_fault=90,
                     busy_in_fault=12)  # fmt: skip
    assert database_cells(row) == ("2/500 (+3 cut)", "1/40 (5xx 4)", "19.5", "23.75", "90/12")


def test_the_json_holds_every_field_and_the_verdict():
    rows = json.loads(as_json([ClusterRow(scenario="a", requests=3), ClusterRow(scenario="b", requests=3, lost=1)]))
    assert [(r["scenario"], r["ok"]) for r in rows] == [("a", True), ("b", False)]
    assert rows[0]["acked"] is None and rows[0]["purge_seconds"] is None
    assert set(rows[0]) == set(vars(ClusterRow(scenario="a"))) | {"ok"}


def test_the_fault_suites_row_fails_on_any_loss_and_its_table_has_a_column_each():
    assert faults.Row("kill workers", requests=100, accepted=50, orders=50).ok
    for breach in ("oversold", "duplicates", "stranded", "lost", "errors_outside_window"):
        assert not faults.Row("x", **{breach: 1}).ok, breach
    assert faults.Row("x", told_failed=4).ok  # reported, not a violation of its own
    row = faults.Row("2. freeze worker", requests=300, accepted=120, orders=119, stranded=1, lost=0,
                     errors_outside_window=2, recovery_seconds=4.5, notes="db 0 redis 1")  # fmt: skip
    text = faults.table([row])
    assert cells(text, 0) == ["scenario", "requests", "accepted", "orders", "oversold", "dup", "stranded", "lost",
                              "5xx*", "recover s", "ok"]  # fmt: skip
    assert cells(text) == ["2. freeze worker", "300", "120", "119", "0", "0", "1", "0", "2", "4.5", "NO"]
    assert text.splitlines()[-1] == "  2. freeze worker: db 0 redis 1"
