"""The bench's table, ratios and verdicts: printed, saved as JSON, and drawn as a PNG chart."""

from __future__ import annotations

import json
from pathlib import Path

from lab.bench.load import LoadResult

# The performance targets (reported, never enforced). (name, numerator scenario, denominator
# scenario, minimum ratio or None: reported only)
RATIO_TARGETS = (
    # Against the server's own ceiling (lab/bench/bare.py): what the shop's answers cost beyond it.
    ("sold-out / bare", "sold-out", "bare", 0.5),
    ("not-started / bare", "not-started", "bare", 0.5),
    ("detail-poll / bare", "detail-poll", "bare", 0.3),
    # The item page's refresh, and the mix the pages make: through an edge, at least the bare
    # server's rate, most of it never reaching Python.
    ("sale-state / bare", "sale-state", "bare", 1.0),
    ("burst / bare", "burst", "bare", None),
    ("floor / bare", "floor", "bare", None),
    ("opening-mix / bare", "opening-mix", "bare", 1.0),
    ("result-poll / bare", "result-poll", "bare", 1.0),
    # The opening's captchas: taken from the pool drawn ahead vs drawn in the request.
    ("captcha / captcha-drawn", "captcha", "captcha-drawn", None),
    ("burst / floor", "burst", "floor", 2.0),
    ("sold-out / floor", "sold-out", "floor", 1.2),
    ("burst / naive", "burst", "naive", 3.0),
    ("api-burst / burst (REST API vs page)", "api-burst", "burst", None),
    ("api-sold-out / sold-out (REST API vs page)", "api-sold-out", "sold-out", None),
)
TAIL_TARGET = 3.0  # p99 <= 3 x p50 for doSeckill
DRAIN_TARGET_SECONDS = 0.5  # a burst's orders all in PostgreSQL within this of its last request
WRITER_TARGET = 4.0  # the writer's orders/s >= 4 x the single hot-row purchase rate
DO_SECKILL = ("sold-out", "burst", "api-sold-out", "api-burst")
ANSWER_KINDS = {"0": "accepted", "500500": "sold out"}  # the buy's envelope codes (lab.bench.measure)


def _counts(counts: dict[str, int]) -> str:
    return " ".join(f"{key}:{value}" for key, value in sorted(counts.items()))


def table(results: list[LoadResult], cpu: dict[str, dict[str, float]]) -> str:
    head = (
        f"{'scenario':<11} {'requests':>8} {'req/s':>8} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'max ms':>7}"
        f"  {'gen':>4} {'web':>4} {'celery':>6} {'pg':>4} {'redis':>5} {'machine':>7}  HTTP statuses / envelope codes"
    )
    lines = [head, "-" * (len(head) + 10)]
    for r in results:
        share = cpu.get(r.scenario, {})
        lines.append(
            f"{r.scenario:<11} {r.requests:>8} {r.rps:>8.0f} {r.latency_ms['p50']:>7.1f} {r.latency_ms['p95']:>7.1f}"
            f" {r.latency_ms['p99']:>7.1f} {r.latency_ms['max']:>7.1f}  {r.generator_cpu_percent:>3.0f}%"
            f" {share.get('web', 0):>3.0f}% {share.get('celery', 0):>5.0f}% {share.get('postgres', 0):>3.0f}%"
            f" {share.get('redis', 0):>4.0f}% {share.get('machine', 0):>6.0f}%"
            f"  {_counts(r.statuses)} / {_counts(r.codes)}"
            + (f" socket errors {_counts(r.socket_errors)}" if r.socket_errors else "")
        )
        if r.rate:
            lag = r.send_lag_ms
            lines.append(f"{'':<11} open loop: {r.rate:.0f} req/s scheduled, {r.rps:.0f} answered a second"
                         f" ({100 * r.rps / r.rate:.0f} %), each timed from when it was due;"
                         f" sent p50 {lag.get('p50', 0):.1f} / p99 {lag.get('p99', 0):.1f} ms past due")  # fmt: skip
        if r.latency_by_kind_ms:
            lines.append(
                f"{'':<11} by request: "
                + "; ".join(
                    f"{kind} {k['count']:.0f}: p50 {k['p50']:.1f} p99 {k['p99']:.1f} max {k['max']:.1f} ms"
                    for kind, k in r.latency_by_kind_ms.items()
                )
            )
        if len(r.latency_by_code_ms) > 1:
            lines.append(
                f"{'':<11} by answer: "
                + "; ".join(
                    f"{_kind(code)} {k['count']:.0f}: p50 {k['p50']:.1f} p99 {k['p99']:.1f} max {k['max']:.1f} ms"
                    for code, k in r.latency_by_code_ms.items()
                )
            )
    return "\n".join(lines)


def _kind(code: str) -> str:
    return ANSWER_KINDS.get(code, f"code {code}")


