"""What the bench checks and adds up around each scenario: the answers it must get, the CPU
each kind of process spent, the peak memory kept, the hot row's statements, Redis's memory."""

import os

import pytest
from django.db import connection

from lab.bench import figures
from lab.bench.load import LoadResult
from lab.bench.measure import Measurement, rounded
from orders.models import Order
from seckill_site.redis import client
from testutils.factories.sales import make_sale
from testutils.factories.users import make_user


def result(scenario: str = "burst", *, statuses=None, codes=None, socket_errors=None) -> LoadResult:
    return LoadResult(scenario, "wrk", 8, 10, 1.0, {"p50": 1.0, "p99": 2.0}, statuses or {"200": 10},
                      codes or {"0": 10}, socket_errors=socket_errors or {})  # fmt: skip


class Deployment:
    """What a bench deployment tells the measurement: CPU seconds per process and its pids."""

    def __init__(self, cpu: dict[int, tuple[str, float]], pids: dict[str, list[int]] | None = None) -> None:
        self.cpu, self._pids = cpu, pids or {}

    def cpu_seconds(self) -> dict[int, tuple[str, float]]:
        return dict(self.cpu)

    def pids(self, kind: str) -> list[int]:
        return self._pids.get(kind, [])


class Bench(Measurement):
    def __init__(self, deployment: Deployment | None = None) -> None:
        self.deployment = deployment or Deployment({})
        self.violations: list[str] = []
        self.results: list[LoadResult] = []
        self.cpu: dict[str, dict[str, float]] = {}
        self.memory: dict[int, dict] = {}


def test_answers_as_expected_leave_no_violation():
    bench = Bench()
    bench.expect(result(codes={"0": 4, "500500": 6}), codes={"0", "500500"}, statuses={"200"})
    bench.expect(result(codes={"0": 4, "500500": 6}), codes={"0": 4, "500500": 6, "500100": 0}, statuses={"200"})
    assert bench.violations == []


def test_an_unexpected_status_answer_or_socket_error_is_a_violation_each():
    bench = Bench()
    bench.expect(
        result(statuses={"200": 8, "502": 2}, codes={"0": 8, "none": 2}, socket_errors={"read": 1}),
        codes={"0"},
        statuses={"200"},
    )
    assert bench.violations == [
        "burst: unexpected HTTP statuses {'502': 2}",
        "burst: unexpected answers {'0': 8, 'none': 2}",
        "burst: socket errors {'read': 1}",
    ]


def test_exact_counts_must_match_exactly():
    bench = Bench()
    bench.expect(result(codes={"0": 5, "500500": 5}), codes={"0": 4, "500500": 6}, statuses={"200"})
    assert bench.violations == ["burst: answers {'0': 5, '500500': 5}, expected {'0': 4, '500500': 6}"]


def test_cpu_is_split_by_kind_from_each_process_own_seconds(monkeypatch):
    deployment = Deployment({1: ("web", 10.0), 2: ("web", 5.0), 3: ("redis", 1.0)})
    bench = Bench(deployment)
    machine = iter([(100, 1000), (150, 1100)])
    monkeypatch.setattr("lab.bench.measure.machine_busy", lambda: next(machine))
    mark = bench._cpu_mark()
    # web 1 spent 2 s, web 2 1 s, redis 0.5 s; pid 4 started meanwhile and counts whole
    deployment.cpu = {1: ("web", 12.0), 2: ("web", 6.0), 3: ("redis", 1.5), 4: ("celery", 0.25)}
    split = bench._cpu_split(mark, wall=2.0)
    assert split == {"web": 150.0, "redis": 25.0, "celery": 12.5, "machine": 50.0 * (os.cpu_count() or 1)}
    assert rounded({"web": 12.345, "redis": 0.04}) == {"web": 12.3, "redis": 0.0}


def test_the_machine_is_read_from_proc_stat():
    from lab.bench.measure import machine_busy

    busy, total = machine_busy()
    assert 0 < busy < total


def test_a_renamed_scenario_takes_its_cpu_along_and_a_dropped_one_leaves_nothing():
    bench = Bench()
    bench.results = [result("burst#1"), result("burst#2"), result("floor")]
    bench.cpu = {"burst#1": {"web": 1.0}, "burst#2": {"web": 2.0}}
    bench._rename_or_drop("burst#1", "burst")
    bench._rename_or_drop("burst#2", None)
    assert [r.scenario for r in bench.results] == ["burst", "floor"]
    assert bench.cpu == {"burst": {"web": 1.0}}
    assert bench._result("floor").scenario == "floor"


def test_each_process_keeps_its_peak_memory_over_the_scenarios(monkeypatch):
    readings = iter(
        [
            {
                "web": [{"pid": 1, "rss_mb": 50.0, "uss_mb": 20.0}],
                "celery": [{"pid": 2, "rss_mb": 90.0, "uss_mb": 9.0}],
            },
            {
                "web": [{"pid": 1, "rss_mb": 70.0, "uss_mb": 30.0}],
                "celery": [{"pid": 2, "rss_mb": 80.0, "uss_mb": 8.0}],
            },
        ]
    )
    monkeypatch.setattr(figures, "process_memory", lambda pids: next(readings))
    bench = Bench()
    bench._memory_note()
    bench._memory_note()
    assert bench.memory == {
        1: {"kind": "web", "pid": 1, "rss_mb": 70.0, "uss_mb": 30.0},
        2: {"kind": "celery", "pid": 2, "rss_mb": 90.0, "uss_mb": 9.0},
    }


def test_process_memory_reads_a_live_process_and_skips_a_gone_one():
    gone = 2**22 + 1  # above the kernel's largest pid
    memory = figures.process_memory({"web": [os.getpid(), gone]})
    (entry,) = memory["web"]
    assert entry["pid"] == os.getpid()
    assert entry["rss_mb"] >= entry["uss_mb"] > 1


def test_redis_memory_is_the_servers_used_memory():
    redis = client()
    used = figures.redis_used_memory(redis)
    info = redis.info("memory")
    assert abs(used - int(info["used_memory"])) < 1024 * 1024


@pytest.mark.django_db
def test_the_hot_row_statements_sell_one_unit_and_make_one_order_until_none_is_left():
    sale = make_sale(stock=1, warm=False)
    user = make_user()
    statements = figures._purchase_sql(sale=str(sale.pk), goods_id=sale.goods_id, user_id=user.pk)
    with connection.cursor() as cursor:
        for _ in range(2):
            for sql in statements:
                cursor.execute(sql)
    sale.refresh_from_db()
    assert sale.stock_count == 0  # the second UPDATE found no stock: the row stays at zero
    orders = Order.objects.filter(sale=sale)
    assert orders.count() == 2  # the INSERT does not look at the UPDATE: an upper bound, as documented
    assert {order.user_id for order in orders} == {user.pk}
    assert all(order.order_no.startswith("B") for order in orders)
