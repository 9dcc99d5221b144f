"""The server comparison and the writer's ratio, as `make bench` prints them."""

from lab.bench.report import WRITER_TARGET, ratios, server_table


def _run(server: str, floor: float, burst: float, web_percent: float) -> dict:
    latency = {"p50": 10.0, "p99": 30.0}
    return {
        "web_server": {"server": server, "workers": 2, "threads": 2},
        "results": [
            {"scenario": "floor", "rps": floor, "latency_ms": latency},
            {"scenario": "burst", "rps": burst, "latency_ms": latency},
        ],
        "cpu_percent_of_one_core": {"floor": {"web": web_percent}, "burst": {"web": web_percent}},
    }


def test_servers_are_compared_with_the_first_ones_floor_and_per_core_used():
    table = server_table([_run("gunicorn-gthread", 500, 400, 100), _run("granian", 1000, 900, 150)])
    gthread, granian = (line.split() for line in table.splitlines()[2:4])
    assert gthread[-5:] == ["0.80", "1.00", "0.80", "500", "400"]
    assert granian[-5:] == ["0.90", "2.00", "1.80", "667", "600"]


def test_the_writer_is_compared_with_the_hot_row():
    verdicts = ratios([], None, hot_row={"purchases_per_second": 1000.0}, drain={"orders_per_second": 5000.0})
    assert verdicts == [
        {"name": "writer orders/s / hot-row purchases/s", "value": 5.0, "target": f">= {WRITER_TARGET}", "met": True}
    ]