def extra_cpu_lines(results: list[LoadResult], cpu: dict[str, dict[str, float]], groups: tuple[str, ...]) -> list[str]:
    """One line per scenario with the CPU of process kinds the table has no column for (the
    cluster's balancer, pooler, broker), so the table keeps its shape."""
    lines = []
    for r in results:
        share = cpu.get(r.scenario, {})
        lines.append(f"    {r.scenario:<11} " + "  ".join(f"{group} {share.get(group, 0):.0f}%" for group in groups))
    return lines


def ratios(
    results: list[LoadResult],
    drain_seconds: float | None,
    *,
    hot_row: dict | None = None,
    drain: dict | None = None,
) -> list[dict]:
    by_name = {r.scenario: r for r in results}
    verdicts = []
    for name, top, bottom, minimum in RATIO_TARGETS:
        if top in by_name and bottom in by_name and by_name[bottom].rps:
            value = by_name[top].rps / by_name[bottom].rps
            verdicts.append(
                {
                    "name": name,
                    "value": round(value, 2),
                    "target": f">= {minimum}" if minimum is not None else "-",
                    "met": value >= minimum if minimum is not None else None,
                }
            )
    for scenario in DO_SECKILL:
        if scenario in by_name and by_name[scenario].latency_ms["p50"]:
            latency = by_name[scenario].latency_ms
            value = latency["p99"] / latency["p50"]
            verdicts.append(
                {
                    "name": f"{scenario} p99 / p50",
                    "value": round(value, 2),
                    "target": f"<= {TAIL_TARGET}",
                    "met": value <= TAIL_TARGET,
                }  # fmt: skip
            )
        # A burst's answers are of two kinds, a sold-out several times cheaper than an accepted
        # buy: over both, the median is one kind and the tail the other, so the tail is also
        # judged within each kind.
        kinds = by_name[scenario].latency_by_code_ms if scenario in by_name else {}
        for code, kind in kinds.items() if len(kinds) > 1 else ():
            if kind["p50"]:
                value = kind["p99"] / kind["p50"]
                verdicts.append(
                    {
                        "name": f"{scenario} p99 / p50, {_kind(code)} only ({kind['count']:.0f})",
                        "value": round(value, 2),
                        "target": f"<= {TAIL_TARGET}",
                        "met": value <= TAIL_TARGET,
                    }  # fmt: skip
                )
    # The open loop: each request kind's tail within its own median.
    for result in results:
        for kind, timing in result.latency_by_kind_ms.items():
            if timing["p50"]:
                value = timing["p99"] / timing["p50"]
                verdicts.append(
                    {
                        "name": f"{result.scenario} p99 / p50, {kind} ({timing['count']:.0f})",
                        "value": round(value, 2),
                        "target": f"<= {TAIL_TARGET}",
                        "met": value <= TAIL_TARGET,
                    }  # fmt: skip
                )
    if drain_seconds is not None:
        verdicts.append(
            {
                "name": "queue drain after the last burst request (s)",
                "value": round(drain_seconds, 2),
                "target": f"<= {DRAIN_TARGET_SECONDS}",
                "met": drain_seconds <= DRAIN_TARGET_SECONDS,
            }  # fmt: skip
        )
    rate, orders = (hot_row or {}).get("purchases_per_second"), (drain or {}).get("orders_per_second")
    if rate and orders:
        value = orders / rate
        verdicts.append(
            {
                "name": "writer orders/s / hot-row purchases/s",
                "value": round(value, 2),
                "target": f">= {WRITER_TARGET}",
                "met": value >= WRITER_TARGET,
            }  # fmt: skip
        )
    return verdicts


def figure_lines(*, hot_row: dict, drain: dict, memory: list[dict], profiles: dict[str, dict]) -> list[str]:
    """The figures beside the table: the hot row, the writer's drain, memory, the profile."""
    lines = []
    if hot_row:
        lines.append(
            f"\nsingle hot-row purchase rate ({hot_row['tool']}, {hot_row['clients']} clients, UPDATE + INSERT per"
            f" transaction): {hot_row['purchases_per_second']} purchases/s ({hot_row['purchases']} purchases"
            + (f", {hot_row['latency_ms']} ms each" if hot_row.get("latency_ms") else "")
            + ")"
        )
        lines.append(f"  CPU % of one core: {_split(hot_row['cpu_percent_of_one_core'])}")
    if drain:
        memory_per = drain["redis_bytes_per_1000_reservations"]
        lines += [
            f"\nthe order writer's drain: {drain['queued']} of {drain['units']} units"
            " reserved through the gate's service"
            f" at {drain['reservations_per_second']}/s ({drain['reserve_processes']} processes, writer paused),",
            f"  then {drain['orders_landed']} orders in PostgreSQL {drain['drain_seconds']} s after the writer"
            f" resumed: {drain['orders_per_second']} orders/s",
            f"  CPU % of one core while reserving: {_split(drain['cpu_percent_of_one_core']['reserving'])}"
            " (the reserving processes count in machine)",
            f"  CPU % of one core while draining:  {_split(drain['cpu_percent_of_one_core']['draining'])}",
            f"  Redis memory per 1,000 reservations: {memory_per['used_memory'] / 1024:.0f} KiB (INFO used_memory),"
            f" of which the sale's keys {memory_per['sale_keys'] / 1024:.0f} KiB"
            + (
                f" and the broker's messages {memory_per['broker_messages'] / 1024:.0f} KiB"
                if memory_per.get("broker_messages") is not None
                else ""
            ),
        ]
    if memory:
        lines.append("\nprocess memory, peak over the scenarios (RSS / USS = pages of its own, MB):")
        for kind in ("web", "celery"):
            entries = sorted((e for e in memory if e["kind"] == kind), key=lambda e: e["pid"])
            if entries:
                shown = ", ".join(f"{e['rss_mb']:.0f} / {e['uss_mb']:.0f}" for e in entries)
                lines.append(f"  {kind:<6} {len(entries)} processes (supervisor first): {shown}")
    for scenario, profile in profiles.items():
        lines.append(f"\nprofile of {scenario} ({profile['samples']} samples, {profile['svg']}), the heaviest frames:")
        lines += [f"  {share:5.1f}% self   {frame}" for frame, share in list(profile["self_percent"].items())[:6]]
    return lines


