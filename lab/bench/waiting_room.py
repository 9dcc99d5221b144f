"""`make bench`'s waiting-room opening (scenario `waiting-room`; through Varnish with --edge):
a crowd ten times what the room admits over the window arrives at a sale whose room is on, and
every shopper does what the waiting page and the item page do (docs/waiting-room.md):

- polls `/waiting-room/<sale>/status` every `refreshSeconds` (static/js/waiting.js), the first
  poll through Django (it sets the wait ticket), the next ones answered below it;
- once admitted (the poll sets the pass), draws the captcha, exchanges its answer for the path
  and buys, as the item page's script does, and stops polling.

Each request is timed from when it was due (an open loop: a slow shop shows as latency, not as
fewer requests), and names its kind in its request id, so the Django request lines of each kind
are counted (lab.bench.edge). The figures: shoppers admitted and what they bought, the Django
requests per admitted shopper, and each kind's p50 / p99 against the tail target
(lab.bench.report.TAIL_TARGET) while the crowd waits.
"""

from __future__ import annotations

import gc
import heapq
import json
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import requests

from lab.bench.load import latency_summary
from lab.bench.report import TAIL_TARGET

CROWD_FACTOR = 10  # shoppers arriving per shopper the room admits over the window
ARRIVAL_SECONDS = 5.0  # the crowd's first polls are spread over this: page loads, not one instant
# The request ids' kinds, in a shopper's order: the first poll (no wait ticket yet: Django sets
# it), the next ones, then the admitted shopper's captcha, path and buy.
KINDS = ("wr_join", "wr_status", "wr_captcha", "wr_path", "wr_buy")


def crowd_size(admit_per_minute: int, window_seconds: float, factor: int = CROWD_FACTOR) -> int:
    """How many shoppers arrive: `factor` times those the room lets in over the window."""
    return max(1, round(factor * admit_per_minute * window_seconds / 60))


@dataclass(frozen=True)
class Call:
    kind: str
    due: float  # time.monotonic() when the page would have sent it
    seconds: float  # from `due` until the answer
    late: float  # from `due` until it was sent: the generator's own delay, inside `seconds`
    status: int  # HTTP status, 0: no answer
    code: str  # the envelope's code, "none" for a picture or no JSON
    cache: str  # the edge's X-Cache ("none" without an edge)


@dataclass
class Shopper:
    user_id: int
    cookie: str  # the session's and CSRF's cookies, as lab.shopper.Shopper.cookie
    csrf: str
    extra: dict[str, str] = field(default_factory=dict)  # cookies the shop set: wait ticket, pass
    admitted_at: float | None = None
    bought: str = ""  # the buy's envelope code

    def cookies(self) -> str:
        return "; ".join([self.cookie, *(f"{name}={value}" for name, value in self.extra.items())])


def kind_figures(calls: list[Call]) -> dict[str, dict]:
    """Per kind: count, p50 / p99 / max (ms, from when due, nearest rank as lab.bench.load's),
    answers (status / code), the edge's X-Cache, and the p99 of the generator's own delay."""
    figures = {}
    for kind in KINDS:
        mine = [call for call in calls if call.kind == kind]
        if not mine:
            continue
        summary = latency_summary([round(1_000_000 * call.seconds) for call in mine])
        late = latency_summary([round(1_000_000 * call.late) for call in mine])
        figures[kind] = {
            "requests": len(mine),
            "p50_ms": round(summary["p50"], 1),
            "p99_ms": round(summary["p99"], 1),
            "max_ms": round(summary["max"], 1),
            "late_p99_ms": round(late["p99"], 1),
            "answers": dict(sorted(Counter(f"{call.status}/{call.code}" for call in mine).items())),
            "edge": dict(sorted(Counter(call.cache for call in mine).items())),
        }
    return figures


def verdicts(facts: dict) -> list[dict]:
    """The waiting room's figures in lab.bench.report's verdict form: each kind's p99 / p50 against
    TAIL_TARGET, and the Django requests per admitted shopper (reported only)."""
    found = []
    for kind, figures in facts.get("kinds", {}).items():
        if figures["p50_ms"] > 0:
            ratio = round(figures["p99_ms"] / figures["p50_ms"], 2)
            found.append({"name": f"waiting-room: {kind} p99 / p50 while the crowd waits", "value": ratio,
                          "target": f"<= {TAIL_TARGET}", "met": ratio <= TAIL_TARGET})  # fmt: skip
    per = facts.get("django_per_admitted")
    if per is not None:
        found.append({"name": "waiting-room: Django requests per admitted shopper", "value": per, "target": "-",
                      "met": True})  # fmt: skip
    return found


