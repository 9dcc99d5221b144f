"""The load-test harness behind `make bench` / `manage.py seckill_bench` (see bench.run)."""
