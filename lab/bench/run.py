"""`make bench`: load-test a production-like deployment and check the invariants afterwards.

Called by `python -m lab.bench` (lab/bench/__main__.py documents the options). Steps:

1. deploy: migrate, a Celery worker, gunicorn (lab.bench.settings: production with DEBUG off on
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

Bench (here) deploys, calibrates and runs the steps; what each scenario sends and checks is
lab.bench.scenarios, how a scenario is driven and measured lab.bench.measure, the tables lab.bench.report.
"""

from __future__ import annotations

import os
import platform
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lab import prepare
from lab.bench import edge, load, opening, report, waiting_room
from lab.bench.drawn import DrawnSale
from lab.bench.edge import BenchEdge
from lab.bench.load import LoadResult
from lab.bench.measure import Measurement, log
from lab.bench.scenarios import Scenarios
from lab.bench.waiting_room import WaitingRoomOpening
from lab.shopper import Shopper
from tools import opening_mix
from tools.deploy import DEFAULT_SERVER, ROOT, Deployment

SCENARIOS = (
    "bare", "floor", "sold-out", "not-started", "detail-poll", "sale-state", "burst", "opening-mix", "result-poll",
    "opening-open", "waiting-room", "captcha", "api-sold-out", "api-burst", "naive", "pages", "hot-row", "drain",
)  # fmt: skip
# Run whatever --scenarios says: the yardstick of every ratio (lab/bench/bare.py).
ALWAYS = ("bare",)


@dataclass
class Options:
    shoppers: int = 3000
    stock: int = 500
    concurrency: int = 64
    duration: float = 8.0
    workers: list[int] = field(default_factory=lambda: [2, 3, 4])
    threads: int = 2
    server: str = DEFAULT_SERVER  # tools.deploy.SERVERS
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
    cluster: bool = False  # the deployment is the scale-out topology (lab/bench/cluster.py)
    edge: bool = False  # the opening's scenarios through Varnish (lab/bench/edge.py)


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


class Bench(Measurement, Scenarios, WaitingRoomOpening):
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
        self.shoppers: list[Shopper] = []
        self.warmup_shoppers: list[Shopper] = []
        self.calibration: list[dict] = []
        self.burst_facts: dict = {}
        self.api_burst_facts: dict = {}
        self.queued: dict[str, int] = {}  # burst scenario -> shoppers told "queued"
        self.checks: dict = {}
        self.hot_row_facts: dict = {}
        self.drain_facts: dict = {}
        self.drain_users: list[int] = []
        self.not_started_sale: int | None = None  # made by the first scenario that needs it
        self.memory: dict[int, dict] = {}  # pid -> its peak RSS / USS over the recorded scenarios
        self.profiles: dict[str, dict] = {}  # scenario -> top frames (--profile)
        self.edge = BenchEdge(self.work / "edge") if options.edge else None
        self.edge_facts: dict[str, dict] = {}  # scenario -> its requests by kind: edge, web server, Django
        self.opening_sale: int | None = None  # made by the first scenario that needs it
        self.drawn_sale: DrawnSale | None = None  # made by the first scenario that needs it
        self.waiting_facts: dict = {}  # the waiting-room scenario's figures (lab.bench.waiting_room)
        self.payload: dict = {}

    def _pick_generator(self) -> str:
        wanted = self.options.generator
        if wanted in ("auto", "wrk") and load.wrk_path():
            return "wrk"
        if wanted == "wrk":
            raise SystemExit("wrk is not installed (Debian: apt-get install wrk); try --generator async")
        return "async"

    # --- load ----------------------------------------------------------------------------
    def deploy(self) -> None:
        if self.options.cluster:
            log(f"deployed: {self.deployment.describe()}; the balancer on {self.deployment.url}")
        else:
            log(f"deploying on {self.deployment.url}: migrate, a Celery worker -c {self.options.celery_concurrency}")
        if self.edge is not None:
            # Before any shop process starts: each takes EDGE_PURGE_URLS from its environment.
            url = self.edge.start(f"127.0.0.1:{self.deployment.port}", self.deployment.env)
            self.deployment.env["EDGE_PURGE_URLS"] = url
            log(f"edge: varnishd (deploy/edge.vcl) on {url} in front of {self.deployment.url}, purged by the shop;"
                f" {', '.join(edge.EDGE_SCENARIOS)} go through it")  # fmt: skip
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
            for scenario in (*[name for name in ALWAYS if name not in self.options.scenarios], *self.options.scenarios):
                getattr(self, scenario.replace("-", "_"))()
            self.check()
        finally:
            if self.edge is not None:
                self.edge.stop()
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
        verdicts += edge.verdicts(self.edge_facts)
        verdicts += waiting_room.verdicts(self.waiting_facts)
        workers, threads = self.deployment.web_config
        title = (
            f"seckill bench {self.stamp}: {info['nproc']} x {info['cpu_model']}, {self.deployment.describe()},"
            f" {self.options.concurrency} connections, {len(self.shoppers)} shoppers, {self.options.stock} units,"
            f" {self.generator}" + (f", edge (Varnish) for {', '.join(edge.EDGE_SCENARIOS)}" if self.edge else "")
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
        for line in edge.edge_lines(self.edge_facts):
            print(line)
        by_kind = opening.kind_rows(self.opening_facts(), opening_mix.load()) if self.opening_facts() else {}
        for line in opening.kind_lines(by_kind):
            print(line)
        for line in waiting_room.figure_lines(self.waiting_facts):
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
            "requests_by_kind": self.edge_facts,
            "opening_mix_by_kind": by_kind,
            "waiting_room": self.waiting_facts,
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
