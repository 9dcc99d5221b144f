"""`make fairness` over real HTTP: the opening replayed against a production-like deployment.

The deployment is tools/deploy.py's (the processes of tools/processes.py, as `make run` has
them): granian with the production settings (`lab.bench.settings`: production's, on
plain-http loopback), a Celery worker and Celery beat, on this process's PostgreSQL, Redis and
task queue. This process makes the shoppers' API tokens and the sales through the shop's own
services, then each shopper is an HTTP client of the API with a keep-alive connection of its own,
its steps run by a bounded pool of threads (lab.opening.Replay; by default one per shopper, so
no shopper's request waits in this process behind another's):

    GET  /api/v1/sales/<id>/captcha         the picture; its answer read from Redis (a person reads it
                                            off the picture, a script's OCR reads it right `--script-solve`
                                            of the time), typed right or wrong after the solving time
    POST /api/v1/sales/<id>/path            the answer for a one-time path (wrong: a new captcha)
    POST /api/v1/sales/<id>/buy/<path>      queued, entered in the draw, or a refusal (retried within
                                            the limits: Retry-After)
    GET  /api/v1/sales/<id>/result          polled until the order, "not drawn" or "failed"

The room's opening (`--modes room`) puts the sale behind its waiting room: a shopper's first
captcha, from the pre-queue on, is their arrival; they are told their place (429, code 500700)
and ask again every `poll` seconds until the room lets them in, which their ask then takes as
their pass (an API client holds no cookie). A refusal with no place after the start sends them
to the public status (`GET /waiting-room/<id>/status`), which says when the stock is gone.

Tokens, not the login form: the accounts are the scalper's and the crowd's, already logged in
before the opening, and 400 PBKDF2 logins at production strength would cost minutes of the
shared machine's CPU before anything is measured. The draw and the orders are the deployment's
own: its ETA task, beat's sweep or the first buy after the window draws, its worker writes.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import psutil
import requests
from requests.adapters import HTTPAdapter

from lab.fairness_unpaid import EXPIRE_SWEEP_S, OFFER_POLL_S, PAY_STEPS, Lapses, Payment
from lab.opening import Actor, Replay, RoomPlan, fairness_sale, outcome, reoffer_outcome, room_open, room_outcome
from lab.shopper import captcha_read
from orders.codes import OrderCode
from sales.codes import SaleCode
from seckill.codes import BuyCode
from seckill_site.codes import Code
from tools.net import logger
from users.codes import UserCode
from waitingroom.codes import WaitingCode

log = logger("fairness")
# How long one request may take before the client gives up on it and tries the step again (a
# person reloads); a bound, so a stuck server cannot hold the run past its timeout.
REQUEST_TIMEOUT_S = 10.0
# Seconds between two polls of /result (with up to RESULT_JITTER_S more, so the clients spread out).
RESULT_POLL_S, RESULT_JITTER_S = 1.0, 0.3


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Opening:
    """The deployment, the shoppers' tokens, and one opening replayed over HTTP per `run`."""

    def __init__(self, *, log_dir: Path, web_workers: int = 2, web_threads: int = 8, celery_concurrency: int = 2,
                 clients: int = 64, env: dict[str, str] | None = None) -> None:  # fmt: skip
        self.log_dir = log_dir
        self.web_workers, self.web_threads = web_workers, web_threads
        self.celery_concurrency = celery_concurrency
        self.clients = clients
        self.env = env or {}
        self.deployment = None
        self.tokens: dict[int, str] = {}

    def start(self, *, user_ids: list[int]) -> None:
        """Start the web server, the worker and beat (each answers before this returns), and
        give every shopper an API token, as /api/v1/users/login issues it."""
        from django.conf import settings

        from tools.deploy import Deployment
        from tools.processes import beat_command
        from users.tokens import api_token_issue

        self.log_dir.mkdir(parents=True, exist_ok=True)
        deployment = Deployment(log_dir=self.log_dir, celery_concurrency=self.celery_concurrency)
        deployment.ready_path = "/healthz"
        # One log line per request would cost the web workers CPU the shoppers are waiting for.
        # The unpaid opening's units come back through beat's expiry sweep: run it every second.
        deployment.env.update(
            REQUEST_LOG_LEVEL="WARNING", SECKILL_EXPIRE_SWEEP_SECONDS=str(EXPIRE_SWEEP_S), **self.env
        )  # fmt: skip
        self.deployment = deployment
        log(f"starting on {deployment.url}: a Celery worker -c {self.celery_concurrency}, beat, granian "
            f"{self.web_workers}x{self.web_threads} (logs: {self.log_dir})")  # fmt: skip
        deployment.start_celery(settings.CELERY_TASK_DEFAULT_QUEUE)
        schedule = self.log_dir / "celerybeat-schedule"
        schedule.unlink(missing_ok=True)
        deployment.processes.spawn("beat", beat_command(schedule))
        deployment.start_web(workers=self.web_workers, threads=self.web_threads)
        if not deployment.processes.running("beat"):
            raise RuntimeError(f"Celery beat exited; see {self.log_dir / 'beat.log'}")
        self.tokens = {user_id: api_token_issue(user_id=user_id) for user_id in user_ids}
        log(f"{len(self.tokens)} shoppers hold a token")

    def describe(self) -> str:
        return (
            f"deployment: granian {self.web_workers}x{self.web_threads} (lab.bench.settings), celery worker "
            f"-c {self.celery_concurrency}, celery beat; {self.clients} client threads; {os.cpu_count()} cores"
        )

    def stop(self) -> None:
        if self.deployment is not None:
            self.deployment.processes.halt_all(["web", "beat", "celery"])

    def session(self, user_id: int) -> requests.Session:
        session = requests.Session()
        session.mount("http://", HTTPAdapter(pool_connections=1, pool_maxsize=1, max_retries=0))
        session.headers.update({"Authorization": f"Token {self.tokens[user_id]}", "Accept": "application/json"})
        return session

    def run(
        self, *, mode: str, actors: list[Actor], units: int, window: int, timeout: float, room: RoomPlan | None = None
    ) -> dict:
        from sales import sale_state
        from seckill.selectors import captcha_pool_size
        from seckill.services import paths
        from seckill_site.redis import now as redis_now
        from tools.deploy import cpu_snapshot

        # As `manage.py seckill_warm` does before a sale: captchas drawn ahead, so the opening's
        # draws are taken, not drawn (SECKILL_CAPTCHA_POOL=0 in the environment: none).
        started = time.monotonic()
        drawn = paths.captcha_pool_fill()
        log(f"captcha pool: {drawn} drawn in {time.monotonic() - started:.1f} s, {captcha_pool_size()} ready")
        sale = fairness_sale(mode=mode, units=units, window=window, opening=room.lead + 2.0 if room else 3.0)
        if room is not None:
            room_open(sale=sale, opens_before=room.lead, admit_per_minute=room.admit_per_minute)
        t0 = sale.start_at.timestamp()
        replay = Replay(t0=t0, timeout=timeout, clock=redis_now, workers=self.clients)
        api = f"{self.deployment.url}/api/v1/sales/{sale.pk}"
        lapses = Lapses(sale_id=sale.pk, now=replay.now) if mode == "unpaid" else None
        shoppers = {a.user_id: Steps(actor=a, session=self.session(a.user_id), api=api, sale_id=sale.pk,
                                       replay=replay, site=self.deployment.url, lapses=lapses)
                    for a in actors}  # fmt: skip
        for actor in actors:
            replay.push(actor, actor.start, "captcha")

        ours = {pid: name for name in self.deployment.processes for pid in self.deployment.pids(name)}
        ours[os.getpid()] = "driver"  # (its children are the deployment's processes, named above)
        cpu_before, machine_before = cpu_snapshot(ours), psutil.cpu_times()
        first = min((actor.start for actor in actors), default=0.0)
        time.sleep(max(0.0, t0 + min(0.0, first) - redis_now() - 0.5))  # the deployment idles until then
        started = time.monotonic()
        if lapses is not None:
            lapses.start()
        try:
            replay.run(lambda actor, step: shoppers[actor.user_id].step(step))
        finally:
            if lapses is not None:
                lapses.stop()
        ran = time.monotonic() - started
        cpu = cpu_used(cpu_before, cpu_snapshot(ours))
        busy = machine_busy(machine_before, psutil.cpu_times())
        load = os.getloadavg()[0]
        # The orders are the worker's: wait (bounded) until no reservation is left to write.
        deadline = time.monotonic() + 30
        while sale_state.reservations_count([sale.pk])[sale.pk] and time.monotonic() < deadline:
            time.sleep(0.2)
        for shopper in shoppers.values():
            shopper.session.close()
        returned = lapses.returned() if lapses is not None else []
        result = outcome(sale_id=sale.pk, actors=actors, units=units, returned=len(returned))
        latencies = [ms for shopper in shoppers.values() for ms in shopper.latencies]
        buys = [ms for shopper in shoppers.values() for ms in shopper.buy_latencies]
        errors = sum(shopper.errors for shopper in shoppers.values())
        lags = [lag * 1000 for lag in replay.lags]
        seen = sum(1 for a in actors if a.outcome == "ordered")
        waits = [shopper.waited for shopper in shoppers.values() if not shopper.actor.script and shopper.bought]
        result["context"] = (
            f"{len(latencies)} requests in {ran:.1f} s, {errors} failed; latency ms p50 "
            f"{percentile(latencies, 0.5):.0f} p95 {percentile(latencies, 0.95):.0f} p99 "
            f"{percentile(latencies, 0.99):.0f} max {max(latencies, default=0):.0f} (buy p50 "
            f"{percentile(buys, 0.5):.0f} p99 {percentile(buys, 0.99):.0f}); steps late ms p50 "
            f"{percentile(lags, 0.5):.0f} p99 {percentile(lags, 0.99):.0f} max {max(lags, default=0):.0f}; "
            f"people's wait for answers before their buy s p50 {percentile(waits, 0.5):.1f} p95 "
            f"{percentile(waits, 0.95):.1f}; clients saw {seen} orders; "
            f"machine {busy:.0%} busy, load {load:.1f}; CPU s "
            + ", ".join(
                f"{group} {cpu.get(group, 0.0):.1f}"
                for group in ("web", "celery", "beat", "driver", "postgres", "redis", "other")
            )  # fmt: skip
        )
        if room is not None:
            result |= room_outcome(sale_id=sale.pk, actors=actors)
        if lapses is not None:
            result |= reoffer_outcome(sale_id=sale.pk, returned=returned) | unpaid_figures(sale_id=sale.pk)
            result["after_return"] = sum((shopper.after_return for shopper in shoppers.values()), Counter())
        result["errors"] = errors
        result["buy_answers"] = sum((shopper.buy_answers for shopper in shoppers.values()), Counter())
        return result


