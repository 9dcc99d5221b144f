"""The bench's scenarios: what each one sends, and the facts it records (floor, sold out, the
bursts with their result polling, naive, pages, hot row, drain) and the invariants checked after."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from datetime import timedelta

from lab import prepare
from lab.bench import figures, opening
from lab.bench.drawn import DrawnSale, drawn_sale_create, entered
from lab.bench.load import Request
from lab.bench.measure import NOT_STARTED_CODE, SOLD_OUT_CODE, SUCCESS_CODE, log, postgres_sessions, rounded
from lab.bench.tickets import tickets_mint, wait_tickets_mint
from lab.invariants import reservations_waiting, sale_check
from lab.shopper import Shopper
from orders.models import Order, SeckillOrder
from sales import sale_state
from seckill.codes import BuyCode
from seckill.selectors import captcha_pool_size
from seckill.services import paths as seckill_paths
from seckill_site.codes import Code
from seckill_site.redis import client
from tools import opening_mix
from tools.deploy import ROOT
from tools.opening_mix import kind_of

# The path's answer to a wrong captcha answer (400), as the opening's path requests carry one.
CAPTCHA_WRONG_CODE = str(BuyCode.CAPTCHA_WRONG.code)
# Shoppers whose paths are made between two refreshes of the paths' lifetime (see `paths`).
PATHS_CHUNK = 500
# The opening's kinds the shop answers 400 or 404 as the pages ask them (lab.bench.opening.REFUSALS):
# the path request's wrong captcha answer (the page's check of a typo) alone.
EXPECTED_REFUSALS = {opening.kind_word("GET seckill:path"): {"400"}}
# Shoppers pressing "buy" in the same second, each drawing a captcha (`captcha`).
CAPTCHA_WAVE = 1000
# Shoppers entered in the drawn sale whose waiting list the opening's list polls ask about
# (`_drawn_sale`); half of them are drawn, the other half listed.
DRAW_ENTRANTS = 100
# The open loop's rate: this share of the opening mix's measured capacity (`opening_open`).
OPEN_LOOP_SHARE = 0.8


class Scenarios:
    """Mixed into lab.bench.run.Bench, after lab.bench.measure.Measurement."""

    def paths(self, sale_id: int, shoppers: list[Shopper]) -> list[str]:
        """One path per shopper, made a chunk at a time; after each chunk the paths made so far
        get their whole lifetime again. Drawing 3,000 captchas took 58-70 s on the loaded shared
        machine, longer than a path lives (PATH_TTL, 60 s), and the burst met hundreds of
        expired paths (403) that no shopper would have held that long."""
        started = time.monotonic()
        paths: list[str] = []
        for start in range(0, len(shoppers), PATHS_CHUNK):
            paths += prepare.paths_create(shoppers=shoppers[start : start + PATHS_CHUNK], sale_id=sale_id)
            made = dict(zip((s.user_id for s in shoppers), paths, strict=False))
            prepare.paths_keep_alive(sale_id=sale_id, paths=made)
        log(f"prepared {len(paths)} one-time paths (captcha drawn, answered) in {time.monotonic() - started:.1f} s")
        return paths

    def seckill_requests(self, sale_id: int, shoppers: list[Shopper]) -> list[Request]:
        paths = self.paths(sale_id, shoppers)
        return [
            Request("POST", f"/seckill/{path}/doSeckill", s.session, s.csrf, f"goodsId={sale_id}")
            for s, path in zip(shoppers, paths, strict=True)
        ]

    def api_seckill_requests(self, sale_id: int, shoppers: list[Shopper]) -> list[Request]:
        """The same purchase through the REST API: token authentication, the path in the URL."""
        paths = self.paths(sale_id, shoppers)
        return [
            Request("POST", f"/api/v1/sales/{sale_id}/buy/{path}", token=s.token)
            for s, path in zip(shoppers, paths, strict=True)
        ]

    def get_requests(self, path: str, shoppers: list[Shopper]) -> list[Request]:
        return [Request("GET", path, s.session, s.csrf) for s in shoppers]

    def warm_up(self) -> None:
        """Every worker opens its Redis, broker and database connections and loads its Lua
        scripts before anything is measured: a warm-up sale, a short floor run."""
        self.drive("warm-up-floor", self.get_requests("/bench/floor", self.warmup_shoppers), mode="loop",
                   record=False, seconds=2)  # fmt: skip
        requests = self.seckill_requests(self.sales.warmup, self.warmup_shoppers)
        self.drive("warm-up-seckill", requests, mode="once", record=False)
        requests = self.api_seckill_requests(self.sales.warmup, self.warmup_shoppers)
        self.drive("warm-up-api", requests, mode="once", record=False)
        self.drive("warm-up-pages", [Request("GET", f"/goods/getDetails/{self.sales.burst[0]}", s.session, s.csrf)
                                     for s in self.warmup_shoppers], mode="once", record=False)  # fmt: skip

    def bare(self) -> None:
        """The server's own ceiling: a fixed JSON answer to a POST in the same server, processes and
        settings, before Django (lab/bench/bare.py). Every other rate is read against it."""
        requests = [Request("POST", "/bench/bare", body="goodsId=1") for _ in range(64)]
        result = self.drive("bare", requests, mode="loop")
        self.expect(result, codes={SUCCESS_CODE}, statuses={"200"})

    def _not_started_sale(self) -> int:
        if self.not_started_sale is None:
            sale = prepare.sale_create(name="not-started", units=self.options.stock, starts_in=timedelta(hours=1))
            self.sales.extra.append(sale.pk)
            self.not_started_sale = sale.pk
        return self.not_started_sale

    def not_started(self) -> None:
        """Buy pressed before the opening, page and API alike (the answer comes before the path is
        read, so any path does), by logged-in shoppers."""
        sale_id = self._not_started_sale()
        requests = [
            Request("POST", f"/seckill/early{s.user_id}/doSeckill", s.session, s.csrf, f"goodsId={sale_id}")
            if index % 2 == 0
            else Request("POST", f"/api/v1/sales/{sale_id}/buy/early{s.user_id}", token=s.token)
            for index, s in enumerate(self.shoppers)
        ]
        result = self.drive("not-started", requests, mode="loop")
        self.expect(result, codes={NOT_STARTED_CODE}, statuses={"200"})

    def _detail_polls(self, sale_id: int, count: int) -> list[Request]:
        """The anonymous stock/status poll: seed 000's getDetails and the API's sale detail."""
        paths = (f"/goods/getDetails/{sale_id}", f"/api/v1/sales/{sale_id}")
        return [Request("GET", paths[index % 2]) for index in range(count)]

    def detail_poll(self) -> None:
        result = self.drive("detail-poll", self._detail_polls(self._not_started_sale(), 64), mode="loop")
        self.expect(result, codes={SUCCESS_CODE}, statuses={"200"})

    def sale_state(self) -> None:
        """The item page's refresh every 5 s: the sale's public state, asked with each shopper's
        cookies as their browser sends them (an edge keeps one copy for everybody)."""
        sale_id = self._not_started_sale()
        requests = [Request("GET", f"/seckill/saleState/{sale_id}", s.session) for s in self.shoppers[:64]]
        result = self.drive("sale-state", requests, mode="loop")
        self.expect(result, codes={SUCCESS_CODE}, statuses={"200"})

    def _opening_sale(self) -> int:
        """The opening's sale after its sell-out: one unit per shopper, every unit bought by a
        shopper through the gate's service (lab.bench.reserve, as the drain buys) and written
        by the order writer before it is used. So each shopper has a result in Redis, which
        their ticket's poll reads below Django, and a buy pressed now is a "sold out"."""
        if self.opening_sale is None:
            units = len(self.shoppers)
            sale = prepare.sale_create(name="opening", units=units)
            self.sales.extra.append(sale.pk)
            self.opening_sale = sale.pk
            log(f"opening sale #{sale.pk}: {units} shoppers buy its {units} units through the gate's service")
            codes, _first, _last = self._reserve_through_gate(sale.pk, [s.user_id for s in self.shoppers])
            self.queued["opening"] = codes.get(SUCCESS_CODE, 0)
            if codes != {SUCCESS_CODE: units}:
                self.violations.append(f"opening: the gate answered {codes} to {units} shoppers for {units} units")
            landed = self._orders_landed(sale.pk, self.queued["opening"], deadline=time.monotonic() + 120)
            log(f"opening sale #{sale.pk}: {landed} orders written, sold out")
        return self.opening_sale

    def _drawn_sale(self) -> DrawnSale:
        """The sale the item page's waiting-list poll asks about: a draw, drawn, its winners'
        orders written, its list published (lab.bench.drawn), entered by the first DRAW_ENTRANTS
        shoppers; made once."""
        if self.drawn_sale is None:
            entrants = self.shoppers[:DRAW_ENTRANTS]
            drawn = drawn_sale_create(entrants)
            self.sales.extra.append(drawn.sale_id)
            self.drawn_sale = drawn
            log(f"drawn sale #{drawn.sale_id}: {len(entrants)} entered, {drawn.winners} drawn and their orders"
                f" written, {len(drawn.listed)} on its waiting list")  # fmt: skip
            if not entered(drawn):
                self.violations.append(f"drawn sale: the gate answered {drawn.entries} to {len(entrants)} entries")
        return self.drawn_sale

    def _waiting_list_polls(self, drawn: DrawnSale) -> list[Request]:
        """Each listed shopper's waiting-list poll as their page sends it after the first: the
        session and the wait ticket the first poll's answer set (lab.bench.tickets)."""
        tickets = wait_tickets_mint(drawn.listed, sale_id=drawn.sale_id, secret_key=self.deployment.secret_key)
        return [
            Request("GET", f"/seckill/waitingList/{drawn.sale_id}", s.session, s.csrf, cookies=tickets[s.user_id])
            for s in drawn.listed
        ]

    def _result_polls(self, sale_id: int, shoppers: list[Shopper]) -> list[Request]:
        """Each shopper's result poll, as the item page sends it after "queued": the session
        and the ticket their buy left (lab.bench.tickets, made now: a ticket lives minutes)."""
        tickets = tickets_mint(shoppers, sale_id=sale_id, secret_key=self.deployment.secret_key)
        if len(tickets) < len(shoppers):
            self.violations.append(f"result tickets: {len(shoppers) - len(tickets)} shoppers got none")
        return [
            Request(
                "GET",
                f"/seckill/result?goodsId={sale_id}",
                s.session,
                s.csrf,
                cookies=tickets.get(s.user_id, ""),
                kind="result",
            )  # fmt: skip
            for s in shoppers
        ]

    def _opening_requests(self) -> list[Request]:
        """The opening as the pages make it: the kinds of lab/data/opening_mix.json (recorded in
        Chromium by `make record-opening`) in their proportions over an opening of
        lab.bench.opening.PHASE_SECONDS. The wait's requests ask about a sale not started yet,
        the opening's and the sell-out's about the sold-out opening sale (whose every shopper
        holds an order and a ticket): the bench cannot replay a sale with units left in a loop,
        the burst measures that; the draw's waiting-list polls about a drawn sale. Each request
        names its kind (lab.bench.load.Request)."""
        recorded = opening_mix.load()
        steps = opening.plan(opening.weights(recorded), size=max(len(self.shoppers), 1000))
        return opening.requests_made(steps, self._opening_builders(recorded))

    def _opening_builders(self, recorded: dict) -> dict[str, opening.Builder]:
        """Each recorded "METHOD kind" -> how the bench makes one such request (phase, number): those that
        need a shopper's own path, ticket or order here, the rest from their recorded template
        (one URL per sale) or, for the page's files, the item page's own links. The waiting-list
        poll asks about the drawn sale, by its listed shoppers: the only ones a page polls for."""
        early, gone = self._not_started_sale(), self._opening_sale()
        shoppers = self.shoppers
        polls = {poll.session: poll for poll in self._result_polls(gone, shoppers)}
        listed = self._waiting_list_polls(self._drawn_sale())
        orders = dict(Order.objects.filter(sale_id=gone).values_list("user_id", "order_no"))

        def sale(phase: str) -> int:
            return early if phase == "before" else gone

        def shopper(number: int) -> Shopper:
            return shoppers[number % len(shoppers)]

        def buy(phase: str, number: int) -> Request:
            s = shopper(number)
            return Request("POST", f"/seckill/early{s.user_id}/doSeckill", s.session, s.csrf, f"goodsId={sale(phase)}")

        def path(phase: str, number: int) -> Request:  # a wrong answer: the page's check of a typo
            s = shopper(number)
            return Request("GET", f"/seckill/path?goodsId={sale(phase)}&verifyCode=0", s.session, s.csrf)

        def result(_phase: str, number: int) -> Request:
            return polls[shopper(number).session]

        def own_state(phase: str, number: int) -> Request:  # the page load's ask, the nav's with it
            s = shopper(number)
            return Request("GET", f"/seckill/shopperState?goodsId={sale(phase)}&nav=1", s.session, s.csrf)

        def order(_phase: str, number: int) -> Request:
            s = shopper(number)
            return Request("GET", f"/orders/{orders[s.user_id]}", s.session, s.csrf)

        def waiting_list(_phase: str, number: int) -> Request:
            if not listed:
                raise opening.Unbuildable("nobody is on the drawn sale's waiting list: no page polls it")
            return listed[number % len(listed)]

        builders: dict[str, opening.Builder] = {}
        sessions, tickets = opening.shares(recorded, "with_session"), opening.shares(recorded, "with_ticket")
        for key, template in recorded["templates"].items():
            method, _sep, _kind = key.partition(" ")
            builders[key] = self._template_builder(method, template, sale, shopper, sessions.get(key, 0) >= 0.5,
                                                   polls if tickets.get(key, 0) >= 0.5 else None)  # fmt: skip
        for kind, paths in self._page_files(early).items():
            builders.setdefault(f"GET {kind}", self._file_builder(paths))
        builders.update({"POST seckill:do": buy, "GET seckill:path": path, "GET seckill:result": result,
                         "GET orders:detail": order, "GET seckill:shopper_state": own_state,
                         "GET seckill:waiting_list": waiting_list})  # fmt: skip
        return builders

    @staticmethod
    def _template_builder(method, template, sale, shopper, session: bool, polls: dict | None) -> opening.Builder:
        def build(phase: str, number: int) -> Request:
            s = shopper(number)
            url = template.replace("{sale}", str(sale(phase)))
            cookies = polls[s.session].cookies if polls is not None else ""
            return Request(method, url, s.session if session else "", s.csrf if session else "", cookies=cookies)

        return build

    @staticmethod
    def _file_builder(paths: list[str]) -> opening.Builder:
        return lambda _phase, number: Request("GET", paths[number % len(paths)])

    def _page_files(self, sale_id: int) -> dict[str, list[str]]:
        """Kind -> the same-origin files the item page links (scripts, styles, the catalog,
        images), as the browser fetches them after the page."""
        import requests as http

        page = http.get(f"{self.deployment.url}/goods/detail/{sale_id}", timeout=10).text
        files: dict[str, list[str]] = {}
        for link in sorted(set(re.findall(r'(?:src|href)="(/[^"/][^"]*)"', page))):
            kind = kind_of(link.split("?", 1)[0])
            if kind in ("static", "jsi18n", "media"):
                files.setdefault(kind, []).append(link)
        return files

    def opening_facts(self) -> dict:
        """opening-mix's and opening-open's requests by kind, as lab.bench.opening.kind_rows reads them."""
        facts = {}
        for scenario in ("opening-mix", "opening-open"):
            result = next((r for r in self.results if r.scenario == scenario), None)
            kinds = self.edge_facts.get(scenario)
            if result is not None and kinds:
                facts[scenario] = {"seconds": result.seconds, "by_kind": kinds["by_kind"],
                                   "django_by_kind": kinds["django_by_kind"],
                                   "latency_by_kind_ms": result.latency_by_kind_ms}  # fmt: skip
        return facts

    def opening_mix(self) -> None:
        result = self.drive("opening-mix", self._opening_requests(), mode="loop")
        self._opening_expect(result)

    def result_poll(self) -> None:
        """The shoppers' result polls with their tickets: answered below Django (seckill.fastpath)
        from the order id in Redis, through the edge untouched with --edge."""
        result = self.drive("result-poll", self._result_polls(self._opening_sale(), self.shoppers), mode="loop")
        self.expect(result, codes={SUCCESS_CODE}, statuses={"200"})
        if result.data.get("zero", 0) or result.data.get("negative", 0):
            self.violations.append(f"result-poll: answers without an order id {result.data}")

    def opening_open(self) -> None:
        """The opening mix in an open loop: OPEN_LOOP_SHARE of the rate `opening-mix` measured,
        each request timed from when it was due (lab.bench.asyncload), every kind's tail apart."""
        measured = next((r for r in self.results if r.scenario == "opening-mix"), None)
        if measured is None:
            self.notes.append("opening-open needs opening-mix's measured rate: run both")
            log("opening-open: skipped, opening-mix was not measured in this run")
            return
        rate = OPEN_LOOP_SHARE * measured.rps
        result = self.drive("opening-open", self._opening_requests(), mode="rate", rate=rate)
        self._opening_expect(result)

    def _opening_expect(self, result) -> None:
        """The opening's answers: the pages' (HTML and files: "none"), a sale not started or sold
        out, the wrong captcha answer the path requests carry (a 400 each), and the limiters'
        429s: the replay loops over each shopper's captcha, path and buy far faster than a person
        can, and the shop's per-shopper limits turn the repeats away. Each kind apart: a 400 or
        404 only where EXPECTED_REFUSALS has it, so no kind replays a request the shop refuses
        (another sale's URL) while the total looks right."""
        self.expect(result, codes={SUCCESS_CODE, NOT_STARTED_CODE, SOLD_OUT_CODE, CAPTCHA_WRONG_CODE,
                                   str(Code.TOO_MANY_REQUESTS.code), str(BuyCode.SALE_LIMIT.code), "none"},
                    statuses={"200", "400", "429"})  # fmt: skip
        if result.statuses.get("400", 0) != result.codes.get(CAPTCHA_WRONG_CODE, 0):
            self.violations.append(f"{result.scenario}: 400s that are not a wrong captcha answer {result.codes}")
        refused = opening.refused_kinds(result.statuses_by_kind, expected=EXPECTED_REFUSALS)
        if refused:
            self.violations.append(f"{result.scenario}: kinds refused as no page's request is {refused}")

    def captcha(self) -> None:
        """The opening's captcha wave: CAPTCHA_WAVE shoppers press "buy" at once and each draws a
        captcha, first with the pool empty (drawn in the request, `captcha-drawn`), then from a
        pool this process filled beforehand (`captcha`). The last answer's time is when the last
        of them could start reading their sum."""
        shoppers = self.shoppers[:CAPTCHA_WAVE]
        requests = self.get_requests(f"/seckill/verifyCode?goodsId={self.sales.sold_out}", shoppers)
        seckill_paths.captcha_pool_clear()
        result = self.drive("captcha-drawn", requests, mode="once")
        self.expect(result, codes={"none"}, statuses={"200"})
        started = time.monotonic()
        drawn = seckill_paths.captcha_pool_fill(size=len(shoppers))
        log(f"captcha pool: {drawn} drawn in {time.monotonic() - started:.1f} s (Celery beat's work, before a sale)")
        result = self.drive("captcha", requests, mode="once")
        self.expect(result, codes={"none"}, statuses={"200"})
        left = captcha_pool_size()
        seckill_paths.captcha_pool_clear()
        if left:
            self.violations.append(f"captcha: {left} of {len(shoppers)} pooled captchas not taken (drawn instead?)")

    def floor(self) -> None:
        result = self.drive("floor", self.get_requests("/bench/floor", self.shoppers), mode="loop")
        self.expect(result, codes={SUCCESS_CODE}, statuses={"200"})

    def sold_out(self) -> None:
        # Timed like the floor: a sold-out answer consumes nothing (not the path, not the rate
        # limit), so shoppers pressing "buy" again and again after the sell-out is the real load.
        result = self.drive("sold-out", self.seckill_requests(self.sales.sold_out, self.shoppers), mode="loop")
        self.expect(result, codes={SOLD_OUT_CODE}, statuses={"200"})

    def api_sold_out(self) -> None:
        result = self.drive("api-sold-out", self.api_seckill_requests(self.sales.sold_out, self.shoppers), mode="loop")
        self.expect(result, codes={SOLD_OUT_CODE}, statuses={"200"})

    def burst(self) -> None:
        self.burst_facts = self._bursts("burst", "poll", self.sales.burst, api=False)

    def api_burst(self) -> None:
        self.api_burst_facts = self._bursts("api-burst", "api-poll", self.sales.api_burst, api=True)

    def _bursts(self, scenario: str, poll_scenario: str, sale_ids: list[int], *, api: bool) -> dict:
        """The burst, once per sale (fresh shoppers' paths each time), reported by its median.

        A burst lasts a couple of seconds: one neighbour's hiccup on a shared machine moves a
        single run by a third. The median of several, each checked in full, is the figure; all
        of them are listed."""
        runs = []
        for number, sale_id in enumerate(sale_ids, 1):
            if api:
                requests = self.api_seckill_requests(sale_id, self.shoppers)
                poll_path = f"/api/v1/sales/{sale_id}/result"
            else:
                requests = self.seckill_requests(sale_id, self.shoppers)
                poll_path = f"/seckill/result?goodsId={sale_id}"
            facts = self._burst(f"{scenario}#{number}", sale_id, requests, poll_path=poll_path, api=api,
                                poll_scenario=f"{poll_scenario}#{number}")  # fmt: skip
            runs.append((self._result(f"{scenario}#{number}").rps, number, facts))
        median_rps, median, facts = sorted(runs)[len(runs) // 2]
        for number in range(1, len(sale_ids) + 1):
            for name, kept in ((scenario, number == median), (poll_scenario, number == median)):
                self._rename_or_drop(f"{name}#{number}", name if kept else None)
        facts = {"median_of": len(runs), "req_per_s_of_each": [round(rps) for rps, _n, _f in sorted(runs)], **facts}
        log(f"{scenario}: median {median_rps:.0f} req/s of {[round(rps) for rps, _n, _f in runs]} (in run order)")
        return facts

    def _burst(self, scenario: str, sale_id: int, requests: list[Request], *, poll_path: str, api: bool,
               poll_scenario: str) -> dict:  # fmt: skip
        sold = min(self.options.stock, len(self.shoppers))
        sessions_before = postgres_sessions()
        result = self.drive(scenario, requests, mode="once")
        burst_end = result.ended_at
        queued = result.codes.get(SUCCESS_CODE, 0)
        self.queued[scenario] = queued
        self.expect(result, codes={SUCCESS_CODE: sold, SOLD_OUT_CODE: len(self.shoppers) - sold}, statuses={"200"})

        # The queue drains while the shoppers poll for their results, as the item page does.
        landed_at: list[float] = []

        def watch() -> None:
            from django.db import connection

            try:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    if SeckillOrder.objects.filter(sale_id=sale_id).count() >= queued:
                        landed_at.append(time.time())
                        return
                    time.sleep(0.02)
            finally:
                connection.close()

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        holders = SeckillOrder.objects.filter(sale_id=sale_id, live=True).values_list("user_id", flat=True)
        buyers = sorted({r.user_id for r in sale_state.reservations(sale_id)} | set(holders))
        by_id = {s.user_id: s for s in self.shoppers}
        pollers = [by_id[b] for b in buyers if b in by_id]
        poll = (
            [Request("GET", poll_path, token=s.token) for s in pollers]
            if api
            else self.get_requests(poll_path, pollers)
        )
        passes = 0
        poll_done = None
        # As long as the watcher waits for the orders (60 s), not a fixed number of passes: on a
        # busy shared machine the writer, at nice 19, may take longer than twenty passes.
        poll_deadline = time.monotonic() + 60
        while poll and time.monotonic() < poll_deadline:
            passes += 1
            answer = self.drive(poll_scenario if passes == 1 else f"{poll_scenario}-{passes}", poll, mode="once",
                                record=passes == 1)  # fmt: skip
            if passes == 1:
                self.expect(answer, codes={SUCCESS_CODE}, statuses={"200"})
            if answer.data.get("positive", 0) == len(poll):
                poll_done = answer.ended_at
                break
            time.sleep(0.2)
        watcher.join(timeout=65)
        drain = landed_at[0] - burst_end if landed_at else None
        sessions_after = postgres_sessions()
        facts = {
            "queued": queued,
            # Connections PostgreSQL accepted from the burst until every order landed: a handful
            # when the order writers keep theirs, one or two per order when they do not.
            "postgres_connections_opened": (
                None if sessions_before is None or sessions_after is None else sessions_after - sessions_before
            ),
            "drain_seconds_after_last_request": None if drain is None else round(max(0.0, drain), 3),
            "poll_passes_until_all_landed": passes,
            "all_landed_seen_by_polling_seconds_after_last_request": (
                None if poll_done is None else round(poll_done - burst_end, 3)
            ),
        }
        if drain is None:
            self.violations.append(f"{scenario}: {queued} queued but the orders did not all land within 60 s")
        if poll_done is None:
            self.violations.append(f"{scenario}: polling never saw every queued shopper's order")
        log(f"{scenario}: {queued} queued; all orders in the database"
            f" {drain if drain is None else round(drain, 2)} s after the last request;"
            f" polling saw them all after {passes} pass(es)")  # fmt: skip
        return facts

    def naive(self) -> None:
        sold = min(self.options.stock, len(self.shoppers))
        requests = [
            Request("POST", "/bench/naive/doSeckill", s.session, s.csrf, f"goodsId={self.sales.naive}")
            for s in self.shoppers
        ]
        result = self.drive("naive", requests, mode="once")
        self.expect(result, codes={SUCCESS_CODE: sold, SOLD_OUT_CODE: len(self.shoppers) - sold}, statuses={"200"})

    def pages(self) -> None:
        import requests as http

        http.get(f"{self.deployment.url}/goods/goodsList", timeout=10)  # the first miss fills the cache
        for scenario, path in (
            ("list", "/goods/goodsList"),
            ("list-cold", "/bench/goodsList-cold"),
            ("detail", f"/goods/getDetails/{self.sales.burst[0]}"),
        ):
            result = self.drive(scenario, self.get_requests(path, self.shoppers), mode="loop")
            self.expect(result, codes={"none"} if scenario.startswith("list") else {SUCCESS_CODE}, statuses={"200"})

    def hot_row(self) -> None:
        """The database's single hot-row purchase rate, the yardstick of the order writer."""
        sale = prepare.sale_create(name="hot-row", units=10**9)  # never runs out in a few seconds
        self.sales.extra.append(sale.pk)
        seconds = min(self.options.duration, 10.0)
        log(f"hot row: one transaction per purchase on sale #{sale.pk}, {self.options.hot_row_clients} clients,"
            f" {seconds:.0f} s")  # fmt: skip
        mark = self._cpu_mark()
        started = time.monotonic()
        facts = figures.hot_row_rate(sale_id=sale.pk, goods_id=sale.goods_id, user_id=sale.goods.owner_id,
                                     seconds=seconds, clients=self.options.hot_row_clients, work=self.work)  # fmt: skip
        # Only the machine's total: pgbench's backends exit before the second reading, so their
        # CPU cannot be told apart per process.
        split = self._cpu_split(mark, time.monotonic() - started)
        facts["cpu_percent_of_one_core"] = {"machine": round(split["machine"], 1)}
        sale.refresh_from_db()
        facts["orders_match_stock_taken"] = Order.objects.filter(sale_id=sale.pk).count() == 10**9 - sale.stock_count
        if not facts["orders_match_stock_taken"]:
            self.violations.append("hot row: orders written != units taken from the row")
        self.hot_row_facts = facts
        log(f"hot row: {facts['purchases_per_second']} purchases/s ({facts['tool']})")

    def drain(self) -> None:
        """The order writer's drain rate: `drain_stock` reservations made through the gate's
        service while the worker is paused (with Redis memory measured before and after), then
        the worker resumed and timed until every order is in PostgreSQL."""
        self.drain_facts = self._drain(units=self.options.drain_stock)

    def _drain(self, *, units: int) -> dict:
        sale = prepare.sale_create(name="drain", units=units)
        self.sales.extra.append(sale.pk)
        log(f"drain: creating {units} shoppers for sale #{sale.pk}")
        users_made = prepare.users_create(count=units)
        self.drain_users = [*self.drain_users, *users_made]
        redis = client()
        self.deployment.celery_pause()
        used_before = figures.redis_used_memory(redis)
        broker_before = self.deployment.broker_queue_bytes()

        parts = self.options.reserve_processes
        log(f"drain: {units} reservations through the gate's service from {parts} processes, the writer paused")
        mark, started = self._cpu_mark(), time.monotonic()
        codes, first, last = self._reserve_through_gate(sale.pk, users_made)
        reserve_cpu = self._cpu_split(mark, time.monotonic() - started)
        queued = codes.get(SUCCESS_CODE, 0)
        self.queued["drain"] = queued
        used_after = figures.redis_used_memory(redis)
        sale_keys, sale_bytes = sale_state.memory_used(sale.pk)
        broker_after = self.deployment.broker_queue_bytes()
        if codes != {SUCCESS_CODE: units}:
            self.violations.append(f"drain: the gate answered {codes} to {units} shoppers for {units} units")

        log(f"drain: {queued} queued in {last - first:.1f} s; resuming the writer")
        mark, resumed = self._cpu_mark(), time.monotonic()
        self.deployment.celery_resume()
        landed = self._orders_landed(sale.pk, queued, deadline=resumed + max(120.0, queued / 20))
        drained = time.monotonic() - resumed
        drain_cpu = self._cpu_split(mark, drained)
        self._memory_note()
        if landed < queued:
            self.violations.append(f"drain: {landed} of {queued} orders in the database after {drained:.0f} s")
        per_thousand = 1000 / max(queued, 1)
        facts = {
            "sale": sale.pk,
            "units": units,
            "queued": queued,
            "reservations_per_second": round(queued / max(last - first, 1e-6), 1),
            "reserve_processes": parts,
            "orders_landed": landed,
            "drain_seconds": round(drained, 2),
            "orders_per_second": round(landed / drained, 1),
            "redis_bytes_per_1000_reservations": {
                "used_memory": round((used_after - used_before) * per_thousand),
                "sale_keys": round(sale_bytes * per_thousand),
                "broker_messages": (
                    None if broker_after is None else round((broker_after - (broker_before or 0)) * per_thousand)
                ),
            },
            "sale_keys_while_reserved": sale_keys,
            "cpu_percent_of_one_core": {"reserving": rounded(reserve_cpu), "draining": rounded(drain_cpu)},
        }
        log(f"drain: {landed} orders in {drained:.2f} s = {landed / drained:.0f} orders/s")
        return facts

    def _reserve_through_gate(self, sale_id: int, user_ids: list[int]) -> tuple[dict[str, int], float, float]:
        """Each user buys `sale_id` once through the gate's service, from reserve_processes
        processes with the web's settings (lab.bench.reserve): (answer codes, first, last epoch s)."""
        parts = self.options.reserve_processes
        processes = []
        for index in range(parts):
            users, out = self.work / f"reserve-{sale_id}-{index}.txt", self.work / f"reserved-{sale_id}-{index}.json"
            users.write_text("".join(f"{user}\n" for user in user_ids[index::parts]))
            command = [sys.executable, "-m", "lab.bench.reserve", str(sale_id), str(users), str(out)]
            processes.append((out, subprocess.Popen(command, cwd=ROOT, env=self.deployment.env)))
        codes: dict[str, int] = {}
        first, last = None, None
        for out, process in processes:
            if process.wait(timeout=60 + len(user_ids) / 50) != 0:
                raise RuntimeError("lab.bench.reserve failed (its output is above)")
            made = json.loads(out.read_text())
            for code, count in made["codes"].items():
                codes[code] = codes.get(code, 0) + count
            first = made["started"] if first is None else min(first, made["started"])
            last = made["ended"] if last is None else max(last, made["ended"])
        return codes, first or 0.0, last or 0.0

    @staticmethod
    def _orders_landed(sale_id: int, queued: int, *, deadline: float) -> int:
        """Wait until the sale's `queued` orders are in PostgreSQL and settled in Redis (no
        reservation left: what a polling shopper waits for), or `deadline`: the orders landed.
        Settled, not just committed: the writer commits a batch, then settles its reservations
        in Redis, and a check between the two would call its reservations stranded."""
        landed = 0
        while time.monotonic() < deadline:
            landed = SeckillOrder.objects.filter(sale_id=sale_id).count()
            if landed >= queued and not reservations_waiting(sale_id):
                break
            time.sleep(0.05)
        return landed

    def check(self) -> None:
        """The invariants (lab.invariants), per sale, once the queue has drained."""
        naive_result = next((r for r in self.results if r.scenario == "naive"), None)
        bursts = [
            (f"{scenario}#{number}", sale_id, self.options.stock)
            for scenario, sale_ids in (("burst", self.sales.burst), ("api-burst", self.sales.api_burst))
            for number, sale_id in enumerate(sale_ids, 1)
        ]
        drain = [("drain", self.drain_facts["sale"], self.drain_facts["units"])] if self.drain_facts else []
        opening = [("opening", self.opening_sale, self.queued.get("opening", 0))] if self.opening_sale else []
        for name, sale_id, stock in (
            *bursts,
            *drain,
            *opening,
            ("sold-out", self.sales.sold_out, 0),
            ("naive", self.sales.naive, self.options.stock),
        ):
            # The naive sale is sold straight into PostgreSQL, past the gate: Redis has no part.
            check = sale_check(sale_id=sale_id, units=stock, redis=name != "naive")
            facts = {"initial_stock": stock, "orders": check.orders, "db_stock": check.db_stock,
                     "duplicates": check.duplicates, "oversold": check.oversold}  # fmt: skip
            problems = check.problems()
            if name == "naive":
                told = naive_result.codes.get(SUCCESS_CODE, 0) if naive_result else 0
                facts["told_success"] = told
                if told != check.orders:
                    problems.append(f"{told} shoppers told success but {check.orders} orders")
            else:
                facts.update(redis_stock=check.redis_stock, reservations_left=check.reservations,
                             results_without_order=check.unanswered)  # fmt: skip
                if self.queued.get(name, 0) != check.orders:
                    problems.append(f"{self.queued.get(name, 0)} shoppers told queued but {check.orders} orders")
            facts["problems"] = problems
            self.checks[name] = facts
            self.violations += [f"{name}: {problem}" for problem in problems]

    # --- the whole run -----------------------------------------------------------------------
