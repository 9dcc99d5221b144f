"""`make bench`: load-test a production-like deployment and check the invariants afterwards.

Called by `python -m bench` (bench/__main__.py documents the options). Steps:

1. deploy: migrate, a Celery worker, gunicorn (settings.bench: production with DEBUG off on
   plain http); the gunicorn worker count is the one with the best floor throughput among
   the candidates, measured here;
2. prepare: sales (burst, sold-out, naive, warm-up), shoppers logged in through Redis
   sessions, and one-time paths through the captcha services (answers read from Redis);
3. drive each scenario from a separate load-generator process at the same concurrency:
   floor, sold-out, burst (+ result polling until every order landed), naive, pages;
4. check: orders, oversold, duplicates, stranded units, every queued shopper has an order;
5. report: table, ratios against the targets, JSON + PNG under bench-results/.

Any correctness violation (or an answer the scenario cannot produce on the intended path)
makes the exit status non-zero; slow figures are reported, never failed.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.db.models import Count

from bench import figures, load, prepare, report
from bench.deploy import DEFAULT_SERVER, ROOT, Deployment
from bench.load import LoadResult, Request
from bench.profile import flamegraph
from goods.models import SeckillGoods
from orders.models import Order, SeckillOrder
from seckill_site.redis import client
from seckill_site.sale_state import keys

SCENARIOS = (
    "floor", "sold-out", "burst", "api-sold-out", "api-burst", "naive", "pages",
    "hot-row", "drain",
)  # fmt: skip
SOLD_OUT_CODE = "500500"
SUCCESS_CODE = "0"


@dataclass
class Options:
    shoppers: int = 3000
    stock: int = 500
    concurrency: int = 64
    duration: float = 8.0
    workers: list[int] = field(default_factory=lambda: [2, 3, 4])
    threads: int = 2
    server: str = DEFAULT_SERVER  # bench.deploy.SERVERS
    celery_concurrency: int = 2
    # The order writer yields the CPU to the web workers while both want it: orders may land
    # a second later, the opening second's requests are answered sooner (on two shared cores).
    celery_nice: int = 19
    generator: str = "auto"  # auto | wrk | async
    generator_threads: int = 1
    output: Path = ROOT / "bench-results"
    keep_data: bool = False
    profile: bool = False
    scenarios: tuple[str, ...] = SCENARIOS
    bursts: int = 3  # repetitions of each burst; the median is reported
    drain_stock: int = 20000  # units of the sale whose orders the writer drains
    hot_row_clients: int = 4  # pgbench clients on the one hot row
    reserve_processes: int = 2  # processes making the drain's reservations through the gate's service
    cluster: bool = False  # the deployment is the scale-out topology (bench/cluster.py)


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def machine() -> dict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import django

    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "django": django.get_version(),
        "platform": platform.platform(),
    }


def _machine_busy() -> tuple[float, float]:
    """(busy jiffies, total jiffies) of the whole machine, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


