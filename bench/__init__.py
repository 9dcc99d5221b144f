"""The load-test harness behind `make bench` / `python -m bench` (see bench.run)."""
