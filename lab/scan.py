"""`make scan`: wapiti3 against a production-like deployment on loopback, anonymous and then
logged in as a seeded shopper, bounded in time. Fails on any 5xx, any anomaly wapiti reports,
and any finding that lab/scan_allowlist.txt does not accept.

The deployment is tools.deploy's (granian and a Celery worker, its own port and queue) on the
embedded or given PostgreSQL and Redis, with the production settings as they stand (DEBUG off,
the production headers and cookies) and TLS (granian, a throwaway self-signed certificate for
127.0.0.1, so HSTS and the Secure cookies are what a browser gets); only the per-request rate
limits are off (lab/scan_settings.py), or most attacks would meet a 429 instead of the views. The database gets
`seed_demo`'s shop. wapiti3 runs from its own virtualenv (.venv-scan, requirements-scan.txt:
its pins clash with the shop's) against https://127.0.0.1:<port>/ only. Its SSRF check, which
plants URLs of wapiti's public endpoint and asks that endpoint afterwards who fetched them,
gets a loopback stand-in instead (Endpoint below): not one request leaves the machine.

The server's own count of 5xx answers (its /metrics, read before and after each scan) is
checked too, so a 500 that wapiti does not call an anomaly still fails the scan. Results:
.run/scan/ (each scan's JSON report and log, the deployment's logs).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WAPITI = ROOT / ".venv-scan" / "bin" / "wapiti"
ALLOWLIST = Path(__file__).resolve().parent / "scan_allowlist.txt"
RESULTS = ROOT / ".run" / "scan"
QUEUE = "seckill-scan"
# A demo shopper of seed_demo, for the logged-in scan.
SHOPPER = ("13700000001", "shopper123")
# Where the crawl starts besides "/": what no page links to (the JSON endpoints the pages'
# scripts call, the API's GETs). The OpenAPI schema gives wapiti the API's other operations.
START_PATHS = ["/goods/goodsList", "/user/me", "/seckill/result?goodsId=1", "/seckill/verifyCode?goodsId=1",
               "/api/v1/sales", "/api/v1/sales/1", "/api/v1/users/me", "/api/v1/users/tokens", "/api/v1/orders",
               "/api/docs/", "/healthz", "/readyz"]  # fmt: skip
# Never requested in the logged-in scan: they would end the session it scans with.
LOGOUTS = ["/user/logout", "/api/v1/users/logout", "/api/v1/users/logout-everywhere", "/admin/logout/"]


# --- the allow-list and the report (pure functions: make test checks them) -----------------------


@dataclass(frozen=True)
class Allowed:
    """One accepted finding: wapiti's category, a regular expression the finding's path must
    match in full, and why it is accepted (the comment above the entry)."""

    category: str
    path: re.Pattern
    reason: str


@dataclass(frozen=True)
class Finding:
    kind: str  # "vulnerability" or "anomaly"
    category: str
    method: str
    path: str
    parameter: str
    info: str
    module: str

    def __str__(self) -> str:
        where = f"{self.method} {self.path}" + (f" [{self.parameter}]" if self.parameter else "")
        return f"{self.kind}: {self.category}: {where}: {self.info} ({self.module})"


class AllowlistError(ValueError):
    pass


def allowlist_parse(text: str) -> list[Allowed]:
    """`category | path regex` per line, each entry after at least one `#` comment line that
    says why (blank lines end a comment). A malformed line, an entry without its reason or a
    regular expression that does not compile is an error, not a silent pass."""
    entries, comment = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            comment = []
        elif line.startswith("#"):
            comment.append(line.lstrip("#").strip())
        else:
            category, separator, path = (part.strip() for part in line.partition("|"))
            if not separator or not category or not path:
                raise AllowlistError(f"line {number}: expected `category | path regex`, got {raw!r}")
            reason = " ".join(part for part in comment if part)
            if not reason:
                raise AllowlistError(f"line {number}: {category!r} has no comment above it saying why")
            try:
                pattern = re.compile(path)
            except re.error as error:
                raise AllowlistError(f"line {number}: bad regular expression {path!r}: {error}") from error
            entries.append(Allowed(category, pattern, reason))
    return entries


@dataclass(frozen=True)
class Report:
    crawled: list[str]
    vulnerabilities: list[Finding]
    anomalies: list[Finding]


def report_read(data: dict) -> Report:
    """A wapiti JSON report (`-f json -dr 1`): the URLs it crawled, its findings and anomalies."""

    def findings(kind: str, section: dict) -> list[Finding]:
        return [
            Finding(
                kind,
                category,
                item.get("method", ""),
                item.get("path", ""),
                item.get("parameter") or "",
                item.get("info", ""),
                item.get("module", ""),
            )  # fmt: skip
            for category, items in sorted((section or {}).items())
            for item in items
        ]

    infos = data.get("infos") or {}
    requests = [page.get("request", page) for page in infos.get("crawled_pages") or []]
    crawled = sorted({f"{request.get('method', 'GET')} {request.get('url', '')}" for request in requests})
    vulnerabilities = findings("vulnerability", data.get("vulnerabilities"))
    return Report(crawled, vulnerabilities, findings("anomaly", data.get("anomalies")))


def unexpected(report: Report, allowed: list[Allowed]) -> list[Finding]:
    """Every anomaly (never allowed: an anomaly is a 5xx or a timeout), and every vulnerability
    that no allow-list entry of its category matches."""
    refused = list(report.anomalies)
    for finding in report.vulnerabilities:
        if not any(entry.category == finding.category and entry.path.fullmatch(finding.path) for entry in allowed):
            refused.append(finding)
    return refused


# --- the run ---------------------------------------------------------------------------------------


class Endpoint:
    """wapiti's attacker endpoint on loopback. Payload URLs look like
    `<endpoint>ssrf/<session>/<path id>/<parameter as hex>/`; if the shop ever fetched one, this
    records it, and `get_ssrf.php?session_id=...` answers what wapiti's public endpoint would:
    {path id: {parameter as hex: [{url, date, ip, method}]}}. Any other path: 200, empty."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from threading import Thread
        from urllib.parse import parse_qs, urlsplit

        hits: dict[str, dict] = {}
        self.hits = hits

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                url = urlsplit(self.path)
                parts = url.path.strip("/").split("/")
                body = b""
                if parts[0] == "ssrf" and len(parts) >= 4:
                    session, path_id, parameter = parts[1:4]
                    hit = {"url": self.path, "date": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
                           "ip": self.client_address[0], "method": self.command}  # fmt: skip
                    hits.setdefault(session, {}).setdefault(path_id, {}).setdefault(parameter, []).append(hit)
                elif parts[0].startswith("get_") and parts[0].endswith(".php"):
                    session = parse_qs(url.query).get("session_id", [""])[0]
                    body = json.dumps(hits.get(session, {}) if parts[0] == "get_ssrf.php" else {}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_HEAD = _answer

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/"
        Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def log(message: str) -> None:
    print(f"scan   | {message}", flush=True)


def certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (a day), its key in PKCS#8 as granian wants."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def deployment(directory: Path):
    import urllib3

    from tools.deploy import Deployment

    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)  # our own throwaway certificate
    cert, key = certificate(directory)
    deploy = Deployment(log_dir=directory, celery_concurrency=1)
    deploy.ready_path, deploy.verify = "/healthz", False
    deploy.url = f"https://127.0.0.1:{deploy.port}"
    deploy.metrics_token = secrets.token_urlsafe(24)
    deploy.env.update(
        DJANGO_SETTINGS_MODULE="lab.scan_settings",
        GRANIAN_SSL_CERTIFICATE=str(cert),
        GRANIAN_SSL_KEYFILE=str(key),
        GRANIAN_SSL_PROTOCOL_MIN="tls1.2",
        METRICS_TOKEN=deploy.metrics_token,
        CELERY_TASK_DEFAULT_QUEUE=QUEUE,
        SMS_BACKEND="users.sms.FileSmsBackend",
        SMS_FILE_PATH=str(directory / "sms.jsonl"),
        PROMETHEUS_MULTIPROC_DIR=str(directory / "prometheus"),
        REQUEST_LOG_LEVEL="WARNING",
    )
    shutil.rmtree(directory / "prometheus", ignore_errors=True)
    (directory / "prometheus").mkdir()
    return deploy


