"""The cluster topology's addresses against the deploy/ files it runs with: they name the same
hosts and ports by hand, and a mismatch would send the test's load or probes somewhere the
deployment does not listen (or to a node of another role)."""

import re

import pytest

from lab.cluster import topology
from lab.cluster.topology import (
    BALANCER_PORT,
    DATABASE,
    DATABASE_HOSTS,
    DEPLOY,
    EDGE_PORT,
    LEADER_PORT,
    PGBOUNCER_PORT,
    RABBIT_NODES,
    REDIS_HOSTS,
    STATS_PORT,
    WEB_HOSTS,
    WEB_PORT,
    rabbit_env,
)


def env_file() -> dict[str, str]:
    lines = (DEPLOY / "cluster.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#") and "=" in line)


def test_haproxy_listens_where_the_topology_sends_and_balances_its_web_nodes_and_database_hosts():
    config = (DEPLOY / "haproxy.cfg").read_text()
    binds = set(re.findall(r"bind 127\.0\.0\.1:(\d+)", config))
    assert {str(BALANCER_PORT), str(STATS_PORT), str(LEADER_PORT)} <= binds
    assert re.findall(r"server web\d (\S+)", config) == [f"{host}:{WEB_PORT}" for host in WEB_HOSTS]
    assert dict(re.findall(r"server (pg\d) (\S+):5432", config)) == DATABASE_HOSTS


def test_pgbouncer_listens_on_its_port_and_reaches_the_leader_through_haproxy():
    config = (DEPLOY / "pgbouncer.ini").read_text()
    assert re.search(rf"^listen_port = {PGBOUNCER_PORT}$", config, re.M)
    assert re.search(rf"^{DATABASE} = host=127\.0\.0\.1 port={LEADER_PORT} dbname={DATABASE}$", config, re.M)


def test_the_nodes_environment_names_the_pooler_the_brokers_the_redis_nodes_and_the_edge():
    env = env_file()
    assert env["DATABASE_URL"].endswith(f"@127.0.0.1:{PGBOUNCER_PORT}/{DATABASE}")
    assert env["CELERY_BROKER_URL"].split(";") == [node.url for node in RABBIT_NODES]
    assert env["EDGE_PURGE_URLS"] == f"http://127.0.0.1:{EDGE_PORT}/"
    assert set(WEB_HOSTS) <= set(env["ALLOWED_HOSTS"].split(","))
    assert env["REDIS_URL"] == "${REDIS_URL}"  # the topology's own seeds (REDIS_HOSTS), filled in at start
    assert len(REDIS_HOSTS) == 6  # 3 primaries + 3 replicas, as the file says


def test_the_rabbit_nodes_have_ports_and_directories_of_their_own():
    assert len({node.amqp_port for node in RABBIT_NODES} | {node.dist_port for node in RABBIT_NODES}) == 6
    assert len({node.directory for node in RABBIT_NODES}) == 3
    first = RABBIT_NODES[0]
    assert (first.nodename, first.url) == ("rabbit-c1@localhost", "amqp://guest:guest@127.0.0.1:15701//")
    assert first.pidfile.parent == first.directory


def test_a_rabbit_nodes_environment_points_at_its_own_ports_and_files():
    env = rabbit_env(RABBIT_NODES[1], bind="10.231.0.30")
    assert env["RABBITMQ_NODENAME"] == "rabbit-c2@localhost"
    assert (env["RABBITMQ_NODE_IP_ADDRESS"], env["RABBITMQ_NODE_PORT"], env["RABBITMQ_DIST_PORT"]) == (
        "10.231.0.30", "15702", "15712"
    )  # fmt: skip
    assert env["RABBITMQ_CONF_ENV_FILE"] == "/dev/null"  # never the system broker's settings
    assert env["RABBITMQ_CONFIG_FILE"] == str(DEPLOY / "rabbitmq.conf")
    assert env["RABBITMQ_MNESIA_BASE"].startswith(str(RABBIT_NODES[1].directory))
    assert "RABBITMQ_NODENAME" not in rabbit_env()  # the tools' environment: no node of its own


def test_a_pid_file_is_read_as_its_first_number(tmp_path):
    path = tmp_path / "pid"
    assert topology._read_pid(path) is None
    path.write_text("4242\n")
    assert topology._read_pid(path) == 4242
    path.write_text("not a pid")
    assert topology._read_pid(path) is None


def test_the_last_line_is_the_newest_logs_last_non_empty_one(tmp_path):
    import os

    assert topology._last_line(tmp_path) == ""
    old, new = tmp_path / "a.log", tmp_path / "b.log"
    old.write_text("old\n")
    new.write_text("first\n" + "x" * 400 + "\n\n")
    os.utime(old, (1, 1))
    assert topology._last_line(tmp_path) == "x" * 300


def test_this_process_is_alive_and_a_pid_past_the_kernels_range_is_not():
    import os

    assert topology._alive(os.getpid())
    assert not topology._alive(2**22 + 1)
    assert topology._group_alive(os.getpgrp())


@pytest.mark.parametrize("name", ["redis_cluster", "quorum_queues", "pooler_setting"])
def test_this_checkout_supports_what_the_topology_adapts_to(name):
    assert topology.app_support()[name]
