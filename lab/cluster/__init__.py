"""`make cluster-test`: the multi-node topology of deploy/ on one machine, and its faults."""
