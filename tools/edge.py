"""A real varnishd running deploy/edge.vcl in front of a backend, for development and the tests.

`edge_up(directory, "127.0.0.1:8000")` writes `directory/edge-backend.vcl` naming the backend
(and, given `purgers`, `directory/edge-purgers.vcl` admitting them instead of deploy's
localhost), starts varnishd in the foreground as a process of its own session (its working
directory `-n`, pid file and log under `directory`, so concurrent runs never share one) and
returns the edge's URL once it answers; `edge_down(directory)` stops it, from this process or
another. `edge_files` and `edge_command` are the same steps for a caller that runs the process
itself (lab/cluster, on a host of its own); `edge_counters` reads its varnishstat counters.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import ProxyHandler, Request, build_opener

from tools.net import free_port, wait_until
from tools.processes import ServiceError, process_of

ROOT = Path(__file__).resolve().parent.parent
VCL = ROOT / "deploy" / "edge.vcl"
# Debian installs varnishd in sbin, which an ordinary user's PATH often leaves out.
SEARCH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
# The edges this process started, by directory: it reaps them itself.
_started: dict[Path, subprocess.Popen] = {}
_opener = build_opener(ProxyHandler({}))
# deploy/edge-backend.vcl's probe: sick after 3 of the last 5 /healthz failed, well after 3 good.
PROBE = """\
    .url = "/healthz";
    .interval = 1s;
    .timeout = 1s;
    .window = 5;
    .threshold = 3;
    .initial = 3;
