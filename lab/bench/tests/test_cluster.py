"""`--cluster`: what is checked before the topology starts, and how its processes are grouped.
The topology itself runs in `make bench ARGS=--cluster` (minutes), not here."""

import sys

import pytest

from lab.bench import __main__ as command
from lab.bench import cluster
from lab.bench.load import LoadResult
from lab.bench.report import extra_cpu_lines
from tools.processes import Processes


def test_missing_packages_are_named_before_anything_starts(monkeypatch, capsys):
    monkeypatch.setattr(cluster, "missing_packages", lambda: ["haproxy", "rabbitmq-server"])
    monkeypatch.setattr(cluster.BenchTopology, "start", lambda self: pytest.fail("the topology was started"))
    assert command.main(["--cluster"]) == 1
    assert "apt-get install haproxy rabbitmq-server" in capsys.readouterr().err


def test_a_server_list_is_refused_with_cluster(monkeypatch):
    monkeypatch.setattr(cluster.BenchTopology, "start", lambda self: pytest.fail("the topology was started"))
    with pytest.raises(SystemExit):
        command.main(["--cluster", "--server", "granian,gunicorn-sync"])


class _Topology:
    def __init__(self, processes):
        self.processes = processes
        self.url = "http://127.0.0.1:18000"
        self.secret_key = "k"

    def web_name(self, index: int) -> str:
        return f"web{index + 1}"

    def bench_env(self) -> dict:
        return {}


def test_processes_are_grouped_by_kind_for_cpu_and_memory(tmp_path):
    sleep = [sys.executable, "-c", "import time; time.sleep(30)"]
    processes = Processes(tmp_path)
    for name in ("web1", "web3", "worker2", "haproxy"):
        processes.spawn(name, sleep)
    try:
        deployment = cluster.ClusterDeployment(_Topology(processes))
        assert sorted(deployment.pids("web")) == sorted([processes["web1"].pid, processes["web3"].pid])
        assert deployment.pids("celery") == [processes["worker2"].pid]
        groups = deployment.cpu_seconds()
        assert groups[processes["haproxy"].pid][0] == "haproxy"
        assert groups[processes["web3"].pid][0] == "web"
    finally:
        processes.halt_all(timeout=5)
    assert not processes


def test_the_clusters_other_pieces_are_listed_beside_the_table():
    result = LoadResult(scenario="floor", generator="wrk", connections=64, requests=10, seconds=1.0,
                        latency_ms={}, statuses={"200": 10}, codes={"0": 10})  # fmt: skip
    cpu = {"floor": {"haproxy": 12.4, "rabbitmq": 3.0}}
    lines = extra_cpu_lines([result], cpu, ("haproxy", "pgbouncer", "rabbitmq"))
    assert lines == ["    floor       haproxy 12%  pgbouncer 0%  rabbitmq 3%"]


def test_the_drains_cpu_split_names_the_clusters_pieces_before_other():
    from lab.bench.report import _split

    split = {"machine": 190, "other": 20, "rabbitmq": 30, "web": 5, "haproxy": 1, "celery": 40}
    assert _split(split) == "web 5%, celery 40%, haproxy 1%, rabbitmq 30%, other 20%, machine 190%"
