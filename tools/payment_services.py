"""Stand-ins for the payment providers, for machines without their credentials: localstripe (a
stateful emulator of Stripe's HTTP API, from PyPI) and tools/alipay_gateway (Alipay's open
API). Started by tools.services when STRIPE_SECRET_KEY / ALIPAY_APP_ID are unset, as daemons
under .run/ like the embedded servers, and reused by the next run.

The shop talks to them through the providers' own SDKs; only the addresses and keys differ.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.request import Request, urlopen

from tools.net import free_port, wait_until
from tools.processes import ServiceError, number_read, process_of

# Test keys: localstripe takes any key of the right shape; the webhook secret is ours to choose.
STRIPE_TEST_ENV = {
    "STRIPE_SECRET_KEY": "sk_test_localstripe",
    "STRIPE_PUBLISHABLE_KEY": "pk_test_localstripe",
    "STRIPE_WEBHOOK_SECRET": "whsec_localstripe",
}
ALIPAY_APP_ID = "2021000000000001"
ALIPAY_SELLER_ID = "2088000000000001"


def _answers(url: str) -> bool:
    try:
        with urlopen(url, timeout=2) as response:
            return response.status < 500
    except OSError as error:
        # An HTTP error is still an answer: the server is up.
        return 0 < getattr(error, "code", 0) < 500


def _daemon(run: Path, name: str, command: list[str], probe: str, port: int) -> bool:
    """Start `command` detached, logging to run/<name>.log, and wait for `probe` to answer."""
    log = open(run / f"{name}.log", "ab")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (run / f"{name}.pid").write_text(f"{process.pid}\n")
    (run / f"{name}.port").write_text(f"{port}\n")
    if not wait_until(lambda: _answers(probe), 30):
        process.kill()
        raise ServiceError(f"{name} did not answer on port {port}; see .run/{name}.log")
    return True


# What each stand-in's command line holds, to tell it from a process that took over its pid.
_COMMANDS = {"localstripe": "localstripe", "alipay": "tools.alipay_gateway"}


def _ensure(run: Path, name: str, command_for, probe_for) -> tuple[int, bool]:
    port = number_read(run / f"{name}.port")
    if port and process_of(run / f"{name}.pid", "python", _COMMANDS[name]) and _answers(probe_for(port)):
        return port, False
    port = free_port(preferred=port)
    return port, _daemon(run, name, command_for(port), probe_for(port), port)


def localstripe_env(port: int) -> dict[str, str]:
    base = f"http://127.0.0.1:{port}"
    return {**STRIPE_TEST_ENV, "STRIPE_API_BASE": base, "STRIPE_JS_URL": f"{base}/js.stripe.com/v3/"}


def alipay_env(port: int, state: Path, host: str = "127.0.0.1") -> dict[str, str]:
    """What the shop needs to take Alipay payments at the stand-in on host:port, whose key files
    are in `state` (tools.alipay_gateway.keys.ensure makes them)."""
    return {
        "ALIPAY_APP_ID": ALIPAY_APP_ID,
        "ALIPAY_SELLER_ID": ALIPAY_SELLER_ID,
        "ALIPAY_APP_PRIVATE_KEY": str(state / "app_private.pem"),
        "ALIPAY_PUBLIC_KEY": str(state / "alipay_public.pem"),
        "ALIPAY_GATEWAY": f"http://{host}:{port}/gateway.do",
    }


def alipay_command(port: int, state: Path, host: str = "127.0.0.1", retry_scale: float | None = None) -> list[str]:
    """The command line of the Alipay stand-in on host:port, keeping its keys and trades in `state`;
    `retry_scale` is its notify retry schedule's (its own default when None)."""
    scale = [] if retry_scale is None else ["--retry-scale", str(retry_scale)]
    return [sys.executable, "-m", "tools.alipay_gateway", "--host", host, "--port", str(port), "--state", str(state),
            "--app-id", ALIPAY_APP_ID, "--seller-id", ALIPAY_SELLER_ID, *scale]  # fmt: skip


def ensure_payment_services(run: Path) -> tuple[dict[str, str], list[str]]:
    """Start or reuse the stand-ins for the providers whose credentials are unset ->
    (env to add, names started now)."""
    env: dict[str, str] = {}
    started: list[str] = []
    run.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("STRIPE_SECRET_KEY"):
        port, new = _ensure(
            run,
            "localstripe",
            lambda port: [sys.executable, "-m", "localstripe", "--port", str(port), "--from-scratch"],
            lambda port: f"http://127.0.0.1:{port}/js.stripe.com/v3/",
        )
        env |= localstripe_env(port)
        started += ["localstripe"] if new else []
    if not os.environ.get("ALIPAY_APP_ID"):
        state = run / "alipay"
        port, new = _ensure(
            run,
            "alipay",
            lambda port: alipay_command(port, state),
            lambda port: f"http://127.0.0.1:{port}/_control/trades",
        )
        env |= alipay_env(port, state)
        started += ["alipay"] if new else []
    return env, started


def stop_payment_services(run: Path, names: list[str] | tuple[str, ...] = ("localstripe", "alipay")) -> None:
    for name in names:
        process = process_of(run / f"{name}.pid", "python", _COMMANDS[name])
        if process is not None:
            process.terminate()


def stripe_webhook_register(api_base: str, url: str, *, name: str = "shop", events: list[str] | None = None) -> None:
    """Tell localstripe where to send its events (its /_config API; Stripe's dashboard does this
    for a real account), signed with STRIPE_WEBHOOK_SECRET. `events` limits them to those types;
    an empty list silences the hook, since localstripe cannot remove one."""
    secret = os.environ.get("STRIPE_WEBHOOK_SECRET", STRIPE_TEST_ENV["STRIPE_WEBHOOK_SECRET"])
    body = {"url": url, "secret": secret, **({"events": events} if events is not None else {})}
    request = Request(f"{api_base}/_config/webhooks/{name}", data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    with urlopen(request, timeout=5) as response:
        response.read()


def alipay_control(gateway: str, path: str, **form: str) -> dict:
    """POST to the Alipay stand-in's /_control API (pay a trade, hold notifications, an outage)."""
    base = gateway.rsplit("/gateway.do", 1)[0]
    data = "&".join(f"{key}={value}" for key, value in form.items()).encode()
    request = Request(f"{base}/_control/{path}", data=data or b"", method="POST")
    with urlopen(request, timeout=5) as response:
        text = response.read().decode()
    return json.loads(text) if text.strip().startswith("{") else {"answer": text}
