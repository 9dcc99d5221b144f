"""The faults of `make partition-test` (tools/cluster/partition.py): links cut and slowed."""

from __future__ import annotations

from tools.cluster.scenario import ClusterRow, ClusterRun


class PartitionRun(ClusterRun):
    def baseline(self) -> ClusterRow:
        return self.run_burst("no fault")


SCENARIOS = {"baseline": PartitionRun.baseline}
DEFAULT_SCENARIOS = ("baseline",)