def unpaid_figures(*, sale_id: int) -> dict:
    """The unpaid opening's payments, from PostgreSQL: the sale's orders paid, and of them the
    offers' (units that came back, paid by the entrant they were offered to)."""
    from orders.models import PAID_STATUSES, Order
    from sales.models import OfferOutcome, SaleDrawOffer

    paid = Order.objects.filter(sale_id=sale_id, status__in=PAID_STATUSES).count()
    offers_paid = SaleDrawOffer.objects.filter(draw__sale_id=sale_id, outcome=OfferOutcome.PAID).count()
    return {"paid": paid, "offers_paid": offers_paid}


class Steps:
    """One shopper's steps through the API over its own keep-alive connection and token. Each
    step is one request; its answer decides the next step and when (Replay.push). A shopper has
    one step pending at a time, so its connection is never used by two threads at once.

    In the unpaid opening (`lapses`) a winner pays their order (lab.fairness_unpaid.Payment)
    unless they are one who lets the window pass; a person who was not drawn asks every
    OFFER_POLL_S whether a unit was offered to them (then pays it), and a script keeps buying
    (asking as often), until the opening is settled."""

    def __init__(
        self, *, actor: Actor, session: requests.Session, api: str, sale_id: int, replay: Replay, site: str = "",
        lapses: Lapses | None = None,
    ) -> None:  # fmt: skip
        self.actor, self.session, self.api, self.sale_id, self.replay = actor, session, api, sale_id, replay
        self.site = site
        self.lapses = lapses
        self.payment: Payment | None = None
        self.offer_poll_at = 0.0  # a script buying on: when it next asks for its result instead
        self.after_return: Counter[str] = Counter()  # a script's buys' answers once a unit came back
        self.answer: int | None = None  # what the shopper will type for the captcha on screen
        self.latencies: list[float] = []  # ms, every request
        self.buy_latencies: list[float] = []
        self.buy_answers: Counter[str] = Counter()  # the buys' answers by code name (HTTP status without one)
        self.errors = 0  # requests that failed (no answer in time, a 5xx the client did not expect)
        # Seconds spent waiting for answers until the first buy was answered: what HTTP added to
        # this shopper's way to the gate (a person's reaction and solving come on top).
        self.waited = 0.0
        self.bought = False

    def _request(self, method: str, url: str, **kwargs) -> requests.Response | None:
        started = time.monotonic()
        try:
            response = self.session.request(method, url, timeout=REQUEST_TIMEOUT_S, **kwargs)
        except requests.RequestException:
            self.errors += 1
            return None
        finally:
            self.latencies.append((time.monotonic() - started) * 1000)
            if not self.bought:
                self.waited += time.monotonic() - started
        return response

    def step(self, name: str) -> None:
        """One request, then the next step pushed at a time counted from its answer: a person
        starts solving once the picture is on screen, not when they asked for it."""
        actor, push = self.actor, self.replay.push
        if name in PAY_STEPS:
            assert self.payment is not None
            after = self.payment.step(name)
            if after is not None:
                push(actor, self.replay.now() + after[1], after[0])
        elif name == "captcha":
            response = self._request("GET", f"{self.api}/captcha")
            now = self.replay.now()
            if response is None or response.status_code >= 500:
                self.errors += response is not None
                push(actor, now + 0.5, "captcha")
            elif envelope(response)[0] == CODE["IN_WAITING_ROOM"]:  # in line: ask again, or is it over?
                placed = envelope(response)[1].get("position") is not None
                actor.arrived |= placed or now < 0  # (before the start: the pre-queue, placed at the start)
                if placed or now < 0:  # a person asks again when told (Retry-After), a script every second
                    push(actor, now + (actor.poll if actor.script else retry_after(response)), "captcha")
                else:  # no place after the start: the room may have ended the wait
                    push(actor, now, "status")
            elif response.status_code == 429:  # this sale's captchas a minute: wait as told
                push(actor, now + retry_after(response), "captcha")
            elif response.headers.get("Content-Type", "").startswith("image/png"):
                actor.arrived = True  # (behind a room: let in, so taken in line first)
                expected = captcha_read(sale_id=self.sale_id, user_id=actor.user_id)
                right = actor.rng.random() < actor.right
                self.answer = expected if right else wrong(expected)
                push(actor, now + actor.rng.uniform(*actor.solve), "path")
            else:
                raise RuntimeError(f"captcha: {response.status_code} {response.text[:200]}")
        elif name == "path":
            response = self._request("POST", f"{self.api}/path", json={"verifyCode": self.answer})
            now = self.replay.now()
            code, data = envelope(response)
            if response is None or response.status_code >= 500:
                self.errors += response is not None
                push(actor, now + 0.5, "path")
            elif code == 0:
                actor.path = data["path"]
                push(actor, now, "buy")
            elif response.status_code == 429:  # over the per-user or per-sale limit: the captcha waits
                push(actor, now + retry_after(response), "path")
            else:  # wrong (or expired) answer: a new captcha
                push(actor, now, "captcha")
        elif name == "buy":
            actor.tries += 1
            started = time.monotonic()
            response = self._request("POST", f"{self.api}/buy/{actor.path}")
            self.bought = True
            now = self.replay.now()
            self.buy_latencies.append((time.monotonic() - started) * 1000)
            code, data = envelope(response)
            self.buy_answers[answer_name(code, response)] += 1
            if self.lapses is not None and self.lapses.returned_at is not None and actor.script:
                self.after_return[answer_name(code, response)] += 1
            if response is None or response.status_code in (500, 502, 504):
                self.errors += response is not None
                push(actor, now + 0.5, "buy")
            elif code == CODE["SUCCESS"]:  # queued: the order is the worker's to write
                push(actor, now + RESULT_POLL_S, "result")
            elif code == CODE["ENTERED"]:  # the results come at the draw
                draw_at = float(data["drawAt"]) - self.replay.t0
                push(actor, max(now, draw_at) + actor.rng.uniform(0.2, 0.2 + RESULT_POLL_S), "result")
            elif code in (CODE["SOLD_OUT"], CODE["ENTRIES_CLOSED"], CODE["ALREADY_BOUGHT"]) or (
                code == CODE["ENDED"] and response.status_code == 200
            ):
                if self.buying_on(code):  # a unit may come back: a script tries again
                    push(actor, now + 0.2, "buy")
                    return
                if self.lapses is not None and not self.lapses.settled.is_set() and actor.script:
                    push(actor, now, "result")  # its turn to ask (or it holds one: offered)
                    return
                actor.outcome = {
                    CODE["SOLD_OUT"]: "sold out",
                    CODE["ENTRIES_CLOSED"]: "sold out",  # sold out after the draw
                    CODE["ALREADY_BOUGHT"]: "already bought",
                }.get(code, "ended")
            elif response.status_code == 429:
                push(actor, now + max(1, retry_after(response)), "buy")
            elif code in (CODE["DRAW_PENDING"], CODE["NOT_STARTED"]) or response.status_code == 503:
                push(actor, now + 0.2, "buy")  # the draw is being made, not open yet, busy: again
            else:  # the path was refused (expired, used): start over
                push(actor, now, "captcha")
        elif name == "status":  # the room's public figures: is the wait over?
            response = self._request("GET", f"{self.site}/waiting-room/{self.sale_id}/status")
            now = self.replay.now()
            state = envelope(response)[1].get("state")
            if state in ("sold_out", "ended"):
                actor.outcome = state
            else:
                push(actor, now + actor.poll, "captcha")
        elif name == "result":
            response = self._request("GET", f"{self.api}/result")
            now = self.replay.now()
            code, data = envelope(response)
            order_id = data.get("orderId") if code == 0 and isinstance(data, dict) else None
            if order_id is not None and order_id > 0 and self.lapses is not None:
                self.ordered(order_id, now)
            elif order_id is not None and order_id > 0:
                actor.outcome = "ordered"
            elif order_id in (-1, -3) and self.lapses is not None and not self.lapses.settled.is_set():
                if actor.script:  # buys on, asking again now and then
                    self.offer_poll_at = now + OFFER_POLL_S
                    push(actor, now + 0.2, "buy")
                elif order_id == -3:  # waits for a unit to be offered
                    push(actor, now + OFFER_POLL_S + actor.rng.uniform(0, RESULT_JITTER_S), "result")
                else:
                    actor.outcome = "failed"
            elif order_id == -3:
                actor.outcome = "not drawn"
            elif order_id == -1:
                actor.outcome = "failed"
            else:  # queued or entered (or no answer): ask again
                push(actor, now + RESULT_POLL_S + actor.rng.uniform(0, RESULT_JITTER_S), "result")

    def buying_on(self, code: int | None) -> bool:
        """The unpaid opening: does a script refused by the stock buy again, rather than ask
        for its result? Until the opening is settled, between two asks (OFFER_POLL_S)."""
        lapses = self.lapses
        return (
            lapses is not None and self.actor.script and not lapses.settled.is_set()
            and code != CODE["ALREADY_BOUGHT"] and self.replay.now() < self.offer_poll_at
        )  # fmt: skip

    def ordered(self, order_id: int, now: float) -> None:
        """The unpaid opening: the shopper's order is written (a winner's, or a unit offered).
        They pay it, unless they are one of the winners who let the window pass (the driver
        knows them once the draw is made)."""
        assert self.lapses is not None
        if self.lapses.walkers is None:
            self.replay.push(self.actor, now + 0.3, "result")
            return
        self.actor.outcome = "ordered"
        if not self.lapses.walks_away(self.actor.user_id):
            self.payment = Payment(order_id=order_id, site=self.site, request=self._request)
            self.replay.push(self.actor, now, PAY_STEPS[0])