def _split(cpu: dict[str, float]) -> str:
    """The kinds in a fixed order; a deployment's own kinds (the cluster's haproxy, rabbitmq...)
    before "other" and "machine"."""
    known = ("web", "celery", "postgres", "redis")
    own = sorted(group for group in cpu if group not in (*known, "other", "machine"))
    order = (*known, *own, "other", "machine")
    return ", ".join(f"{group} {cpu[group]:.0f}%" for group in order if group in cpu)


def server_table(runs: list[dict]) -> str:
    """The server comparison: each server's floor and burst, and their ratios to the first
    server's floor, all from this one invocation."""
    base = None
    head = (
        f"{'server':<17} {'workers':>7} {'floor r/s':>9} {'p50':>6} {'p99':>6} {'burst r/s':>9} {'p50':>6} {'p99':>6}"
        f" {'burst/floor':>11} {'floor/ref':>9} {'burst/ref':>9} {'floor/core':>10} {'burst/core':>10}"
    )
    lines = [head, "-" * len(head)]
    for run in runs:
        by_name = {r["scenario"]: r for r in run["results"]}
        floor, burst = by_name.get("floor"), by_name.get("burst")
        if base is None and floor:
            base = floor["rps"]

        def cells(result):
            if not result:
                return f"{'-':>9} {'-':>6} {'-':>6}"
            return f"{result['rps']:>9.0f} {result['latency_ms']['p50']:>6.1f} {result['latency_ms']['p99']:>6.1f}"

        web = run["web_server"]
        ratio = f"{burst['rps'] / floor['rps']:.2f}" if floor and burst else "-"
        floor_ref = f"{floor['rps'] / base:.2f}" if floor and base else "-"
        burst_ref = f"{burst['rps'] / base:.2f}" if burst and base else "-"
        per_core = [
            f"{r['rps'] / (cpu[r['scenario']]['web'] / 100):.0f}"
            if r and cpu.get(r["scenario"], {}).get("web")
            else "-"
            for r, cpu in ((floor, run["cpu_percent_of_one_core"]), (burst, run["cpu_percent_of_one_core"]))
        ]
        lines.append(
            f"{web['server']:<17} {web['workers']:>3}x{web['threads']:<3} {cells(floor)} {cells(burst)}"
            f" {ratio:>11} {floor_ref:>9} {burst_ref:>9} {per_core[0]:>10} {per_core[1]:>10}"
        )
    lines.append(
        "  latencies in ms; ref = the first server's floor req/s; /core = req/s per core the web processes used"
        " (steadier than req/s when neighbours take CPU)"
    )
    return "\n".join(lines)


def ratio_lines(verdicts: list[dict]) -> str:
    return "\n".join(
        f"  {v['name']:<58} {v['value']:>7}   target {v['target']:<7}"
        f" {'' if v['met'] is None else 'met' if v['met'] else 'MISSED'}"
        for v in verdicts
    )


def save_json(path: Path, payload: dict) -> None:
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")


def chart(path: Path, results: list[LoadResult], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r.scenario for r in results]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    bars = left.bar(names, [r.rps for r in results], color="#3b7dd8")
    left.bar_label(bars, fmt="%.0f", fontsize=8)
    left.set_ylabel("requests / second")
    left.set_title("Throughput")
    width = 0.2
    positions = range(len(names))
    for offset, key, colour in ((-1.5, "p50", "#7fb77e"), (-0.5, "p95", "#f2c14e"), (0.5, "p99", "#f78154"),
                                (1.5, "max", "#8d5a97")):  # fmt: skip
        right.bar([p + offset * width for p in positions], [r.latency_ms[key] for r in results], width, label=key,
                  color=colour)  # fmt: skip
    right.set_xticks(list(positions), names)
    right.set_yscale("log")
    right.set_ylabel("latency, ms (log)")
    right.set_title("Latency")
    right.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    for axis in (left, right):
        axis.tick_params(axis="x", rotation=30)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
