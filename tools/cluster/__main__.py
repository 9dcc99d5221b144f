"""`make cluster-test`: start the topology of deploy/, burst through HAProxy while injecting
faults, check the invariants after each, print the table; non-zero exit on any violation.

    python -m tools.cluster [--scenarios a,b,...] [--shoppers N] [--stock N]
    python -m tools.cluster up      # only start the topology and keep it until Ctrl-C

Needs root for nothing but installing missing Debian packages (the Makefile does that).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import traceback

from tools.cluster.scenario import DEFAULT_SCENARIOS, SCENARIOS, ClusterRow, ClusterRun, as_json, table
from tools.cluster.topology import RUN, Topology, log


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="test", choices=("test", "up"))
    parser.add_argument(
        "--scenarios", default=",".join(DEFAULT_SCENARIOS), help=f"comma list of {', '.join(SCENARIOS)}"
    )
    parser.add_argument("--shoppers", type=int, default=2000, help="shoppers per scenario")
    parser.add_argument("--stock", type=int, default=300, help="units per sale")
    parser.add_argument("--single-redis", action="store_true", help="one Redis server instead of the cluster")
    args = parser.parse_args(argv)
    chosen = [name for name in args.scenarios.split(",") if name]
    unknown = set(chosen) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")

    signal.signal(signal.SIGTERM, _interrupt)  # teardown on SIGTERM as on Ctrl-C
    started = time.monotonic()
    topology = Topology(redis_cluster_mode=False if args.single_redis else None)
    rows = []
    try:
        topology.start()
        if args.command == "up":
            log("running; Ctrl-C stops everything")
            while True:
                time.sleep(3600)
        os.environ.update(topology.harness_env())
        import django

        django.setup()
        run = ClusterRun(topology, args.shoppers, args.stock)
        for name in chosen:
            log(f"scenario {name}: {args.shoppers} shoppers, {args.stock} units")
            try:
                row = SCENARIOS[name](run)
            except Exception as error:  # noqa: BLE001 - one broken scenario must not hide the others
                log(f"  scenario {name} crashed: {error!r}")
                traceback.print_exc()
                row = ClusterRow(name, requests=-1, notes=f"crashed: {error!r}"[:300])
            log(f"  -> {'ok' if row.ok else 'VIOLATION'}: {row}")
            rows.append(row)
    except KeyboardInterrupt:
        log("interrupted; tearing down")
        return 130
    finally:
        log("stopping the topology")
        topology.stop()
        if rows:
            (RUN / "results.json").write_text(as_json(rows))
            print(table(rows), flush=True)
            log(f"{time.monotonic() - started:.0f}s in all; logs in {RUN / 'logs'}")
    failed = [row.scenario for row in rows if row.requests < 0 or (row.requests > 0 and not row.ok)]
    print(f"{len(rows) - len(failed)} passed, {len(failed)} failed", flush=True)
    return 1 if failed or len(rows) < len(chosen) else 0


if __name__ == "__main__":
    sys.exit(main())