"""  # the edge is on loopback, whatever proxy the environment names


def varnishd() -> str | None:
    return shutil.which("varnishd", path=SEARCH)


def varnish_available() -> bool:
    """Whether varnishd is installed (Debian: varnish; deploy/edge.vcl also needs varnish-modules)."""
    return varnishd() is not None


def _backend_vcl(backend: str) -> str:
    host, _, port = backend.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"backend {backend!r}: host:port")
    host = host.strip("[]")  # an IPv6 address as [::1]:8000
    address = f'    .host = "{host}";\n    .port = "{port}";\n'
    # As deploy/edge-backend.vcl: requests go to `shop`; `shop_health`, the same address probed
    # on /healthz, only says whether a page past its grace may be handed out.
    return (f"backend shop {{\n{address}    .connect_timeout = 2s;\n}}\n\n"
            f"probe shop_healthz {{\n{PROBE}}}\n\n"
            f"backend shop_health {{\n{address}    .probe = shop_healthz;\n}}\n")  # fmt: skip


def _purgers_vcl(purgers: Iterable[str]) -> str:
    """`acl purgers` admitting each of `purgers`: an address ("10.0.1.2", "::1") or a network
    ("10.0.1.0/24"). Raises ValueError on anything else, a network with host bits included."""
    entries = []
    for purger in purgers:
        network = ipaddress.ip_network(purger.strip(), strict=True)
        address = f'"{network.network_address}"'
        whole = network.prefixlen == network.max_prefixlen
        entries.append(f"    {address};" if whole else f"    {address}/{network.prefixlen};")
    if not entries:
        raise ValueError("purgers: at least one address (none would refuse every purge)")
    return "acl purgers {\n" + "\n".join(entries) + "\n}\n"


def edge_files(
    directory: Path,
    backend: str,
    *,
    purgers: Iterable[str] | None = None,
    answers: bool | Mapping[str, str] | None = False,
) -> None:
    """Write the files deploy/edge.vcl includes into `directory`: edge-backend.vcl naming
    `backend` (host:port) and, given `purgers`, edge-purgers.vcl admitting them; without, one
    left from an earlier start is removed, so that deploy's (localhost) applies. With `answers`,
    the edge answers ticketed result polls (tools.edge_answers) as this process's Django settings
    say, or given an environment, as the settings of a shop process started with it say (a
    deployment's: its SECRET_KEY, REDIS_URL, hosts); with None, the files written before stay;
    without, deploy's copies answer none."""
    from tools.edge_answers import answers_files, answers_files_remove

    directory.mkdir(parents=True, exist_ok=True)
    if answers is None:
        pass
    elif isinstance(answers, Mapping):
        answers_files_remove(directory)
        subprocess.run([sys.executable, "-m", "tools.edge_answers", str(directory)], cwd=ROOT, env=dict(answers),
                       check=True, capture_output=True, timeout=60)  # fmt: skip
    elif answers:
        answers_files(directory)
    else:
        answers_files_remove(directory)
    (directory / "edge-backend.vcl").write_text(_backend_vcl(backend))
    if purgers is None:
        (directory / "edge-purgers.vcl").unlink(missing_ok=True)
    else:
        (directory / "edge-purgers.vcl").write_text(_purgers_vcl(purgers))


def edge_command(directory: Path, listen: str) -> list[str]:
    """varnishd in the foreground with deploy/edge.vcl, listening on `listen` (address:port), its
    working directory `directory/varnish` and the files of edge_files() first on its vcl_path,
    so that they shadow deploy's."""
    program = varnishd()
    if program is None:
        raise ServiceError("varnishd not found: apt-get install varnish varnish-modules")
    return [program, "-F", "-n", str(directory / "varnish"), "-a", listen,
            "-f", str(VCL), "-p", f"vcl_path={directory}:{VCL.parent}", "-s", "malloc,64m",
            # Passes' bodies in flight, hit-for-miss marks and synthetic answers: bounded, as
            # deploy's command line is (docs/edge.md), rather than growing with a burst.
            "-s", "Transient=malloc,256m",
            # One thread pool: on a box of two cores a second one only hands requests between
            # pools (a pass: about a sixth less CPU, docs/records/2026-12-02-edge-tuning.md).
            "-p", "thread_pools=1",
            # An idle connection to the backend is closed before HAProxy's `timeout
            # http-keep-alive` (10 s) closes it: a request sent on a connection just as the
            # backend closes it can fail, a buy's POST among them.
            "-p", "backend_idle_timeout=5",
            "-T", "none", "-S", "none", "-j", "none"]  # fmt: skip


def edge_counters(directory: Path) -> dict[str, int]:
    """The edge's varnishstat counters (`MAIN.cache_hit`, `MAIN.cache_miss`, `MAIN.s_pass`,
    `MAIN.uptime` ...), read from its working directory; {} when it does not run."""
    program = shutil.which("varnishstat", path=SEARCH)
    if program is None:
        return {}
    try:
        result = subprocess.run([program, "-n", str(directory / "varnish"), "-1", "-j", "-t", "2"],
                                capture_output=True, text=True, timeout=10)  # fmt: skip
        counters = json.loads(result.stdout).get("counters", {})
    except (subprocess.TimeoutExpired, ValueError):
        return {}
    return {name: int(field.get("value", 0)) for name, field in counters.items()}


def _answers(url: str) -> bool:
    """Whether varnishd answers at all: a PURGE without keys is refused by the VCL itself,
    so the probe reaches no backend and purges nothing."""
    try:
        with _opener.open(Request(url, method="PURGE"), timeout=2):
            return True
    except HTTPError:
        return True


def edge_up(
    directory: Path,
    backend: str,
    *,
    port: int | None = None,
    purgers: Iterable[str] | None = None,
    answers: bool | Mapping[str, str] = False,
) -> str:
    """Start varnishd with deploy/edge.vcl in front of `backend` (host:port) on 127.0.0.1:`port`
    (any free one by default), purges admitted from `purgers` (deploy's localhost by default)
    -> its base URL, once it answers. Raises ServiceError with the end of its log if it does
    not start."""
    directory = directory.resolve()
    edge_down(directory)
    edge_files(directory, backend, purgers=purgers, answers=answers)
    port = port or free_port()
    command = edge_command(directory, f"127.0.0.1:{port}")
    log = directory / "varnishd.log"
    with open(log, "ab") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)  # fmt: skip
    _started[directory] = process
    (directory / "varnishd.pid").write_text(f"{process.pid}\n")
    url = f"http://127.0.0.1:{port}"
    if not wait_until(lambda: process.poll() is not None or _answers(url), 30) or process.poll() is not None:
        edge_down(directory)
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        vmods = {"xkey": "varnish-modules", "redis": "varnish-redis", "digest": "varnish-vmod-digest"}
        low = tail.lower()
        needed = [package for vmod, package in vmods.items() if f"vmod {vmod}" in low or f"vmod_{vmod}" in low]
        hint = f" (a vmod missing? apt-get install {' '.join(needed)})" if needed else ""
        raise ServiceError(f"varnishd did not start on port {port}{hint}; {log}:\n{tail}")
    return url


def edge_down(directory: Path) -> None:
    """Stop the varnishd that edge_up started for `directory`, if it runs; a pid file left by a
    process that is gone, or whose pid another program took, is ignored."""
    directory = directory.resolve()
    pidfile = directory / "varnishd.pid"
    process = _started.pop(directory, None)
    if process is not None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
    else:
        other = process_of(pidfile, "varnishd", str(directory / "varnish"))
        if other is not None:
            os.killpg(other.pid, signal.SIGTERM)
            if not wait_until(lambda: not other.is_running() or other.status() == "zombie", 15):
                os.killpg(other.pid, signal.SIGKILL)
    pidfile.unlink(missing_ok=True)
