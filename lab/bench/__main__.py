"""`make bench` / `python -m lab.bench`: load-test a production-like deployment (gunicorn, Celery,
the PostgreSQL and Redis of DATABASE_URL / REDIS_URL) with wrk: floor, sold-out, burst, naive
baseline and pages; then check the invariants. Prints a table and ratios, saves JSON and a PNG
chart under bench-results/. Exits non-zero on any correctness violation."""

import argparse
import os
import sys
from pathlib import Path

from tools.deploy import DEFAULT_SERVER, SERVERS


class CommandError(Exception):
    pass


def _workers(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise CommandError("--workers takes a count or a comma-separated list of candidates, e.g. 2,3,4")
    return counts


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lab.bench", description=__doc__)
    parser.add_argument("--users", type=int, default=3000, help="distinct shoppers in the burst (default 3000)")
    parser.add_argument("--stock", type=int, default=500, help="units in the burst and naive sales (default 500)")
    parser.add_argument("--concurrency", type=int, default=64, help="open connections, every scenario (64)")
    parser.add_argument(
        "--duration", type=float, default=8.0, help="seconds for each timed scenario: floor, sold-out and pages (8)"
    )
    parser.add_argument(
        "--workers",
        default="2,3,4",
        help="gunicorn worker count, or candidates to choose from by measured floor throughput (2,3,4)",
    )
    parser.add_argument(
        "--threads", type=int, default=2, help="threads per web worker: gunicorn gthread, granian's blocking (2)"
    )
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help=f"web server: {', '.join(SERVERS)} ({DEFAULT_SERVER}); a comma-separated list runs the chosen"
        " scenarios once per server and prints a comparison (e.g. --server gunicorn-gthread,gunicorn-sync,granian"
        " --scenarios floor,burst)",
    )
    parser.add_argument("--celery-workers", type=int, default=2, help="Celery worker concurrency (2)")
    parser.add_argument(
        "--celery-nice",
        type=int,
        default=19,
        help="nice level of the Celery worker (19: it yields the CPU to gunicorn while both want it; 0 to share)",
    )
    parser.add_argument("--generator", choices=["auto", "wrk", "async"], default="auto",
                        help="load generator: wrk, else a Python asyncio client (auto)")  # fmt: skip
    parser.add_argument(
        "--bursts",
        type=int,
        default=3,
        help="repetitions of each burst, on fresh sales; the median is reported (3)",
    )
    parser.add_argument(
        "--scenarios",
        default="",
        help="comma-separated subset of the scenarios (all); the invariants are checked either way",
    )
    parser.add_argument(
        "--drain-stock",
        type=int,
        default=20000,
        help="units of the drain scenario's sale: reserved through the gate's service, then written (20000)",
    )
    parser.add_argument(
        "--hot-row-clients", type=int, default=4, help="pgbench clients on the hot-row scenario's one row (4)"
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="run the scenarios through the scale-out topology of `make cluster-test` (HAProxy, 3 web nodes,"
        " Celery workers, Redis Cluster, RabbitMQ x3, PgBouncer; lab/bench/cluster.py) instead of one gunicorn/granian",
    )
    parser.add_argument(
        "--redis-wait",
        default="",
        help="with --cluster: REDIS_WAIT_REPLICAS on the web nodes (deploy/cluster.env: 1); a comma-separated list"
        " (1,0) runs the chosen scenarios once per value on one topology, restarting the web nodes between, and"
        " prints the burst with and without the replica's confirmation",
    )
    parser.add_argument(
        "--edge",
        action="store_true",
        help="drive the scenarios of lab/bench/edge.py's EDGE_SCENARIOS (the opening's, waiting-room) through"
        " Varnish (deploy/edge.vcl, tools/edge.py;"
        " Debian: varnish, varnish-modules) in front of the web server, the shop purging it; every other"
        " scenario as without it (lab/bench/edge.py)",
    )
    parser.add_argument("--output", default="bench-results", help="directory for JSON, chart and logs")
    parser.add_argument("--keep-data", action="store_true", help="keep the bench's users, sales and orders")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="py-spy every scenario's gunicorn workers (raw stacks in the run dir)",
    )

    return parser


def _servers(text: str) -> list[str]:
    servers = [part.strip() for part in text.split(",") if part.strip()]
    if not servers or set(servers) - set(SERVERS):
        raise CommandError(f"--server takes names from: {', '.join(SERVERS)}")
    return servers


def main(argv: list[str]) -> int:
    parser = arguments()
    options = vars(parser.parse_args(argv))
    if options["cluster"]:
        if options["edge"]:
            parser.error("--edge runs one varnishd before the single-node web server: not with --cluster")
        return cluster_main(parser, options)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.local")
    import django

    django.setup()
    from lab.bench.run import SCENARIOS

    try:
        return run(options, SCENARIOS)
    except CommandError as error:
        parser.error(str(error))