def django_per_admitted(django_by_kind: dict[str, int], admitted: int) -> float | None:
    """Every request of the scenario that reached Django, the crowd's polls included, over the
    shoppers admitted: what letting one shopper in cost Django."""
    if not admitted:
        return None
    return round(sum(django_by_kind.get(kind, 0) for kind in KINDS) / admitted, 2)


class Crowd:
    """The crowd's polls and the admitted shoppers' buys, THREADS requests in flight at most."""

    THREADS = 32

    def __init__(self, base_url: str, sale_id: int, shoppers: list[Shopper], *, window: float,
                 answer: Callable[[int], int]) -> None:  # fmt: skip
        self.base_url, self.sale_id, self.shoppers = base_url, sale_id, shoppers
        self.window, self.answer = window, answer
        self.calls: list[Call] = []
        self._numbers = iter(range(1, 10**9))
        self._lock = threading.Lock()
        self._local = threading.local()

    def _http(self) -> requests.Session:
        http = getattr(self._local, "http", None)
        if http is None:
            http = self._local.http = requests.Session()
        return http

    def _ask(
        self, shopper: Shopper, kind: str, due: float, method: str, path: str, **options
    ) -> requests.Response | None:
        with self._lock:
            number = next(self._numbers)
        sent = time.monotonic()
        headers = {"Cookie": shopper.cookies(), "Accept": "application/json", "X-Requested-With": "XMLHttpRequest",
                   "X-Request-ID": f"bench-{number}-{kind}"}  # fmt: skip
        if method == "POST":
            headers["X-CSRFToken"] = shopper.csrf
        try:
            response = self._http().request(method, f"{self.base_url}{path}", headers=headers, timeout=30, **options)
        except requests.RequestException:
            response = None
        code = "none"
        if response is not None and response.headers.get("Content-Type", "").startswith("application/json"):
            try:
                code = str(response.json().get("code"))
            except ValueError:
                pass
        call = Call(kind, due, time.monotonic() - due, sent - due, response.status_code if response is not None else 0,
                    code, response.headers.get("X-Cache", "none") if response is not None else "none")  # fmt: skip
        with self._lock:
            self.calls.append(call)
        if response is not None:
            shopper.extra.update({name: value for name, value in response.cookies.items()})
        return response

    def _step(self, index: int, due: float, end: float) -> float | None:
        """One thing the shopper's page does when due; when the next is due, None when done."""
        shopper = self.shoppers[index]
        if shopper.admitted_at is not None:
            self._buy(shopper, due)
            return None
        kind = "wr_status" if f"seckill_wait_{self.sale_id}" in shopper.extra else "wr_join"
        response = self._ask(shopper, kind, due, "GET", f"/waiting-room/{self.sale_id}/status")
        data = {}
        if response is not None and response.status_code == 200:
            try:
                data = response.json().get("data") or {}
            except ValueError:
                data = {}
        state = data.get("state")
        if state == "admitted" and f"seckill_pass_{self.sale_id}" in shopper.extra:
            shopper.admitted_at = time.monotonic()
            return time.monotonic()
        if state in ("sold_out", "ended", "expired", "off"):
            return None
        following = due + float(data.get("refreshSeconds") or 5)
        return following if following < end else None

    def _buy(self, shopper: Shopper, due: float) -> None:
        """The item page's captcha, path and buy, one after the other, each due as the last answered."""
        query = {"goodsId": self.sale_id}
        drawn = self._ask(shopper, "wr_captcha", due, "GET", "/seckill/verifyCode", params=query)
        if drawn is None or drawn.status_code != 200:
            shopper.bought = "no captcha"
            return
        answer = self.answer(shopper.user_id)  # the person reads the picture
        due = time.monotonic()
        made = self._ask(shopper, "wr_path", due, "GET", "/seckill/path", params={**query, "verifyCode": answer})
        path = None
        if made is not None and made.status_code == 200:
            try:
                path = made.json().get("data")
            except ValueError:
                path = None
        if not isinstance(path, str):
            shopper.bought = "no path"
            return
        due = time.monotonic()
        bought = self._ask(shopper, "wr_buy", due, "POST", f"/seckill/{path}/doSeckill", data=query)
        try:
            shopper.bought = str(bought.json().get("code")) if bought is not None else "no answer"
        except ValueError:
            shopper.bought = f"HTTP {bought.status_code}"

    def _collected(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._collecting = time.perf_counter()
        elif self._collecting is not None:
            self.gc_pauses.append(time.perf_counter() - self._collecting)
            self._collecting = None

    def run(self) -> float:
        """Every shopper arrives within ARRIVAL_SECONDS and polls until the window's end (or buys);
        the seconds it all took. The generator's heap so far (Django, the shoppers) is frozen
        out of its garbage collections, which would otherwise stall every thread for tens of
        milliseconds and show as the shop's latency; the pauses left are kept in `gc_pauses`."""
        self.gc_pauses: list[float] = []
        self._collecting: float | None = None
        gc.collect()
        gc.freeze()
        gc.callbacks.append(self._collected)
        try:
            return self._run()
        finally:
            gc.callbacks.remove(self._collected)
            gc.unfreeze()

    def _run(self) -> float:
        started = time.monotonic()
        end = started + self.window
        spread = ARRIVAL_SECONDS / max(len(self.shoppers), 1)
        due = [(started + index * spread, index) for index in range(len(self.shoppers))]
        heapq.heapify(due)
        done: queue.Queue[tuple[float, int]] = queue.Queue()
        running = 0

        def finished(index: int, future) -> None:
            following = future.result()
            done.put((following if following is not None else -1.0, index))

        with ThreadPoolExecutor(self.THREADS) as pool:
            while due or running:
                while not done.empty():
                    following, index = done.get()
                    running -= 1
                    if following >= 0:
                        heapq.heappush(due, (following, index))
                now = time.monotonic()
                while due and due[0][0] <= now and running < 4 * self.THREADS:
                    at, index = heapq.heappop(due)
                    running += 1
                    pool.submit(self._step, index, at, end).add_done_callback(
                        lambda future, index=index: finished(index, future)
                    )
                time.sleep(0.005 if not due else min(0.02, max(0.0, due[0][0] - time.monotonic())))
        return time.monotonic() - started


class WaitingRoomOpening:
    """Mixed into lab.bench.run.Bench: the `waiting-room` scenario."""

    ADMIT_PER_MINUTE = 60
    WINDOW_SECONDS = 60.0

    def waiting_room(self) -> None:
        from lab import prepare
        from lab.bench import edge
        from lab.bench.measure import log
        from lab.shopper import captcha_read
        from seckill.selectors import captcha_pool_size
        from seckill.services import paths as seckill_paths
        from waitingroom.models import WaitingRoom
        from waitingroom.services import room_settings_save

        wanted = crowd_size(self.ADMIT_PER_MINUTE, self.WINDOW_SECONDS)
        crowd = self.shoppers[:wanted]
        sale = prepare.sale_create(name="waiting-room", units=len(crowd))
        self.sales.extra.append(sale.pk)
        room = WaitingRoom(sale=sale, enabled=True, admit_per_minute=self.ADMIT_PER_MINUTE, pass_minutes=10)
        room_settings_save(room=room, actor_name="bench")
        via_edge = self.edge is not None and "waiting-room" in edge.EDGE_SCENARIOS
        base_url = self.edge.url if via_edge else self.deployment.url
        log(f"waiting-room: {len(crowd)} shoppers ({CROWD_FACTOR} x {self.ADMIT_PER_MINUTE}/min over"
            f" {self.WINDOW_SECONDS:.0f} s) at sale #{sale.pk}'s room, polling as the page does"
            + (" through the edge" if via_edge else ""))  # fmt: skip
        if len(crowd) < wanted:
            self.notes.append(f"waiting-room: {len(crowd)} shoppers of the {wanted} wanted (--users)")
        # Captchas drawn ahead, as `manage.py seckill_warm` leaves a shop before its sale and beat
        # keeps it: enough for everyone the room admits over the window, and as many again.
        seckill_paths.captcha_pool_clear()
        pooled = seckill_paths.captcha_pool_fill(size=2 * round(self.ADMIT_PER_MINUTE * self.WINDOW_SECONDS / 60))
        web_log = getattr(self.deployment, "log_dir", self.work) / "web.log"
        offset = edge.log_size(web_log)
        edge_before = self.edge.counters() if via_edge else {}
        cpu_before = self._cpu_mark()
        people = [Shopper(s.user_id, s.cookie, s.csrf) for s in crowd]
        run = Crowd(base_url, sale.pk, people, window=self.WINDOW_SECONDS,
                    answer=lambda user_id: captcha_read(sale_id=sale.pk, user_id=user_id))  # fmt: skip
        seconds = run.run()
        cpu = self._cpu_split(cpu_before, seconds)
        pool_left = captcha_pool_size()
        seckill_paths.captcha_pool_clear()
        calls_write(self.work / "waiting-room-calls.jsonl", run.calls)
        django = {kind: count for kind, count in edge.django_lines_by_kind(web_log, offset).items() if kind in KINDS}
        admitted = sum(p.admitted_at is not None for p in people)
        kinds = kind_figures(run.calls)
        facts = {
            "sale": sale.pk, "shoppers": len(people), "admit_per_minute": self.ADMIT_PER_MINUTE,
            "window_seconds": self.WINDOW_SECONDS, "seconds": round(seconds, 1), "via_edge": via_edge,
            "admitted": admitted, "bought": dict(Counter(p.bought for p in people if p.admitted_at is not None)),
            "kinds": kinds, "django_by_kind": django, "django_per_admitted": django_per_admitted(django, admitted),
            "cpu_percent_of_one_core": cpu,
            "captcha_pool": {"filled": pooled, "left": pool_left},
            "generator_gc": {"collections": len(run.gc_pauses),
                             "max_ms": round(1000 * max(run.gc_pauses, default=0.0), 1)},
        }  # fmt: skip
        self.waiting_facts = facts
        by_kind = {kind: figures["edge"] for kind, figures in kinds.items()}
        self.edge_facts["waiting-room"] = {"via_edge": via_edge, "by_kind": by_kind, "django_by_kind": django}
        if via_edge:
            self.edge_facts["waiting-room"]["varnishstat"] = edge.counters_delta(
                edge_before, self._edge_counters_settled()
            )
        log(f"waiting-room: {len(run.calls)} requests in {seconds:.1f} s; {admitted} admitted, bought"
            f" {facts['bought']}; Django requests per admitted shopper {facts['django_per_admitted']}")  # fmt: skip
        unanswered = sum(call.status == 0 or call.status >= 500 for call in run.calls)
        if unanswered:
            self.violations.append(f"waiting-room: {unanswered} requests unanswered or 5xx")


def calls_write(path: Path, calls: list[Call]) -> None:
    """Every call of the run, one JSON object a line, `due` in seconds from the first: the raw
    figures behind the report's, to find when and where a tail came from."""
    start = min((call.due for call in calls), default=0.0)
    with path.open("w") as out:
        for call in sorted(calls, key=lambda call: call.due):
            out.write(json.dumps({**asdict(call), "due": round(call.due - start, 4)}) + "\n")


def figure_lines(facts: dict) -> list[str]:
    """The report's lines for the waiting-room scenario."""
    if not facts:
        return []
    lines = [f"\nwaiting-room: {facts['shoppers']} shoppers at a room admitting {facts['admit_per_minute']}/min,"
             f" {facts['window_seconds']:.0f} s window ({'through the edge' if facts['via_edge'] else 'no edge'}):"
             f" {facts['admitted']} admitted, their buys {facts['bought']}; Django requests per admitted shopper"
             f" {facts['django_per_admitted']} ({facts['django_by_kind']})"]  # fmt: skip
    if "captcha_pool" in facts:
        pool = facts["captcha_pool"]
        lines.append(f"  captchas drawn ahead: {pool['filled']}, {pool['filled'] - pool['left']} of them taken")
    if "generator_gc" in facts:
        lines.append(f"  the generator's own garbage collections: {facts['generator_gc']['collections']},"
                     f" the longest {facts['generator_gc']['max_ms']} ms")  # fmt: skip
    for kind, figures in facts["kinds"].items():
        lines.append(f"  {kind:<10} {figures['requests']:>6}  p50 {figures['p50_ms']:>7.1f} ms  p99"
                     f" {figures['p99_ms']:>7.1f} ms  max {figures['max_ms']:>7.1f} ms  (sent late p99"
                     f" {figures['late_p99_ms']:.1f} ms)  {figures['answers']}"
                     f"  X-Cache {figures['edge']}")  # fmt: skip
    return lines
