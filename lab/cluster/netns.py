"""Simulated hosts as Linux network namespaces on one bridge (`make partition-test`).

Each host gets a namespace `sk-<name>`, a veth pair (`skv-<name>` on the bridge, `eth0` inside)
and its own address on 10.231.0.0/24; the machine itself (the test harness, and PostgreSQL
through a relay) is 10.231.0.1 on the bridge `skbr0`. Links are cut with iptables rules inside a
host's namespace, so they go with the namespace. Every namespace, veth and the bridge this
module makes is recorded in .run/cluster/netns before it is made; `Network.destroy()` removes
them, and `leftovers_remove()` removes what a killed run recorded (nothing else is touched).

Names resolve from a hosts file inside each namespace: /etc/netns/<namespace>/hosts and
resolv.conf, which `ip netns exec` mounts over /etc's. The machine's nameserver is out of the
bridge's reach, so a lookup sent there would wait out its timeout (Erlang looks `localhost` up
for IPv6 too, several times per RabbitMQ node and per rabbitmqctl); here an unknown name fails
at once instead.

Needs root (CAP_NET_ADMIN); `require_root()` says so plainly. This kernel has no sch_netem:
latency and loss on a link go through a userspace relay (lab/cluster/relay.py) instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

BRIDGE = "skbr0"
SUBNET = "10.231.0"
GATEWAY = f"{SUBNET}.1"  # the machine's own end of the bridge: the harness and PostgreSQL's relay
PREFIX = "sk-"
ETC_NETNS = Path("/etc/netns")  # `ip netns exec NS` mounts the files of ETC_NETNS/NS over /etc's
# No nameserver answers inside a namespace: loopback's port 53 is closed there, so a lookup
# of a name no hosts file has is refused at once instead of waiting for an unreachable one.
RESOLV_CONF = "# make partition-test: names come from this namespace's hosts file only\nnameserver 127.0.0.1\n"
SLOW_LOOKUP = 2.0  # seconds a failed lookup may take inside a namespace before the start stops


class NetnsError(RuntimeError):
    pass


def require_root() -> None:
    if os.geteuid() != 0:
        raise NetnsError(
            "make partition-test needs root: it creates network namespaces, veth pairs, a bridge and "
            "iptables rules (run it with sudo, or as root in a VM or container with CAP_NET_ADMIN)"
        )


def run(*command: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise NetnsError(f"{' '.join(command)}: {result.stderr.strip()}")
    return result


@dataclass(frozen=True)
class Host:
    name: str  # web1
    address: str  # 10.231.0.2
    prefix_: str = PREFIX

    @property
    def netns(self) -> str:
        return f"{self.prefix_}{self.name}"

    @property
    def veth(self) -> str:
        return f"{self.prefix_.rstrip('-')}v-{self.name}"[:15]  # sk-web1's is skv-web1

    def prefix(self) -> list[str]:
        """Run a command on this host: `ip netns exec` enters the namespace, then execs it (same pid)."""
        return ["ip", "netns", "exec", self.netns]


class Network:
    def __init__(self, hosts: dict[str, str], record: Path, *, bridge: str = BRIDGE, prefix: str = PREFIX,
                 gateway: str = GATEWAY) -> None:  # fmt: skip
        self.hosts = {name: Host(name, address, prefix) for name, address in hosts.items()}
        self.record, self.bridge, self.gateway = record, bridge, gateway
        self.rules: dict[str, list[list[str]]] = {}  # host -> iptables rules added (for heal)

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def _note(self, line: str) -> None:
        self.record.parent.mkdir(parents=True, exist_ok=True)
        with self.record.open("a") as out:
            out.write(line + "\n")

    def create(self) -> None:
        require_root()
        leftovers_remove(self.record)
        self._note(f"bridge {self.bridge}")
        run("ip", "link", "add", self.bridge, "type", "bridge")
        run("ip", "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        run("ip", "link", "set", self.bridge, "up")
        if not ETC_NETNS.exists():
            self._note(f"etcdir {ETC_NETNS}")  # made for these files: removed with them
        for host in self.hosts.values():
            self._note(f"netns {host.netns}")
            self._note(f"veth {host.veth}")
            self._note(f"etc {ETC_NETNS / host.netns}")
            self._resolver_files(host)
            run("ip", "netns", "add", host.netns)
            run("ip", "link", "add", host.veth, "type", "veth", "peer", "name", "eth0", "netns", host.netns)
            run("ip", "link", "set", host.veth, "master", self.bridge)
            run("ip", "link", "set", host.veth, "up")
            inside = host.prefix()
            run(*inside, "ip", "link", "set", "lo", "up")
            run(*inside, "ip", "addr", "add", f"{host.address}/24", "dev", "eth0")
            run(*inside, "ip", "link", "set", "eth0", "up")
            run(*inside, "ip", "route", "add", "default", "via", self.gateway)

    def destroy(self) -> list[str]:
        return leftovers_remove(self.record)

    # --- names ------------------------------------------------------------------------------

    def hosts_text(self) -> str:
        """The hosts file every namespace resolves from: loopback's names (IPv4 and IPv6, and
        the machine's hostname, which a namespace shares), then each simulated host's address."""
        lines = [
            "# make partition-test: the simulated hosts (lab/cluster/netns.py)",
            f"127.0.0.1\tlocalhost {socket.gethostname()}",
            f"::1\tlocalhost ip6-localhost ip6-loopback {socket.gethostname()}",
            *(f"{host.address}\t{host.name}" for host in self.hosts.values()),
        ]
        return "\n".join(lines) + "\n"

    def _resolver_files(self, host: Host) -> None:
        directory = ETC_NETNS / host.netns
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "hosts").write_text(self.hosts_text())
        (directory / "resolv.conf").write_text(RESOLV_CONF)

    def lookup_seconds(self, host: str, name: str) -> tuple[float, str]:
        """How long resolving `name` takes inside `host`'s namespace (the C library's
        getaddrinfo, which Erlang's, Python's and the servers' lookups go through), and the
        addresses it found ("" for none)."""
        started = time.monotonic()
        result = run(*self.hosts[host].prefix(), "getent", "ahosts", name, check=False)
        addresses = sorted({line.split()[0] for line in result.stdout.splitlines() if line.strip()})
        return time.monotonic() - started, " ".join(addresses)

    def check_lookups(self, host: str) -> str:
        """Raise NetnsError when a lookup inside `host` waits on a nameserver (every start-up
        there would crawl: a RabbitMQ node took minutes); else a line saying how fast they are."""
        timings = []
        for name in ("localhost", socket.gethostname(), "no-such-host.invalid"):
            seconds, _ = self.lookup_seconds(host, name)
            timings.append(f"{name} {seconds:.2f} s")
            if seconds > SLOW_LOOKUP:
                raise NetnsError(
                    f"resolving {name!r} inside {self.hosts[host].netns} took {seconds:.1f} s: lookups there should "
                    f"come from {ETC_NETNS / self.hosts[host].netns / 'hosts'} at once (is it mounted over /etc/hosts?)"
                )
        return f"name lookups inside {self.hosts[host].netns}: " + ", ".join(timings)

    # --- cutting links --------------------------------------------------------------------

    def _rule(self, host: str, *rule: str, table: str = "filter") -> None:
        run(*self.hosts[host].prefix(), "iptables", "-w", "-t", table, "-A", *rule)
        self.rules.setdefault(host, []).append([table, *rule])

    def redirect(self, host: str, address: str, port: int, to: tuple[str, int], *, loss: float = 0.0) -> None:
        """`host`'s connections to address:port go to `to` instead (a relay that adds latency),
        with `loss` of their packets dropped either way; connections it had open are reset, so
        its clients reconnect through the relay."""
        self._rule(host, "OUTPUT", "-d", address, "-p", "tcp", "--dport", str(port), "-j", "DNAT",
                   "--to-destination", f"{to[0]}:{to[1]}", table="nat")  # fmt: skip
        self._rule(host, "OUTPUT", "-d", address, "-p", "tcp", "--dport", str(port), "-j", "REJECT",
                   "--reject-with", "tcp-reset")  # fmt: skip
        if loss:
            chance = ["-m", "statistic", "--mode", "random", "--probability", str(loss), "-j", "DROP"]
            self._rule(host, "OUTPUT", "-d", to[0], "-p", "tcp", "--dport", str(to[1]), *chance)
            self._rule(host, "INPUT", "-s", to[0], "-p", "tcp", "--sport", str(to[1]), *chance)

    def cut(self, host: str, peers: list[str], *, probability: float | None = None) -> None:
        """Drop every packet between `host` and each of `peers` (host names, or addresses), in
        both directions, on `host`'s side; with `probability`, drop that share at random (loss)."""
        for peer in peers:
            address = self.hosts[peer].address if peer in self.hosts else peer
            loss = ["-m", "statistic", "--mode", "random", "--probability", str(probability)] if probability else []
            self._rule(host, "INPUT", "-s", address, *loss, "-j", "DROP")
            self._rule(host, "OUTPUT", "-d", address, *loss, "-j", "DROP")

    def isolate(self, host: str, *, keep: list[str]) -> None:
        """Drop everything to and from `host` but its loopback and the hosts in `keep`."""
        for peer in keep:
            address = self.hosts[peer].address if peer in self.hosts else peer
            self._rule(host, "INPUT", "-s", address, "-j", "ACCEPT")
            self._rule(host, "OUTPUT", "-d", address, "-j", "ACCEPT")
        self._rule(host, "INPUT", "-i", "lo", "-j", "ACCEPT")
        self._rule(host, "OUTPUT", "-o", "lo", "-j", "ACCEPT")
        self._rule(host, "INPUT", "-j", "DROP")
        self._rule(host, "OUTPUT", "-j", "DROP")

    def heal(self, host: str | None = None) -> None:
        """Remove the rules this run added (on `host`, or everywhere)."""
        for name in [host] if host else list(self.rules):
            for table, *rule in reversed(self.rules.pop(name, [])):
                run(*self.hosts[name].prefix(), "iptables", "-w", "-t", table, "-D", *rule, check=False)


