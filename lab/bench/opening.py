"""The bench's opening mix, made from the recorded one (lab/data/opening_mix.json, written by
`make record-opening`; tools.opening_mix).

An opening as the bench replays it is PHASE_SECONDS of each phase: a few minutes' wait with the
page open, the first seconds, then the time after the sell-out. Each recorded kind weighs its
rate per shopper-second times its phase's seconds, so the replayed requests are in the
proportions one shopper's opening has them. Each (phase, kind) becomes concrete requests through
a builder (lab.bench.scenarios names them: sessions, tickets, one-time paths, order numbers);
a kind whose URL is the same for every shopper of a sale is built from its recorded template.
A kind nothing can build fails the scenario (`Unbuildable`): it is never dropped in silence,
which would replay an opening lighter than the pages make.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from lab.bench.load import Request

# Seconds of each phase in the opening the bench replays.
PHASE_SECONDS = {"before": 180.0, "opening": 10.0, "after": 30.0}
# The recording's group replayed: every shopper, first come and draw alike.
GROUP = "all"

Builder = Callable[[str, int], Request]  # (phase, request number) -> the request
# The statuses of a request the shop cannot answer as asked: a replayed kind answered so is a violation.
REFUSALS = ("400", "404")


class Unbuildable(RuntimeError):
    """A recorded kind the bench has no way to make requests of."""


def kind_word(key: str) -> str:
    """The Request.kind of a "METHOD kind" key: "GET seckill:state" -> "seckill_state",
    "POST seckill:do" -> "post_seckill_do" (a word, as the request id carries it)."""
    method, _sep, kind = key.partition(" ")
    word = re.sub(r"\W+", "_", kind).strip("_")
    return word if method == "GET" else f"{method.lower()}_{word}"


def weights(recorded: dict, *, seconds: dict[str, float] = PHASE_SECONDS, group: str = GROUP) -> dict:
    """(phase, "METHOD kind") -> requests one shopper makes of it in an opening of `seconds`."""
    phases = recorded["groups"][group]["phases"]
    return {
        (phase, key): rate * seconds[phase]
        for phase, facts in phases.items()
        if phase in seconds
        for key, rate in facts["per_shopper_second"].items()
        if rate > 0
    }


def plan(weighed: dict, *, size: int, seed: int = 25) -> list[tuple[str, str]]:
    """`size` (phase, key) steps in the proportions of `weighed` (largest remainder), each
    weighed kind at least once, shuffled with `seed`."""
    total = sum(weighed.values())
    if not total:
        raise Unbuildable("the recorded opening mix holds no requests")
    size = max(size, len(weighed))
    exact = {step: size * weight / total for step, weight in weighed.items()}
    counts = {step: max(1, int(value)) for step, value in exact.items()}
    short = size - sum(counts.values())
    for step in sorted(exact, key=lambda s: exact[s] - int(exact[s]), reverse=True)[: max(0, short)]:
        counts[step] += 1
    steps = [step for step in sorted(counts) for _ in range(counts[step])]
    random.Random(seed).shuffle(steps)
    return steps


def shares(recorded: dict, field: str, *, group: str = GROUP) -> dict[str, float]:
    """ "METHOD kind" -> the share of its recorded requests that carried `field` ("with_session",
    "with_ticket") over every phase."""
    carried: dict[str, int] = {}
    counts: dict[str, int] = {}
    for facts in recorded["groups"][group]["phases"].values():
        for key, count in facts["counts"].items():
            counts[key] = counts.get(key, 0) + count
            carried[key] = carried.get(key, 0) + facts[field].get(key, 0)
    return {key: carried.get(key, 0) / count for key, count in counts.items() if count}


def requests_made(steps: list[tuple[str, str]], builders: dict[str, Builder]) -> list[Request]:
    """The requests of `steps`, each named by its kind; Unbuildable names every key no builder makes."""
    missing = sorted({key for _phase, key in steps if key not in builders})
    if missing:
        raise Unbuildable(f"the bench cannot build the recorded kinds {missing}: add a builder in lab.bench.scenarios")
    made = []
    for number, (phase, key) in enumerate(steps):
        request = builders[key](phase, number)
        made.append(Request(request.method, request.path, request.session, request.csrf, request.body,
                            request.token, request.cookies, kind=kind_word(key)))  # fmt: skip
    return made


def refused_kinds(statuses_by_kind: dict[str, dict[str, int]], *, expected: dict[str, set[str]]) -> dict:
    """Kind -> its REFUSALS answers (404, 400) that kind is not `expected` (kind -> statuses)
    to get: such a kind's requests ask what no page asks (another sale's URL, a missing id),
    and the mix would measure the shop saying so instead of the answer the pages get."""
    found = {}
    for kind, statuses in sorted(statuses_by_kind.items()):
        wrong = {status: n for status, n in sorted(statuses.items())
                 if status in REFUSALS and status not in expected.get(kind, set()) and n}  # fmt: skip
        if wrong:
            found[kind] = wrong
    return found


def django_per_shopper_minute(recorded: dict, django_share: dict[str, float], *, group: str = GROUP) -> dict:
    """Per phase, the requests a shopper's pages send that reach Django, a minute: each kind's
    recorded rate x the share of it the bench saw reach Django (`django_share`, by kind word) x 60."""
    found = {}
    for phase, facts in recorded["groups"][group]["phases"].items():
        found[phase] = round(
            sum(rate * django_share.get(kind_word(key), 0.0) for key, rate in facts["per_shopper_second"].items()) * 60,
            2,
        )
    return found


def kind_rows(facts: dict[str, dict], recorded: dict) -> dict:
    """Per kind: req/s closed-loop (opening-mix) and open-loop (opening-open), the open loop's
    p50/p99, and the shares of the closed loop's requests the edge answered (X-Cache HIT), the
    web server below Django (the fast path: neither a HIT nor a Django request line) and Django;
    then Django's requests per shopper-minute in each recorded phase. `facts`: scenario ->
    {"seconds", "by_kind" (X-Cache counts), "django_by_kind", "latency_by_kind_ms"}."""
    closed, open_loop = facts.get("opening-mix"), facts.get("opening-open")
    base = closed or open_loop
    if base is None:
        return {}
    rows, django_share = {}, {}
    for kind in sorted(base["by_kind"]):
        answers = base["by_kind"][kind]
        total = sum(answers.values())
        hits = answers.get("HIT", 0)
        django = min(base["django_by_kind"].get(kind, 0), total - hits)
        django_share[kind] = django / total if total else 0.0
        latency = (open_loop or {}).get("latency_by_kind_ms", {}).get(kind, {})
        rows[kind] = {
            "rps_closed": _rate(closed, kind),
            "rps_open": _rate(open_loop, kind),
            "p50_ms_open": latency.get("p50"),
            "p99_ms_open": latency.get("p99"),
            "edge_share": round(hits / total, 4) if total else None,
            "fast_path_share": round((total - hits - django) / total, 4) if total else None,
            "django_share": round(django_share[kind], 4),
        }
    return {"by_kind": rows, "django_per_shopper_minute": django_per_shopper_minute(recorded, django_share)}


def kind_lines(rows: dict) -> list[str]:
    """kind_rows as the report's lines."""
    if not rows:
        return []
    lines = ["\nthe opening mix by kind (lab/data/opening_mix.json): req/s closed / open loop, p50 / p99 ms open"
             " loop, answered by the edge / the fast path / Django:"]  # fmt: skip
    for kind, row in rows["by_kind"].items():
        tail = "/".join("-" if row[k] is None else f"{row[k]:.1f}" for k in ("p50_ms_open", "p99_ms_open"))
        rates = "/".join("-" if row[k] is None else f"{row[k]:.0f}" for k in ("rps_closed", "rps_open"))
        shares = " / ".join(f"{100 * row[k]:5.1f} %" for k in ("edge_share", "fast_path_share", "django_share"))
        lines.append(f"  {kind:<26} {rates:>11} req/s  {tail:>13} ms  {shares}")
    per_minute = rows["django_per_shopper_minute"]
    lines.append("  Django requests per shopper-minute, by recorded phase: "
                 + ", ".join(f"{phase} {value:g}" for phase, value in per_minute.items()))  # fmt: skip
    return lines


def _rate(facts: dict | None, kind: str) -> float | None:
    if not facts or not facts["seconds"]:
        return None
    return round(sum(facts["by_kind"].get(kind, {}).values()) / facts["seconds"], 1)
