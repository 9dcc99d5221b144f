"""The opening mix: what the shop's pages ask for around a sale's opening, per shopper-second.

`make record-opening` (lab.record_opening) records every request real browsers make while
shoppers wait for, press through and leave an opening; this module names each request's kind,
cuts the recording into phases and turns it into rates, kept in lab/data/opening_mix.json.
`make bench` (lab.bench.opening) replays those rates; the e2e test of the item page fails
when the page makes a kind the file does not hold, so a change to the pages' polling asks for
a new recording. It lives in tools as both the lab and e2e read it.

A kind is the URL pattern's route name as Django resolves the path ("seckill:state",
"item:page"), so a new URL is a new kind without a change here; the static files are
`static`, the scripts' catalog `jsi18n`, product images `media`. Phases, in seconds from the
opening (the sale's start):

- before: from the first page opened until the opening;
- opening: the first OPENING_SECONDS;
- after: from the sell-out (or the opening's end, if later) until the recording ends.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
MIX_PATH = ROOT / "lab" / "data" / "opening_mix.json"
PHASES = ("before", "opening", "after")
OPENING_SECONDS = 10.0
# Route names that read better under a short kind name of their own.
RENAMED = {"javascript-catalog": "jsi18n"}
# Query parameters that only defeat caches (the captcha's `t`): left out of a kind's template.
CACHE_BUSTERS = ("t",)


@dataclass(frozen=True)
class Hit:
    """One request a page made: `at` seconds from the opening; `group` is the sale's admission
    (first_come or draw); `session` / `ticket`: whether it carried the session cookie / the
    result ticket cookie; `template`: its path with the sale's id as {sale}, cache busters out."""

    at: float
    method: str
    kind: str
    shopper: int
    group: str
    session: bool
    ticket: bool
    status: int
    x_cache: str
    template: str

    @property
    def key(self) -> str:
        return f"{self.method} {self.kind}"


def kind_of(path: str) -> str:
    """The kind of a request to this shop's `path` (no query): the route name Django resolves
    it to, `static`, `media`, or `unrouted` for a path no pattern matches."""
    from django.conf import settings
    from django.urls import Resolver404, resolve

    if path.startswith(settings.STATIC_URL):
        return "static"
    if path.startswith(settings.MEDIA_URL):
        return "media"
    try:
        name = resolve(path).view_name
    except Resolver404:
        return "unrouted"
    return RENAMED.get(name, name)


def template_of(url: str, sale_id: int) -> str:
    """`url`'s path and query with the sale's id as {sale} and the cache busters left out."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in CACHE_BUSTERS]
    text = parts.path + ("?" + urlencode(query, safe="{}") if query else "")
    return re.sub(rf"(?<![0-9]){sale_id}(?![0-9])", "{sale}", text)


def phase_of(at: float, *, sold_out_at: float | None) -> str | None:
    """The phase a request `at` seconds from the opening falls in; None between the opening's
    end and a later sell-out."""
    if at < 0:
        return "before"
    if at < OPENING_SECONDS:
        return "opening"
    if sold_out_at is not None and at >= sold_out_at:
        return "after"
    return None


def phase_spans(*, first_at: float, sold_out_at: float | None, end_at: float) -> dict[str, tuple[float, float]]:
    """Each phase's (start, end) in seconds from the opening; a phase that did not happen is absent."""
    spans = {"before": (first_at, 0.0), "opening": (0.0, min(OPENING_SECONDS, end_at))}
    if sold_out_at is not None:
        spans["after"] = (max(OPENING_SECONDS, sold_out_at), end_at)
    return {name: span for name, span in spans.items() if span[1] > span[0]}


def shopper_seconds(opened: dict[int, float], span: tuple[float, float]) -> float:
    """Seconds shoppers had a page open within `span`: each from `opened` (their first
    request) until the recording's end, which no span passes."""
    start, end = span
    return sum(max(0.0, end - max(start, at)) for at in opened.values())


def mix(hits: list[Hit], *, sold_out_at: float | None, end_at: float) -> dict:
    """The mix of `hits` in each phase, for all shoppers and per group: seconds, shoppers,
    shopper-seconds, requests per shopper-second by "METHOD kind", the raw counts, how many
    carried the session / ticket, statuses, X-Cache answers; and each kind's template when
    it is one URL for every shopper of a sale (the bench can then build it from a sale id)."""
    groups = {"all": hits}
    for group in sorted({hit.group for hit in hits}):
        groups[group] = [hit for hit in hits if hit.group == group]
    made = {}
    for group, chosen in groups.items():
        opened: dict[int, float] = {}
        for hit in sorted(chosen, key=lambda h: h.at):
            opened.setdefault(hit.shopper, hit.at)
        if not opened:
            continue
        spans = phase_spans(first_at=min(opened.values()), sold_out_at=sold_out_at, end_at=end_at)
        phases = {}
        for phase, span in spans.items():
            inside = [hit for hit in chosen if phase_of(hit.at, sold_out_at=sold_out_at) == phase and hit.at < end_at]
            exposure = shopper_seconds(opened, span)
            counts = Counter(hit.key for hit in inside)
            phases[phase] = {
                "seconds": round(span[1] - span[0], 2),
                "shoppers": sum(1 for at in opened.values() if at < span[1]),
                "shopper_seconds": round(exposure, 1),
                "per_shopper_second": {k: round(n / exposure, 5) for k, n in sorted(counts.items()) if exposure},
                "counts": dict(sorted(counts.items())),
                "with_session": _carried(inside, "session"),
                "with_ticket": _carried(inside, "ticket"),
                "statuses": _by_key(inside, lambda hit: str(hit.status)),
                "x_cache": _by_key(inside, lambda hit: hit.x_cache),
            }
        made[group] = {"shoppers": len(opened), "phases": phases}
    return {"groups": made, "templates": templates(hits)}


def templates(hits: list[Hit]) -> dict[str, str]:
    """ "METHOD kind" -> its one template, for the kinds every shopper asks by the same URL."""
    seen: dict[str, set[str]] = {}
    for hit in hits:
        seen.setdefault(hit.key, set()).add(hit.template)
    return {key: next(iter(found)) for key, found in sorted(seen.items()) if len(found) == 1}


def _carried(hits: list[Hit], field: str) -> dict[str, int]:
    counts = Counter(hit.key for hit in hits if getattr(hit, field))
    return dict(sorted(counts.items()))


def _by_key(hits: list[Hit], value) -> dict[str, dict[str, int]]:
    found: dict[str, Counter[str]] = {}
    for hit in hits:
        found.setdefault(hit.key, Counter())[value(hit)] += 1
    return {key: dict(sorted(counts.items())) for key, counts in sorted(found.items())}


def kinds(recorded: dict) -> set[str]:
    """Every "METHOD kind" the recording holds, in any group and phase."""
    return {
        key
        for group in recorded["groups"].values()
        for phase in group["phases"].values()
        for key in phase["per_shopper_second"]
    }


def load(path: Path = MIX_PATH) -> dict:
    return json.loads(path.read_text())


def hits_save(path: Path, hits: list[Hit]) -> None:
    path.write_text("".join(json.dumps(asdict(hit)) + "\n" for hit in hits))