def leftovers_remove(record: Path) -> list[str]:
    """Remove every namespace, veth and bridge listed in `record` (this or a killed run's), then
    the record. Deleting a namespace deletes its end of the veth and its iptables rules; any
    process still inside is the caller's to stop first. Returns what was removed."""
    if not record.exists():
        return []
    removed = []
    lines = [line.split(" ", 1) for line in record.read_text().splitlines() if " " in line]
    existing = set(run("ip", "netns", "list", check=False).stdout.split())
    for kind, name in lines:
        if kind == "netns" and name in existing:
            # Processes left in it (a killed run's servers) would keep it alive: stop them first.
            pids = run("ip", "netns", "pids", name, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError):
                    pass
            run("ip", "netns", "del", name, check=False)
            removed.append(f"netns {name}")
    for kind, name in lines:
        if kind in ("veth", "bridge") and run("ip", "link", "show", name, check=False).returncode == 0:
            run("ip", "link", "del", name, check=False)
            removed.append(f"{kind} {name}")
        if kind == "etc" and Path(name).parent == ETC_NETNS and Path(name).is_dir():
            shutil.rmtree(name, ignore_errors=True)
            removed.append(f"etc {name}")
    if ["etcdir", str(ETC_NETNS)] in lines and ETC_NETNS.is_dir() and not any(ETC_NETNS.iterdir()):
        ETC_NETNS.rmdir()
    record.unlink()
    return removed


def snapshot(prefix: str = PREFIX, bridge: str = BRIDGE) -> dict[str, list[str]]:
    """What the machine has now (for the cleanup test): the namespaces and links of `prefix`."""
    namespaces = [n for n in run("ip", "netns", "list", check=False).stdout.split() if n.startswith(prefix)]
    names = [line.split(":")[1].strip().split("@")[0] for line in run("ip", "-o", "link", "show").stdout.splitlines()]
    links = [name for name in names if name.startswith(f"{prefix.rstrip('-')}v-") or name == bridge]
    return {"netns": sorted(namespaces), "links": sorted(links)}