def answers_by_status(deploy) -> dict[str, int]:
    """The deployment's own count of its answers so far, by status class ("2xx", ...: its
    /metrics, with the token), whatever wapiti made of them."""
    import requests
    from prometheus_client.parser import text_string_to_metric_families

    headers = {"Authorization": f"Bearer {deploy.metrics_token}"}
    text = requests.get(f"{deploy.url}/metrics", headers=headers, timeout=10, verify=False).text
    counts: dict[str, int] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "seckill_http_requests_total":
                status = sample.labels.get("status", "?")[:1] + "xx"
                counts[status] = counts.get(status, 0) + int(sample.value)
    return counts


def openapi_schema(deploy, directory: Path) -> Path:
    """The API's OpenAPI schema as the deployment serves it, in a file whose name says JSON
    (wapiti picks its parser by the extension), with this deployment as its server."""
    import requests

    schema = requests.get(f"{deploy.url}/api/schema/?format=json", timeout=30, verify=False).json()
    schema["servers"] = [{"url": deploy.url}]
    path = directory / "openapi.json"
    path.write_text(json.dumps(schema))
    return path


def session_cookie(deploy) -> str:
    import requests

    response = requests.post(
        f"{deploy.url}/api/v1/users/login",
        json={"mobile": SHOPPER[0], "password": SHOPPER[1]},
        timeout=10,
        verify=False,
    )
    response.raise_for_status()
    return response.cookies["sessionid"]


