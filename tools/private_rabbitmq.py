"""A private single RabbitMQ node on loopback, for a test that needs a broker where none runs.

It is the lab's node (lab/cluster/topology.py) reduced to one: the scripts under
/usr/lib/rabbitmq/bin (not /usr/sbin's wrappers, which su to `rabbitmq`), every file of the node
in a directory of the caller's, and its own free ports. It also runs its own epmd on a free port,
so that nothing of it outlives `private_rabbitmq()`: a node started against the default port
would leave behind the epmd daemon that it starts when none listens there.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tools.net import free_port

RABBITMQ_BIN = Path("/usr/lib/rabbitmq/bin")
BOOT_TIMEOUT = 120  # seconds; a cold node boots in about ten on an idle machine


def installed() -> bool:
    """Whether the rabbitmq-server package's scripts are on this machine."""
    return (RABBITMQ_BIN / "rabbitmq-server").exists()


def node_env(directory: Path) -> dict[str, str]:
    """The environment of a node whose files all live in `directory`: its name, ports, cookie,
    configuration, data and logs. rabbitmqctl, given the same environment, reaches it."""
    home = directory / "home"  # its .erlang.cookie is the secret that rabbitmqctl shares
    home.mkdir(parents=True, exist_ok=True)
    cookie = home / ".erlang.cookie"
    if not cookie.exists():
        cookie.write_text(secrets.token_hex(16).upper())
        cookie.chmod(0o400)
    (directory / "rabbitmq.conf").write_text("loopback_users.guest = true\nlog.console = false\n")
    (directory / "enabled_plugins").write_text("[].\n")  # no management listener to collide
    return dict(
        os.environ,
        HOME=str(home),
        RABBITMQ_CONF_ENV_FILE="/dev/null",  # not the system broker's /etc/rabbitmq/rabbitmq-env.conf
        RABBITMQ_CONFIG_FILE=str(directory / "rabbitmq.conf"),
        RABBITMQ_ADVANCED_CONFIG_FILE=str(directory / "advanced.config"),  # none
        RABBITMQ_ENABLED_PLUGINS_FILE=str(directory / "enabled_plugins"),
        # "localhost", not the host's name: Erlang resolves the host part, which can be slow.
        RABBITMQ_NODENAME=f"rabbit-test-{os.getpid()}@localhost",
        RABBITMQ_NODE_IP_ADDRESS="127.0.0.1",
        RABBITMQ_NODE_PORT=str(free_port()),
        RABBITMQ_DIST_PORT=str(free_port()),
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}",
        ERL_EPMD_ADDRESS="127.0.0.1",
        ERL_EPMD_PORT=str(free_port()),
        RABBITMQ_MNESIA_BASE=str(directory / "mnesia"),
        RABBITMQ_LOG_BASE=str(directory / "log"),
        RABBITMQ_PID_FILE=str(directory / "beam.pid"),
    )


def log_tail(directory: Path, lines: int = 40) -> str:
    """The last `lines` of the node's console output and log files, for a failure's message."""
    tails = []
    for path in [directory / "console.log", *sorted((directory / "log").glob("*.log"))]:
        if path.exists():
            tails.append(f"--- {path}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
    return "\n".join(tails) or f"no log under {directory}"


def rabbitmqctl(env: dict[str, str], *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    command = [str(RABBITMQ_BIN / "rabbitmqctl"), "-n", env["RABBITMQ_NODENAME"], *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)


@contextmanager
def private_rabbitmq(directory: Path, timeout: float = BOOT_TIMEOUT) -> Iterator[str]:
    """Start a node in `directory`, yield its AMQP URL once it serves, and stop it on exit, with
    its epmd: no process of it is left. Raises RuntimeError, with the node's log tail, when the
    node is not up within `timeout` seconds."""
    env = node_env(directory)
    with open(directory / "console.log", "wb") as console:
        # A session of its own: a kill of the group reaches the script, beam and their helpers.
        server = subprocess.Popen([str(RABBITMQ_BIN / "rabbitmq-server")], env=env, stdout=console,
                                  stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        wait_booted(env, timeout, directory)
        yield f"amqp://guest:guest@127.0.0.1:{env['RABBITMQ_NODE_PORT']}//"
    finally:
        stop(server, env)


def wait_booted(env: dict[str, str], timeout: float, directory: Path) -> None:
    """Until the node's pid file appears and its applications run; RuntimeError after `timeout`."""
    pidfile = env["RABBITMQ_PID_FILE"]
    try:
        result = rabbitmqctl(env, "wait", pidfile, "--timeout", str(int(timeout)), timeout=timeout + 10)
    except subprocess.TimeoutExpired:
        result = None
    if result is None or result.returncode != 0:
        said = "" if result is None else (result.stdout + result.stderr).strip()[-1000:]
        raise RuntimeError(f"RabbitMQ did not boot within {timeout:.0f} s: {said}\n{log_tail(directory)}")


def stop(server: subprocess.Popen[bytes], env: dict[str, str]) -> None:
    """Stop the node as an operator does, kill what remains, then stop its epmd."""
    try:
        rabbitmqctl(env, "stop", env["RABBITMQ_PID_FILE"], timeout=60)
    except subprocess.TimeoutExpired:
        pass
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(server.pid, signal.SIGKILL)  # what a clean stop left, or all of a hung node
    except ProcessLookupError:
        pass
    server.wait()
    subprocess.run(["epmd", "-kill"], env=env, capture_output=True, timeout=10)