class Bench:
    def __init__(self, options: Options, deployment: Deployment | None = None) -> None:
        self.options = options
        self.stamp = time.strftime("%Y%m%d-%H%M%S")
        self.output = options.output
        self.output.mkdir(parents=True, exist_ok=True)
        self.work = self.output / f"run-{self.stamp}"
        self.work.mkdir()
        self.deployment = deployment or Deployment(
            log_dir=self.work, celery_concurrency=options.celery_concurrency, celery_nice=options.celery_nice
        )
        self.generator = self._pick_generator()
        self.results: list[LoadResult] = []
        self.cpu: dict[str, dict[str, float]] = {}
        self.violations: list[str] = []
        self.notes: list[str] = []
        self.sales: prepare.Sales | None = None
        self.shoppers: list[prepare.Shopper] = []
        self.warmup_shoppers: list[prepare.Shopper] = []
        self.calibration: list[dict] = []
        self.burst_facts: dict = {}
        self.api_burst_facts: dict = {}
        self.queued: dict[str, int] = {}  # burst scenario -> shoppers told "queued"
        self.checks: dict = {}
        self.hot_row_facts: dict = {}
        self.drain_facts: dict = {}
        self.drain_users: list[int] = []
        self.memory: dict[int, dict] = {}  # pid -> its peak RSS / USS over the recorded scenarios
        self.profiles: dict[str, dict] = {}  # scenario -> top frames (--profile)
        self.payload: dict = {}

    def _pick_generator(self) -> str:
        wanted = self.options.generator
        if wanted in ("auto", "wrk") and load.wrk_path():
            return "wrk"
        if wanted == "wrk":
            raise SystemExit("wrk is not installed (Debian: apt-get install wrk); try --generator async")
        return "async"

    # --- load ----------------------------------------------------------------------------

    def drive(self, scenario: str, requests: list[Request], *, mode: str, record: bool = True,
              seconds: float | None = None) -> LoadResult:  # fmt: skip
        duration = seconds if seconds is not None else self.options.duration
        what = f"{len(requests)} requests once each" if mode == "once" else f"{duration:.0f} s"
        log(f"{scenario}: {what}, {self.options.concurrency} connections, {self.generator}")
        file = load.write_requests(requests, self.work, scenario)
        cpu_before = self._cpu_mark()
        profiler = self._profile_start(scenario) if record else None
        result = load.run(
            scenario=scenario,
            base_url=self.deployment.url,
            requests_file=file,
            mode=mode,
            connections=self.options.concurrency,
            duration=duration if mode == "loop" else max(60.0, duration),
            generator=self.generator,
            threads=self.options.generator_threads,
        )
        self._profile_stop(profiler, scenario)
        if record:
            self.cpu[scenario] = self._cpu_split(cpu_before, result.ended_at - result.started_at) | {
                "generator": result.generator_cpu_percent
            }
            self._memory_note()
            self.results.append(result)
        file.unlink()
        log(
            f"{scenario}: {result.requests} in {result.seconds:.1f} s = {result.rps:.0f} req/s,"
            f" p50 {result.latency_ms['p50']:.1f} ms, p99 {result.latency_ms['p99']:.1f} ms,"
            f" generator CPU {result.generator_cpu_percent:.0f}% of a core"
        )
        if mode == "once" and result.requests != len(requests):
            self.violations.append(f"{scenario}: {result.requests} answers to {len(requests)} requests")
        return result

    def _cpu_mark(self) -> tuple[dict, tuple[float, float]]:
        return self.deployment.cpu_seconds(), _machine_busy()

    def _cpu_split(self, mark: tuple[dict, tuple[float, float]], wall: float) -> dict[str, float]:
        """% of one core per process kind (web, celery, postgres, redis, other) since `mark`."""
        (cpu_before, machine_before), (cpu_after, machine_after) = mark, self._cpu_mark()
        busy = (machine_after[0] - machine_before[0]) / max(1, machine_after[1] - machine_before[1])
        used: dict[str, float] = {}
        for pid, (group, seconds) in cpu_after.items():
            used[group] = used.get(group, 0.0) + seconds - cpu_before.get(pid, (group, 0.0))[1]
        return {group: 100 * seconds / max(wall, 1e-6) for group, seconds in used.items()} | {
            "machine": 100 * busy * (os.cpu_count() or 1)
        }

    def _memory_note(self) -> None:
        """Keep each web and worker process's peak memory (read after every recorded scenario)."""
        kinds = {"web": self.deployment.pids("web"), "celery": self.deployment.pids("celery")}
        for kind, entries in figures.process_memory(kinds).items():
            for entry in entries:
                peak = self.memory.get(entry["pid"])
                if peak is None or entry["rss_mb"] > peak["rss_mb"]:
                    self.memory[entry["pid"]] = {"kind": kind, **entry}

    def _profile_start(self, scenario: str):
        if not self.options.profile:
            return None
        pids = self.deployment.pids("web")
        if not pids:
            return None
        out = self.work / f"profile-{scenario}.txt"
        py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        command = [py_spy, "record", "--pid", str(pids[0]), "--subprocesses", "--format", "raw", "--rate", "250",
                   "--nonblocking", "--gil", "--output", str(out)]  # fmt: skip
        return subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _profile_stop(self, profiler, scenario: str) -> None:
        if profiler is None:
            return
        profiler.send_signal(signal.SIGINT)
        try:
            profiler.wait(timeout=30)
        except subprocess.TimeoutExpired:
            profiler.kill()
            profiler.wait()
        # The flame graph beside the JSON (the raw stacks stay in the run directory).
        name = scenario.replace("#", "-")
        svg = self.output / f"flamegraph-{self.stamp}-{name}.svg"
        summary = flamegraph(self.work / f"profile-{scenario}.txt", svg,
                             title=f"{scenario}: {self.deployment.server} web workers, GIL held")  # fmt: skip
        if summary is not None:
            self.profiles[scenario] = {"svg": svg.name, **summary.as_dict()}

    def expect(self, result: LoadResult, *, codes: dict[str, int] | set[str], statuses: set[str]) -> None:
        """The scenario measured the path it meant to: only these answers (exact counts when given)."""
        unexpected = {s: n for s, n in result.statuses.items() if s not in statuses}
        if unexpected:
            self.violations.append(f"{result.scenario}: unexpected HTTP statuses {unexpected}")
        if isinstance(codes, dict):
            if {k: v for k, v in result.codes.items() if v} != {k: v for k, v in codes.items() if v}:
                self.violations.append(f"{result.scenario}: answers {result.codes}, expected {codes}")
        elif set(result.codes) - codes:
            self.violations.append(f"{result.scenario}: unexpected answers {result.codes}")
        if result.socket_errors:
            self.violations.append(f"{result.scenario}: socket errors {result.socket_errors}")

    # --- the steps -------------------------------------------------------------------------

    def deploy(self) -> None:
        if self.options.cluster:
            log(f"deployed: {self.deployment.describe()}; the balancer on {self.deployment.url}")
        else:
            log(f"deploying on {self.deployment.url}: migrate, a Celery worker -c {self.options.celery_concurrency}")
        self.deployment.migrate()
        self.deployment.start_celery(os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "seckill-bench"))

    def prepare(self) -> None:
        options = self.options
        removed = prepare.leftovers_remove()
        if removed:
            log(f"removed {removed} sales and shoppers an earlier, interrupted run left behind")
        self.sales = prepare.sales_create(stock=options.stock, warmup_stock=20, bursts=options.bursts)
        log(f"sales: bursts {self.sales.burst} and API bursts {self.sales.api_burst} ({options.stock} units each),"
            f" sold-out #{self.sales.sold_out}, naive #{self.sales.naive} ({options.stock} units),"
            f" warm-up #{self.sales.warmup}")  # fmt: skip
        log(f"creating and logging in {options.shoppers} shoppers (+100 for the warm-up)")
        everyone = prepare.shoppers_create(
            count=options.shoppers + 100, secret_key=self.deployment.secret_key, progress=log
        )
        self.shoppers, self.warmup_shoppers = everyone[:-100], everyone[-100:]

    def paths(self, sale_id: int, shoppers: list[prepare.Shopper]) -> list[str]:
        started = time.monotonic()
        paths = prepare.paths_create(shoppers=shoppers, sale_id=sale_id)
        log(f"prepared {len(paths)} one-time paths (captcha drawn, answered) in {time.monotonic() - started:.1f} s")
        return paths

    def seckill_requests(self, sale_id: int, shoppers: list[prepare.Shopper]) -> list[Request]:
        paths = self.paths(sale_id, shoppers)
        return [
            Request("POST", f"/seckill/{path}/doSeckill", s.session, s.csrf, f"goodsId={sale_id}")
            for s, path in zip(shoppers, paths, strict=True)
        ]

    def api_seckill_requests(self, sale_id: int, shoppers: list[prepare.Shopper]) -> list[Request]:
        """The same purchase through the REST API: token authentication, the path in the URL."""
        paths = self.paths(sale_id, shoppers)
        return [
            Request("POST", f"/api/v1/sales/{sale_id}/buy/{path}", token=s.token)
            for s, path in zip(shoppers, paths, strict=True)
        ]

    def get_requests(self, path: str, shoppers: list[prepare.Shopper]) -> list[Request]:
        return [Request("GET", path, s.session, s.csrf) for s in shoppers]

    def calibrate(self) -> None:
        candidates = self.options.workers
        if self.deployment.web_fixed:
            log(f"web tier: {self.deployment.web_fixed}, as deployed; --server, --workers and --threads"
                " do not apply, nothing is chosen")  # fmt: skip
            self.deployment.start_web(workers=candidates[0], threads=self.options.threads, server=self.options.server)
            return
        floor = self.get_requests("/bench/floor", self.shoppers[:500] or self.warmup_shoppers)
        if len(candidates) == 1:
            self.deployment.start_web(workers=candidates[0], threads=self.options.threads, server=self.options.server)
            return
        log(f"choosing the {self.options.server} worker count by measurement: {candidates} x {self.options.threads}"
            " threads")  # fmt: skip
        for workers in candidates:
            self.deployment.start_web(workers=workers, threads=self.options.threads, server=self.options.server)
            self.drive(f"calibrate-{workers}-warm", floor, mode="loop", record=False, seconds=1)
            result = self.drive(f"calibrate-{workers}", floor, mode="loop", record=False, seconds=3)
            latency = result.latency_ms
            self.calibration.append({"workers": workers, "threads": self.options.threads, "rps": round(result.rps, 1),
                                     "p50_ms": latency["p50"], "p99_ms": latency["p99"]})  # fmt: skip
        # The most requests per second among the counts that keep the tail within the target
        # (p99 <= report.TAIL_TARGET x p50): more processes than cores buy a few per cent of throughput on the
        # floor and pay for it in queueing behind one another when the order writer needs a core.
        steady = [c for c in self.calibration if c["p99_ms"] <= report.TAIL_TARGET * c["p50_ms"]]
        best = max(steady or self.calibration, key=lambda c: c["rps"])["workers"]
        log(f"chosen: {best} workers x {self.options.threads} threads"
            + ("" if steady else f" (none kept p99 within {report.TAIL_TARGET:g} x p50: the fastest)"))  # fmt: skip
        self.deployment.start_web(workers=best, threads=self.options.threads, server=self.options.server)

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

    def _result(self, scenario: str) -> LoadResult:
        return next(result for result in self.results if result.scenario == scenario)

    def _rename_or_drop(self, scenario: str, new_name: str | None) -> None:
        for result in list(self.results):
            if result.scenario == scenario:
                if new_name is None:
                    self.results.remove(result)
                else:
                    result.scenario = new_name
        cpu = self.cpu.pop(scenario, None)
        if new_name is not None and cpu is not None:
            self.cpu[new_name] = cpu

    def _burst(self, scenario: str, sale_id: int, requests: list[Request], *, poll_path: str, api: bool,
               poll_scenario: str) -> dict:  # fmt: skip
        sold = min(self.options.stock, len(self.shoppers))
        sessions_before = _postgres_sessions()
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
        buyers = sorted(int(x) for x in client().smembers(keys.buyers(sale_id)))
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
        sessions_after = _postgres_sessions()
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
        processes = []
        for index in range(parts):
            users, out = self.work / f"drain-users-{index}.txt", self.work / f"drain-reserved-{index}.json"
            users.write_text("".join(f"{user}\n" for user in users_made[index::parts]))
            processes.append((out, subprocess.Popen([sys.executable, "-m", "bench.reserve", str(sale.pk), str(users),
                                                     str(out)], cwd=ROOT, env=self.deployment.env)))  # fmt: skip
        codes: dict[str, int] = {}
        first, last = None, None
        for out, process in processes:
            if process.wait(timeout=60 + units / 50) != 0:
                raise RuntimeError("bench.reserve failed (its output is above)")
            made = json.loads(out.read_text())
            for code, count in made["codes"].items():
                codes[code] = codes.get(code, 0) + count
            first = made["started"] if first is None else min(first, made["started"])
            last = made["ended"] if last is None else max(last, made["ended"])
        reserve_cpu = self._cpu_split(mark, time.monotonic() - started)
        queued = codes.get(SUCCESS_CODE, 0)
        self.queued["drain"] = queued
        used_after = figures.redis_used_memory(redis)
        sale_keys, sale_bytes = figures.keys_memory(redis, keys.pattern(sale.pk))
        broker_after = self.deployment.broker_queue_bytes()
        if codes != {SUCCESS_CODE: units}:
            self.violations.append(f"drain: the gate answered {codes} to {units} shoppers for {units} units")

        log(f"drain: {queued} queued in {last - first:.1f} s; resuming the writer")
        mark, resumed = self._cpu_mark(), time.monotonic()
        self.deployment.celery_resume()
        deadline = resumed + max(120.0, queued / 20)
        landed = 0
        while time.monotonic() < deadline:
            landed = SeckillOrder.objects.filter(sale_id=sale.pk).count()
            if landed >= queued:
                break
            time.sleep(0.05)
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
            "cpu_percent_of_one_core": {"reserving": _rounded(reserve_cpu), "draining": _rounded(drain_cpu)},
        }
        log(f"drain: {landed} orders in {drained:.2f} s = {landed / drained:.0f} orders/s")
        return facts

    def check(self) -> None:
        """The invariants (docs/architecture.md, "Invariants"), per sale, once the queue has drained."""
        redis = client()
        naive_result = next((r for r in self.results if r.scenario == "naive"), None)
        bursts = [
            (f"{scenario}#{number}", sale_id, self.options.stock)
            for scenario, sale_ids in (("burst", self.sales.burst), ("api-burst", self.sales.api_burst))
            for number, sale_id in enumerate(sale_ids, 1)
        ]
        drain = [("drain", self.drain_facts["sale"], self.drain_facts["units"])] if self.drain_facts else []
        for name, sale_id, stock in (
            *bursts,
            *drain,
            ("sold-out", self.sales.sold_out, 0),
            ("naive", self.sales.naive, self.options.stock),
        ):
            orders = SeckillOrder.objects.filter(sale_id=sale_id, live=True)
            count = orders.count()
            db_stock = SeckillGoods.objects.get(pk=sale_id).stock_count
            duplicates = orders.values("user_id").annotate(n=Count("pk")).filter(n__gt=1).count()
            facts = {"initial_stock": stock, "orders": count, "db_stock": db_stock, "duplicates": duplicates,
                     "oversold": max(0, count - stock) + max(0, -db_stock)}  # fmt: skip
            problems = []
            if facts["oversold"]:
                problems.append(f"oversold by {facts['oversold']}")
            if count + db_stock != stock:
                problems.append(f"orders {count} + database stock {db_stock} != initial stock {stock}")
            if duplicates:
                problems.append(f"{duplicates} shoppers with more than one order")
            if name == "naive":
                told = naive_result.codes.get(SUCCESS_CODE, 0) if naive_result else 0
                facts["told_success"] = told
                if told != count:
                    problems.append(f"{told} shoppers told success but {count} orders")
            else:
                redis_stock = redis.get(keys.stock(sale_id))
                reservations = redis.hlen(keys.reservations(sale_id))
                buyers = {int(x) for x in redis.smembers(keys.buyers(sale_id))}
                order_users = set(orders.values_list("user_id", flat=True))
                facts.update(redis_stock=None if redis_stock is None else int(redis_stock),
                             reservations_left=reservations, buyers=len(buyers))  # fmt: skip
                if facts["redis_stock"] != db_stock:
                    problems.append(f"stranded: Redis stock {facts['redis_stock']} != database stock {db_stock}")
                if reservations:
                    problems.append(f"stranded: {reservations} reservations left in {keys.reservations(sale_id)}")
                if buyers != order_users:
                    problems.append(f"{len(buyers - order_users)} queued shoppers without an order")
                if self.queued.get(name, 0) != count:
                    problems.append(f"{self.queued.get(name, 0)} shoppers told queued but {count} orders")
                if buyers:
                    results = redis.mget([keys.result(sale_id, user_id) for user_id in sorted(buyers)])
                    wrong = sum(1 for value in results if value is None or int(value) <= 0)
                    facts["results_without_order"] = wrong
                    if wrong:
                        problems.append(f"{wrong} queued shoppers whose result is not an order id")
            facts["problems"] = problems
            self.checks[name] = facts
            self.violations += [f"{name}: {problem}" for problem in problems]

    # --- the whole run -----------------------------------------------------------------------

    def run(self) -> int:
        # A TERM (a CI timeout, `kill`) unwinds like Ctrl-C, so gunicorn, Celery and the bench's
        # rows are cleaned up rather than left running.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        started = time.monotonic()
        info = machine()
        log(f"machine: {info['nproc']} CPUs, {info['cpu_model']}, load {info['load_average_at_start']}")
        log(f"results and logs in {self.work.relative_to(ROOT) if self.work.is_relative_to(ROOT) else self.work}")
        try:
            self.deploy()
            self.prepare()
            self.calibrate()
            self.warm_up()
            for scenario in self.options.scenarios:
                getattr(self, scenario.replace("-", "_"))()
            self.check()
        finally:
            self.deployment.stop()
            if self.deployment.throwaway:
                log("nothing to clean up: the deployment's database and Redis go with it")
            elif not self.options.keep_data:
                try:
                    prepare.cleanup(
                        sales=self.sales, shoppers=self.shoppers + self.warmup_shoppers, user_ids=self.drain_users
                    )
                except Exception as error:  # noqa: BLE001 - never hide the run's own outcome
                    log(f"warning: cleanup failed: {error!r}")
        return self.finish(info, time.monotonic() - started)

    def finish(self, info: dict, elapsed: float) -> int:
        verdicts = report.ratios(self.results, self.burst_facts.get("drain_seconds_after_last_request"),
                                 hot_row=self.hot_row_facts, drain=self.drain_facts)  # fmt: skip
        workers, threads = self.deployment.web_config
        title = (
            f"seckill bench {self.stamp}: {info['nproc']} x {info['cpu_model']}, {self.deployment.describe()},"
            f" {self.options.concurrency} connections, {len(self.shoppers)} shoppers, {self.options.stock} units,"
            f" {self.generator}"
        )
        print()
        print(title)
        print(report.table(self.results, self.cpu))
        print("  CPU columns: % of one core over the scenario (gen = the load generator, web = the web server,"
              f" pg = every PostgreSQL process, machine = everything, of {100 * (info['nproc'] or 1)}%)")  # fmt: skip
        extra = getattr(self.deployment, "extra_groups", ())
        if extra:
            print(f"  and the cluster's other pieces ({', '.join(extra)}), % of one core:")
            for line in report.extra_cpu_lines(self.results, self.cpu, extra):
                print(line)
        memory = list(self.memory.values())
        for line in report.figure_lines(hot_row=self.hot_row_facts, drain=self.drain_facts, memory=memory,
                                        profiles=self.profiles):  # fmt: skip
            print(line)
        print("\nratios and targets (reported, not enforced):")
        print(report.ratio_lines(verdicts))
        print("\ncorrectness (enforced):")
        for name, facts in self.checks.items():
            shown = {k: v for k, v in facts.items() if k != "problems"}
            print(f"  {name:<12} {'ok' if not facts['problems'] else 'VIOLATED'}  {shown}")
        for name, facts in (("burst", self.burst_facts), ("api-burst", self.api_burst_facts)):
            for key, value in facts.items():
                print(f"  {name} {key.replace('_', ' ')}: {value}")
        payload = {
            "stamp": self.stamp,
            "machine": info,
            "options": {k: str(v) if isinstance(v, Path) else v for k, v in vars(self.options).items()},
            "generator": self.generator,
            "web_server": {"server": self.deployment.server, "workers": workers, "threads": threads},
            "deployment": self.deployment.describe(),
            "calibration": self.calibration,
            "results": [r.as_dict() for r in self.results],
            "cpu_percent_of_one_core": self.cpu,
            "ratios": verdicts,
            "burst": self.burst_facts,
            "api_burst": self.api_burst_facts,
            "hot_row": self.hot_row_facts,
            "drain": self.drain_facts,
            "process_memory_peak": memory,
            "profiles": self.profiles,
            "checks": self.checks,
            "violations": self.violations,
            "seconds": round(elapsed, 1),
        }
        self.payload = payload
        json_path = self.output / f"bench-{self.stamp}.json"
        report.save_json(json_path, payload)
        chart_path = self.output / f"bench-{self.stamp}.png"
        try:
            report.chart(chart_path, self.results, title)
        except ImportError:
            chart_path = None
            print("matplotlib is missing (pip install -r requirements-dev.txt): no chart")
        print(f"\nsaved {json_path.relative_to(ROOT) if json_path.is_relative_to(ROOT) else json_path}"
              + (f" and {chart_path.name}" if chart_path else "") + f"; the run took {elapsed:.0f} s")  # fmt: skip
        if self.violations:
            print("\nFAILED: correctness violations:")
            for violation in self.violations:
                print(f"  - {violation}")
            return 1
        print("all invariants held")
        return 0


def _rounded(split: dict[str, float]) -> dict[str, float]:
    return {group: round(value, 1) for group, value in split.items()}


def _postgres_sessions() -> int | None:
    """Connections PostgreSQL (14+) has accepted so far into this database."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
            return int(cursor.fetchone()[0])
    except (DatabaseError, TypeError):
        return None
