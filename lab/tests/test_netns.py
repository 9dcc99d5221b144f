"""make partition-test's network (lab/cluster/netns.py): what it makes it removes, on a normal
exit and on SIGTERM or Ctrl-C of the process that made it. Root only (skipped otherwise); its
own names (skt-*, bridge skbrt0, 10.232.0.0/24), so it runs beside a partition-test."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from lab.cluster import netns
from tools.missing import missing

_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")
_tools = pytest.mark.skipif(
    not shutil.which("ip") or not shutil.which("iptables"),
    reason=missing("no ip or iptables: network namespaces were not tested", "iproute2", "iptables"),
)


def needs_root(test):
    """Root, iproute2 and iptables: what a network namespace takes."""
    return _root(_tools(test))


OPTIONS = {"bridge": "skbrt0", "prefix": "skt-", "gateway": "10.232.0.1"}
HOSTS = {"a": "10.232.0.2", "b": "10.232.0.3"}
EMPTY = {"netns": [], "links": []}


def test_not_root_is_told_plainly(monkeypatch, capsys):
    from lab.cluster import partition

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert partition.main(["--scenarios", "redis-minority"]) == 2
    assert "make partition-test needs root" in capsys.readouterr().err


@needs_root
def test_a_network_is_made_cut_healed_and_removed(tmp_path):
    network = netns.Network(HOSTS, tmp_path / "record", **OPTIONS)
    try:
        network.create()
        assert netns.snapshot("skt-", "skbrt0") == {
            "netns": ["skt-a", "skt-b"],
            "links": ["skbrt0", "sktv-a", "sktv-b"],
        }
        inside_a = network["a"].prefix()
        assert "10.232.0.2/24" in subprocess.run([*inside_a, "ip", "-o", "addr"], capture_output=True, text=True).stdout
        network.cut("a", ["b"])
        rules = subprocess.run([*inside_a, "iptables", "-S"], capture_output=True, text=True).stdout
        assert "-A OUTPUT -d 10.232.0.3/32 -j DROP" in rules
        network.heal("a")
        rules = subprocess.run([*inside_a, "iptables", "-S"], capture_output=True, text=True).stdout
        assert "10.232.0.3" not in rules
    finally:
        network.destroy()
    assert netns.snapshot("skt-", "skbrt0") == EMPTY
    assert not (tmp_path / "record").exists()


def _resolve(network: netns.Network, host: str, name: str) -> tuple[float, set[str]]:
    """(seconds, addresses) of `getent ahosts name` inside `host`: getaddrinfo, as Erlang's,
    Python's and the servers' own lookups do."""
    started = time.monotonic()
    out = subprocess.run([*network[host].prefix(), "getent", "ahosts", name], capture_output=True, text=True).stdout
    return time.monotonic() - started, {line.split()[0] for line in out.splitlines() if line.strip()}


@needs_root
def test_names_resolve_inside_from_the_hosts_file_at_once(tmp_path):
    """A namespace reaches no nameserver: its peers, localhost (IPv6 too, which Erlang asks
    for) and an unknown name are answered from its own hosts file at once, not after a
    nameserver's timeout (RabbitMQ's nodes then took minutes to boot)."""
    network = netns.Network(HOSTS, tmp_path / "record", **OPTIONS)
    try:
        network.create()
        assert _resolve(network, "a", "b")[1] == {"10.232.0.3"}
        assert "::1" in _resolve(network, "a", "localhost")[1]
        seconds, found = _resolve(network, "a", "no-such-host.invalid")
        assert (found, seconds < 1) == (set(), True)
        assert "name lookups inside skt-a" in network.check_lookups("a")
    finally:
        network.destroy()
    assert not (netns.ETC_NETNS / "skt-a").exists()


@needs_root
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_run_removes_its_network(tmp_path, signum):
    """As lab/cluster/partition.py does: SIGTERM and Ctrl-C unwind into its `finally`."""
    driver = textwrap.dedent(f"""
        import signal, sys, time
        from pathlib import Path
        from lab.cluster import netns

        def interrupt(signum, frame):
            raise KeyboardInterrupt
        signal.signal(signal.SIGTERM, interrupt)
        network = netns.Network({HOSTS!r}, Path({str(tmp_path / "record")!r}), **{OPTIONS!r})
        try:
            network.create()
            __import__("subprocess").Popen([*network["a"].prefix(), "sleep", "600"])  # a process left inside
            print("up", flush=True)
            time.sleep(600)
        except KeyboardInterrupt:
            pass
        finally:
            network.destroy()
    """)
    process = subprocess.Popen([sys.executable, "-c", driver], stdout=subprocess.PIPE, text=True,
                               cwd=netns.__file__.rsplit("/lab/", 1)[0])  # fmt: skip
    assert process.stdout.readline().strip() == "up"
    assert netns.snapshot("skt-", "skbrt0")["netns"] == ["skt-a", "skt-b"]
    process.send_signal(signum)
    assert process.wait(timeout=30) == 0
    assert netns.snapshot("skt-", "skbrt0") == EMPTY


@needs_root
def test_leftovers_of_a_killed_run_are_removed_by_the_next(tmp_path):
    record = tmp_path / "record"
    netns.Network(HOSTS, record, **OPTIONS).create()  # and then nobody destroys it: kill -9
    assert netns.snapshot("skt-", "skbrt0")["netns"] == ["skt-a", "skt-b"]
    removed = netns.leftovers_remove(record)
    assert "netns skt-a" in removed and "bridge skbrt0" in removed
    assert netns.snapshot("skt-", "skbrt0") == EMPTY