def wapiti(deploy, name: str, *, seconds: int, cookie: str | None, endpoint: Endpoint) -> dict:
    directory = RESULTS / name
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    command = [
        str(WAPITI), "-u", f"{deploy.url}/", "--scope", "folder",
        "--max-scan-time", str(seconds), "--max-attack-time", str(max(10, seconds // 8)),
        "-d", "4", "--max-links-per-page", "60", "--max-files-per-dir", "40", "--tasks", "4", "-t", "10",
        "--verify-ssl", "0", "--no-bugreport", "--flush-session",
        "--store-session", str(directory / "session"), "--store-config", str(directory / "config"),
        "--external-endpoint", endpoint.url, "--internal-endpoint", endpoint.url,
        *(arg for path in START_PATHS for arg in ("-s", f"{deploy.url}{path}")),
        "--swagger", str(openapi_schema(deploy, directory)),
        "-f", "json", "-dr", "1", "-o", str(directory / "report.json"), "-v", "1",
    ]  # fmt: skip
    if cookie is not None:
        command += ["-C", f"sessionid={cookie}"]
        for path in LOGOUTS:
            command += ["-x", f"{deploy.url}{path}*"]
    started = time.monotonic()
    with open(directory / "wapiti.log", "w") as output:
        result = subprocess.run(command, cwd=directory, stdout=output, stderr=subprocess.STDOUT, timeout=seconds + 300)
    took = time.monotonic() - started
    log(f"{name}: wapiti exited {result.returncode} after {took:.0f} s (its log: {directory / 'wapiti.log'})")
    return json.loads((directory / "report.json").read_text())


def modules_run(name: str) -> list[str]:
    """The attack modules wapiti says it loaded and ran, from its log."""
    text = (RESULTS / name / "wapiti.log").read_text(errors="replace")
    return sorted(set(re.findall(r"Launching module (\w+)", text)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=150, help="wapiti's --max-scan-time, per scan (default 150)")
    options = parser.parse_args(argv)
    if not WAPITI.exists():
        log(f"error: {WAPITI} missing: run `make scan`, which installs requirements-scan.txt there")
        return 2
    allowed = allowlist_parse(ALLOWLIST.read_text())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "seckill_site.settings.local")
    import django

    django.setup()
    RESULTS.mkdir(parents=True, exist_ok=True)
    deploy = deployment(RESULTS)
    endpoint = Endpoint()
    failures: list[str] = []
    try:
        deploy.migrate()
        for step in (["collectstatic", "--noinput", "-v", "0"], ["seed_demo"], ["seckill_warm", "--captchas", "0"]):
            subprocess.run([sys.executable, "manage.py", *step], cwd=ROOT, env=deploy.env, check=True,
                           stdout=subprocess.DEVNULL)  # fmt: skip
        deploy.start_web(workers=2, threads=4)
        deploy.start_celery(QUEUE)
        log(f"deployment: {deploy.url} (production settings without rate limits, TLS, granian 2x4, "
            f"Celery -c 1); allow-list: {len(allowed)} entries")  # fmt: skip
        for name, cookie in (("anonymous", None), ("logged-in", session_cookie(deploy))):
            before = answers_by_status(deploy)
            report = report_read(wapiti(deploy, name, seconds=options.seconds, cookie=cookie, endpoint=endpoint))
            after = answers_by_status(deploy)
            answered = {status: after[status] - before.get(status, 0) for status in sorted(after)}
            errors = answered.get("5xx", 0)
            log(f"{name}: the server answered " + ", ".join(f"{n} {status}" for status, n in answered.items()))
            log(f"{name}: {len(report.crawled)} URLs crawled:")
            for url in report.crawled:
                print(f"    {url}")
            log(f"{name}: modules run: {', '.join(modules_run(name)) or 'none'}")
            log(f"{name}: {len(report.anomalies)} anomalies, {errors} 5xx answers counted by the server")
            for finding in report.anomalies:
                print(f"    {finding}")
            log(f"{name}: {len(report.vulnerabilities)} findings:")
            refused = unexpected(report, allowed)
            for finding in report.vulnerabilities:
                print(f"    {'NOT ALLOWED ' if finding in refused else 'allowed     '}{finding}")
            failures += [f"{name}: {finding}" for finding in refused]
            if errors:
                failures.append(f"{name}: the server answered {errors} requests with a 5xx (see {RESULTS}/web.log)")
            if not report.crawled:
                failures.append(f"{name}: wapiti crawled nothing")
    finally:
        deploy.stop()
        endpoint.close()
    if failures:
        log(f"FAILED: {len(failures)} problems")
        for failure in failures:
            print(f"    {failure}")
        return 1
    log("passed: no 5xx, no anomaly, every finding on the allow-list")
    return 0


if __name__ == "__main__":
    sys.exit(main())