CODE = {code.name: code.code for enum in (Code, UserCode, SaleCode, BuyCode, OrderCode, WaitingCode) for code in enum}
CODE_NAME = {code: name for name, code in CODE.items()}


def answer_name(code: int | None, response: requests.Response | None) -> str:
    """A buy's answer as the run reports it: the code's name, else the HTTP status (or "none")."""
    if code in CODE_NAME:
        return CODE_NAME[code]
    return f"HTTP {response.status_code}" if response is not None else "none"


def envelope(response: requests.Response | None) -> tuple[int | None, dict]:
    """The answer's (code, data); (None, {}) when it is none or not the shop's JSON envelope."""
    if response is None:
        return None, {}
    try:
        body = response.json()
    except ValueError:
        return None, {}
    if not isinstance(body, dict):
        return None, {}
    data = body.get("data")
    return body.get("code"), data if isinstance(data, dict) else {}


def retry_after(response: requests.Response) -> float:
    try:
        return max(0.2, float(response.headers.get("Retry-After", 1)))
    except ValueError:
        return 1.0


def wrong(answer: int) -> int:
    """A wrong answer the API still accepts as a number (within the captcha's bounds)."""
    from seckill.captcha import ANSWER_MAX

    return answer + 1 if answer < ANSWER_MAX else answer - 1


def cpu_used(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds per group between two tools.deploy.cpu_snapshot()s, process by process: a
    process that started meanwhile counts whole, one that exited meanwhile is missing (the
    machine is shared: other jobs' processes come and go)."""
    used: dict[str, float] = {}
    for pid, (group, seconds) in after.items():
        used[group] = used.get(group, 0.0) + seconds - before.get(pid, (group, 0.0))[1]
    return used


def machine_busy(before, after) -> float:
    """The share of the machine's CPU time (all cores) spent busy between two psutil.cpu_times()."""
    total = sum(after) - sum(before)
    idle = (after.idle + getattr(after, "iowait", 0)) - (before.idle + getattr(before, "iowait", 0))
    return 1 - idle / total if total > 0 else 0.0
