"""The load-test harness behind `make bench` / `python -m lab.bench` (see lab.bench.run)."""
