"""`make cluster-test`: start the topology of deploy/, burst through the edge and HAProxy while
injecting faults, check the invariants after each, print the table; non-zero exit on any violation.

    python -m lab.cluster [--scenarios a,b,...] [--shoppers N] [--stock N]
    python -m lab.cluster up      # only start the topology and keep it until Ctrl-C

Needs root for nothing but installing missing Debian packages (the Makefile does that).
"""

from __future__ import annotations

import argparse
import sys

from lab.cluster import scenario
from lab.cluster.database_faults import DATABASE_SCENARIOS, DatabaseFaults
from lab.cluster.scenario import ClusterRun, run_scenarios
from lab.cluster.topology import Topology

SCENARIOS = {**scenario.SCENARIOS, **DATABASE_SCENARIOS}
DEFAULT_SCENARIOS = (*scenario.DEFAULT_SCENARIOS, *DATABASE_SCENARIOS)


class Run(DatabaseFaults, ClusterRun):
    """The web, worker, broker, Redis and edge rows, and PostgreSQL's."""


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

    topology = Topology(redis_cluster_mode=False if args.single_redis else None)
    return run_scenarios(
        topology,
        lambda topology: Run(topology, args.shoppers, args.stock),
        chosen,
        SCENARIOS,
        up_only=args.command == "up",
    )


if __name__ == "__main__":
    sys.exit(main())
