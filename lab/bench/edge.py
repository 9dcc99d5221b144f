"""`make bench ARGS=--edge`: the opening's scenarios through a real Varnish (deploy/edge.vcl,
started by tools/edge.py) in front of the bench's web server, and how many requests of each
kind got past it.

Three counts per scenario, each of its own kind:

- the edge's X-Cache answer per request kind, counted by the load generator (HIT, or STALE
  while the shop fails: the edge answered; MISS or PASS: the web server did, below or in
  Django);
- varnishstat's counters over the scenario (hits, misses, passes, backend requests), the
  edge's own total of the same;
- the request lines Django logged (RequestLogMiddleware, one per request that reached Django's
  handler) by the kind in their request id: what neither the edge nor the WSGI fast path
  (seckill.fastpath) answered.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

from tools.edge import edge_down, edge_up

# The scenarios driven through the edge with --edge; every other one goes to the web server as
# without it, so the ratios against `bare` and `floor` keep their meaning. The detail poll too:
# behind an edge the fast path leaves getDetails to it (seckill.fastpath), so without the edge
# that scenario would measure a deployment that does not exist.
EDGE_SCENARIOS = ("opening-mix", "result-poll", "opening-open", "detail-poll", "sale-state", "waiting-room")
# varnishstat's counters the report shows, by their short names.
COUNTERS = {
    "MAIN.client_req": "requests",
    "MAIN.cache_hit": "hits",
    "MAIN.cache_hit_grace": "grace hits",
    "MAIN.cache_miss": "misses",
    "MAIN.s_pass": "passes",
    "MAIN.backend_req": "backend requests",
    "MAIN.busy_sleep": "waited on a fetch",
}
# The most of a kind's requests that may reach Django, % (reported, never enforced): an item
# page is everybody's and the edge keeps it for minutes; an anonymous poll, a second at most.
REACH_TARGETS = (("page views", ("item_page",), 1.0), ("anonymous polls", ("goods_details", "api_detail"), 5.0))
# A Django request line's request id as the generators send it: bench-<line>-<kind>.
_KIND = re.compile(r'"request_id": "bench-\d+-(\w+)"')


class BenchEdge:
    """One varnishd for the run, its working directory under the run's."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.url: str | None = None

    def start(self, backend: str, env: dict[str, str]) -> str:
        """varnishd in front of `backend` (host:port; it need not answer yet), answering the
        ticketed result polls as the shop started with `env` would -> the edge's URL."""
        self.url = edge_up(self.directory, backend, answers=env)
        return self.url

    def stop(self) -> None:
        """Stop varnishd if it runs; safe to call twice and after a failed start."""
        edge_down(self.directory)
        self.url = None

    def counters(self) -> dict[str, int]:
        """The COUNTERS now, by their short names; empty when varnishstat cannot read them."""
        try:
            done = subprocess.run(["varnishstat", "-n", str((self.directory / "varnish").resolve()), "-1", "-j"],
                                  capture_output=True, text=True, timeout=10)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return {}
        return counters_read(done.stdout) if done.returncode == 0 else {}


def counters_read(text: str) -> dict[str, int]:
    """COUNTERS from `varnishstat -j` output (Varnish 6.5+: under "counters"; older: top level)."""
    try:
        raw = json.loads(text)
    except ValueError:
        return {}
    found = raw.get("counters", raw)
    return {short: int(found[name]["value"]) for name, short in COUNTERS.items() if name in found}


def counters_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {name: after[name] - before.get(name, 0) for name in after}


def log_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def django_lines_by_kind(path: Path, offset: int) -> dict[str, int]:
    """Request kind -> Django request lines logged in `path` after byte `offset` (a line whose
    request id names no kind is not counted)."""
    counts: Counter[str] = Counter()
    try:
        with open(path, "rb") as log:
            log.seek(offset)
            for raw in log:
                if b'"logger": "seckill.request"' not in raw or b'"path"' not in raw:
                    continue  # not a request line (the fast path's summary has no path)
                match = _KIND.search(raw.decode(errors="replace"))
                if match:
                    counts[match.group(1)] += 1
    except OSError:
        return {}
    return dict(sorted(counts.items()))


def edge_lines(facts: dict[str, dict]) -> list[str]:
    """The report's lines: per scenario, per request kind, how many answers the edge gave and
    how many requests reached the web server and Django."""
    lines = []
    for scenario, scenario_facts in facts.items():
        lines.append(f"\n{scenario}: requests of each kind, and how far they got (X-Cache counted by the generator,"
                     " Django's request lines):")  # fmt: skip
        django = scenario_facts.get("django_by_kind", {})
        for kind, answers in scenario_facts.get("by_kind", {}).items():
            total = sum(answers.values())
            hits = answers.get("HIT", 0) + answers.get("STALE", 0)
            reached = django.get(kind, 0)
            cells = " ".join(f"{answer}:{count}" for answer, count in sorted(answers.items()))
            lines.append(f"  {kind:<11} {total:>7}  {cells:<34} past the edge {_share(total - hits, total):>7},"
                         f" Django {reached:>6} = {_share(reached, total)}")  # fmt: skip
        if scenario_facts.get("varnishstat"):
            shown = ", ".join(f"{name} {value}" for name, value in scenario_facts["varnishstat"].items())
            lines.append(f"  varnishstat over the scenario: {shown}")
    return lines


def verdicts(facts: dict[str, dict]) -> list[dict]:
    """Per scenario with kinds, the share of its page views and anonymous polls that reached
    Django, against REACH_TARGETS, in report.ratios' form."""
    found = []
    for scenario, scenario_facts in facts.items():
        by_kind, django = scenario_facts.get("by_kind", {}), scenario_facts.get("django_by_kind", {})
        for name, kinds, most in REACH_TARGETS:
            total = sum(sum(by_kind.get(kind, {}).values()) for kind in kinds)
            if not total:
                continue
            share = 100 * sum(django.get(kind, 0) for kind in kinds) / total
            where = "via the edge" if scenario_facts.get("via_edge") else "no edge"
            found.append({"name": f"{scenario} ({where}): {name} reaching Django, %", "value": round(share, 2),
                          "target": f"<= {most:g}", "met": share <= most})  # fmt: skip
    return found


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"
