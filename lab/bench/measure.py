"""The bench's measurement: driving a scenario from the load generator, the CPU each process
spent on it, peak memory, optional profiles, and the answers each scenario must produce."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from lab.bench import edge, figures, load
from lab.bench.load import LoadResult, Request
from lab.bench.profile import flamegraph
from tools.net import logger

SOLD_OUT_CODE = "500500"
NOT_STARTED_CODE = "500502"
SUCCESS_CODE = "0"


log = logger("bench")


def machine_busy() -> tuple[float, float]:
    """(busy jiffies, total jiffies) of the whole machine, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def rounded(split: dict[str, float]) -> dict[str, float]:
    return {group: round(value, 1) for group, value in split.items()}


def postgres_sessions() -> int | None:
    """Connections PostgreSQL (14+) has accepted so far into this database."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
            return int(cursor.fetchone()[0])
    except (DatabaseError, TypeError):
        return None


class Measurement:
    """Mixed into lab.bench.run.Bench, whose __init__ sets the state these methods use."""

    def drive(self, scenario: str, requests: list[Request], *, mode: str, record: bool = True,
              seconds: float | None = None, rate: float | None = None) -> LoadResult:  # fmt: skip
        duration = seconds if seconds is not None else self.options.duration
        # The open loop is the asyncio generator's alone (lab.bench.asyncload).
        generator = "async" if mode == "rate" else self.generator
        if mode == "once":
            what = f"{len(requests)} requests once each"
        else:
            what = f"{rate:.0f} req/s for {duration:.0f} s" if mode == "rate" else f"{duration:.0f} s"
        via_edge = self.edge is not None and scenario in edge.EDGE_SCENARIOS
        log(f"{scenario}: {what}, {self.options.concurrency} connections, {generator}"
            + (" through the edge" if via_edge else ""))  # fmt: skip
        file = load.write_requests(requests, self.work, scenario)
        kinds = record and any(request.kind for request in requests)
        web_log = getattr(self.deployment, "log_dir", self.work) / "web.log"
        log_offset = edge.log_size(web_log) if kinds else 0
        edge_before = self.edge.counters() if via_edge else {}
        cpu_before = self._cpu_mark()
        profiler = self._profile_start(scenario) if record else None
        result = load.run(
            scenario=scenario,
            base_url=self.edge.url if via_edge else self.deployment.url,
            requests_file=file,
            mode=mode,
            connections=self.options.concurrency,
            duration=duration if mode in ("loop", "rate") else max(60.0, duration),
            generator=generator,
            threads=self.options.generator_threads,
            rate=rate,
        )
        self._profile_stop(profiler, scenario)
        if kinds:
            self.edge_facts[scenario] = {
                "via_edge": via_edge,
                "by_kind": result.edge_by_kind,
                "django_by_kind": edge.django_lines_by_kind(web_log, log_offset),
            } | ({"varnishstat": edge.counters_delta(edge_before, self._edge_counters_settled())} if via_edge else {})
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

    def _edge_counters_settled(self) -> dict[str, int]:
        """varnishstat's counters a second after the scenario: Varnish's worker threads add their
        counts to the shared ones in batches, not at every request, and read at once the last
        requests were missing."""
        time.sleep(1.0)
        return self.edge.counters()

    def _cpu_mark(self) -> tuple[dict, tuple[float, float]]:
        return self.deployment.cpu_seconds(), machine_busy()

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