def cluster_main(parser: argparse.ArgumentParser, options: dict) -> int:
    """Start the topology first, then Django in this process with the topology's environment
    (its Redis Cluster, its brokers, its database): the bench prepares shoppers, paths and
    sales through the product's services in this process, as the web nodes will read them."""
    import signal

    from lab.bench.cluster import BenchTopology, ClusterDeployment, missing_packages
    from lab.cluster.topology import log

    if "," in options["server"]:
        parser.error("--cluster runs the topology's web tier once: --server takes no list with it")
    missing = missing_packages()
    if missing:
        packages = " ".join(missing)
        print(f"error: --cluster needs the Debian packages: {packages}"
              f" (apt-get install {packages}; `make bench` installs them as root)", file=sys.stderr)  # fmt: skip
        return 1
    # A TERM (a CI timeout, `kill`) tears the topology down like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    topology = BenchTopology()
    try:
        log("starting the cluster topology (lab/cluster/topology.py) with lab.bench.settings on every node")
        topology.start()
        os.environ.update(topology.bench_env())
        import django

        django.setup()
        from lab.bench.run import SCENARIOS

        waits = [part.strip() for part in options["redis_wait"].split(",") if part.strip()]
        try:
            if not waits:
                return run(options, SCENARIOS, deployment=ClusterDeployment(topology))
            return redis_wait_compare(options, SCENARIOS, topology, waits)
        except CommandError as error:
            parser.error(str(error))
    finally:
        topology.stop()


def redis_wait_compare(options: dict, scenario_names, topology, waits: list[str]) -> int:
    """The chosen scenarios once per REDIS_WAIT_REPLICAS value, on one topology: the web nodes
    restart with each value (the Redis nodes keep min-replicas-to-write); then the burst's and
    floor's req/s and p99 side by side. What waiting for a replica costs."""
    from lab.bench import report
    from lab.bench.cluster import ClusterDeployment
    from lab.cluster.topology import WEB_HOSTS, log, wait_until

    status, runs = 0, []
    for wait in waits:
        log(f"=== REDIS_WAIT_REPLICAS={wait}: restarting the web nodes ===")
        topology.env["REDIS_WAIT_REPLICAS"] = wait
        for index in range(len(WEB_HOSTS)):  # one at a time, drained first, as a deploy does
            topology.web_stop(index)
            topology.web_start(index)
        wait_until(lambda: set(topology.balancer_states().values()) == {"UP"}, 30)  # rise 2 x inter 1 s
        deployment = ClusterDeployment(topology)
        deployment.stopped = True  # the next value runs on this topology: cluster_main stops it at the end
        status |= run(dict(options), scenario_names, deployment=deployment)
        runs.append(run.last_payload)
    lines = [f"REDIS_WAIT_REPLICAS compared in one run ({', '.join(waits)}):"]
    for wait, payload in zip(waits, runs, strict=True):
        by_name = {r["scenario"]: r for r in (payload or {}).get("results", [])}
        cells = [
            f"{name} {by_name[name]['rps']:.0f} req/s p50 {by_name[name]['latency_ms']['p50']:.1f} ms"
            f" p99 {by_name[name]['latency_ms']['p99']:.1f} ms"
            for name in ("floor", "burst")
            if name in by_name
        ]
        lines.append(f"  wait={wait}: " + "; ".join(cells))
    print("\n".join(lines))
    report.save_json(Path(options["output"]).resolve() / "redis-wait.json", {"waits": waits, "runs": runs})
    return status


def run(options: dict, scenario_names: tuple[str, ...], deployment=None) -> int:
    from lab.bench import report
    from lab.bench.run import Bench, Options, log

    chosen = options["scenarios"] or ",".join(scenario_names)
    scenarios = tuple(name.strip() for name in chosen.split(",") if name.strip())
    if not scenarios or set(scenarios) - set(scenario_names):
        raise CommandError(f"--scenarios takes names from: {', '.join(scenario_names)}")
    if min(options["users"], options["stock"], options["concurrency"], options["bursts"]) < 1:
        raise CommandError("--users, --stock, --concurrency and --bursts must be positive")
    if options["drain_stock"] < 1 or options["hot_row_clients"] < 1:
        raise CommandError("--drain-stock and --hot-row-clients must be positive")
    servers = _servers(options["server"])
    status, runs = 0, []
    for server in servers:
        if len(servers) > 1:
            log(f"=== server {server} ({servers.index(server) + 1} of {len(servers)}) ===")
        bench = Bench(
            Options(
                shoppers=options["users"],
                stock=options["stock"],
                concurrency=options["concurrency"],
                duration=options["duration"],
                workers=_workers(options["workers"]),
                threads=options["threads"],
                server=server,
                celery_concurrency=options["celery_workers"],
                celery_nice=options["celery_nice"],
                generator=options["generator"],
                output=Path(options["output"]).resolve(),
                keep_data=options["keep_data"],
                profile=options["profile"],
                scenarios=tuple(name for name in scenario_names if name in scenarios),
                bursts=options["bursts"],
                drain_stock=options["drain_stock"],
                hot_row_clients=options["hot_row_clients"],
                cluster=options["cluster"],
                edge=options["edge"],
            ),
            deployment=deployment,
        )
        status |= bench.run()
        runs.append(bench.payload)
    run.last_payload = runs[-1] if runs else None
    if len(servers) > 1:
        table = report.server_table([run for run in runs if run])
        print(f"\nservers compared in this run ({', '.join(servers)}):\n{table}")
        path = Path(options["output"]).resolve() / f"servers-{runs[0].get('stamp', 'run')}.json"
        report.save_json(path, {"servers": servers, "runs": runs, "table": table})
        print(f"saved {path.name}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
