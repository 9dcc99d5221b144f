"""The HTTP side: routes requests to the gateway, the cashier, the bill and the control endpoints.

    GET|POST /gateway.do                 the open platform's one endpoint (methods.py, cashier.py)
    POST     /cashier/<out_trade_no>/pay|cancel   the cashier's buttons
    GET      /bill/<token>.csv.zip       a bill a bill_download_url points at
    /_control/...                        control.py

Parameters are read from the query string and, for a POST, a utf-8 form body too, as Alipay
takes them from both. During an emulated outage /gateway.do and /cashier/ answer 503; connections
are still accepted, as behind a load balancer whose backends are down.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tools.alipay_gateway import bill, cashier, control, methods, times
from tools.alipay_gateway.config import Config
from tools.alipay_gateway.gateway import Gateway
from tools.alipay_gateway.methods import ProtocolError

BODY_LONGEST = 1 << 20
JSON = "application/json;charset=utf-8"
HTML = "text/html; charset=utf-8"
CASHIER = re.compile(r"/cashier/([A-Za-z0-9_]{1,64})/(pay|cancel)")
BILL = re.compile(r"/bill/([0-9a-f]{32})\.csv\.zip")
CONTROL = re.compile(r"/_control/(pay|notify)/([A-Za-z0-9_]{1,64})")
log = logging.getLogger("alipay_gateway.http")


class Server(ThreadingHTTPServer):
    """The gateway's HTTP server; `start` makes and runs one."""

    # Fault runs and load tests open connections in bursts; the default backlog of 5 would refuse some.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], gateway: Gateway) -> None:
        super().__init__(address, Handler)
        self.gateway = gateway
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        """Stop answering, then stop the notifier; trades are on disk already."""
        self.shutdown()
        self.server_close()
        self.gateway.stop()
        if self._thread is not None:
            self._thread.join()


def start(config: Config, state_dir: Path, host: str = "127.0.0.1", port: int = 0) -> Server:
    """A gateway listening on host:port (0: any free port, see `.url`), served from a thread of its
    own, its trades kept in `state_dir`; `.stop()` ends it."""
    server = Server((host, port), Gateway(config, state_dir))
    server.gateway.start()
    server._thread = threading.Thread(target=server.serve_forever, name="alipay-http", daemon=True)
    server._thread.start()
    return server


class Handler(BaseHTTPRequestHandler):
    server: Server
    server_version = "AlipayGatewayStandIn/1.0"

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def do_DELETE(self) -> None:
        self._route()

    def _route(self) -> None:
        try:
            self._dispatch()
        except Exception:
            # A bug here must not look like a network fault to the shop: answer, and log it.
            log.exception("%s %s failed", self.command, urllib.parse.urlsplit(self.path).path)
            self._send(500, b"500 stand-in error, see its log\n", "text/plain; charset=utf-8")

    def _dispatch(self) -> None:
        gateway = self.server.gateway
        url = urllib.parse.urlsplit(self.path)
        path, verb = url.path, self.command
        # The body is read first even when refused: closing a socket with unread data resets the
        # connection, and the caller would see a reset instead of the answer.
        try:
            params, refusal = self._params(url.query), None
        except ProtocolError as error:
            params, refusal = {}, error
        if path == "/favicon.ico":  # browsers ask every origin for one; the pages name none
            self._send(204, b"", "image/x-icon")
            return
        if (path == "/gateway.do" or path.startswith("/cashier/")) and gateway.outage_left > 0:
            self._send(503, b"503 Service Unavailable (emulated outage)\n", "text/plain; charset=utf-8")
            return
        if refusal is not None:
            self._send(200, refusal.body(), JSON)
            return
        if path == "/gateway.do" and verb in ("GET", "POST"):
            self._gateway(params)
        elif (match := CASHIER.fullmatch(path)) and verb == "POST":
            act = cashier.pay if match[2] == "pay" else cashier.cancel
            self._page(act(match[1], gateway.context(self._base_url())))
        elif (match := BILL.fullmatch(path)) and verb == "GET":
            self._bill(match[1])
        elif path.startswith("/_control/"):
            self._control(path, verb, params)
        else:
            self._send(404, b"not found\n", "text/plain; charset=utf-8")

    def _gateway(self, params: dict[str, str]) -> None:
        gateway = self.server.gateway
        try:
            methods.check(params, gateway.config)
        except ProtocolError as error:
            log.info("%s %s refused: %s", self.command, params.get("method"), error)
            self._send(200, error.body(), JSON)
            return
        context = gateway.context(self._base_url())
        if params["method"] in methods.PAGE_METHODS:
            self._page(cashier.visit(params, context))
        else:
            self._send(200, methods.answer(params, context), JSON)

    def _bill(self, token: str) -> None:
        gateway = self.server.gateway
        day = gateway.links.day(token)
        if day is None:
            self._send(404, b"this bill link is unknown or has lapsed\n", "text/plain; charset=utf-8")
            return
        found = gateway.store.completed_on(day)
        self._send(200, bill.archive(found, day, gateway.config.seller_id, times.now()), "application/zip")

    def _control(self, path: str, verb: str, params: dict[str, str]) -> None:
        gateway = self.server.gateway
        match = CONTROL.fullmatch(path)
        if match and verb == "POST":
            act = control.pay if match[1] == "pay" else control.notify_again
            status, answer = act(gateway, match[2])
        elif path == "/_control/create" and verb == "POST":
            status, answer = control.create(gateway, params, self._base_url())
        elif path == "/_control/notifications" and verb == "POST":
            status, answer = control.notifications(gateway, params.get("hold"))
        elif path == "/_control/outage" and verb == "POST":
            status, answer = control.outage(gateway, params.get("seconds"))
        elif path == "/_control/trades" and verb == "GET":
            status, answer = control.trades(gateway)
        elif path == "/_control/data" and verb == "DELETE":
            status, answer = control.forget(gateway)
        else:
            status, answer = 404, {"error": f"no control {verb} {path}"}
        self._send(status, json.dumps(answer, ensure_ascii=False).encode(), JSON)

    def _params(self, query: str) -> dict[str, str]:
        """The query string's parameters and a form body's, once each; ProtocolError otherwise."""
        sources = [query]
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= BODY_LONGEST:
            raise ProtocolError("40002", "isv.invalid-parameter", "请求体长度不对 Content-Length is wrong or too large")
        body = self.rfile.read(length) if length else b""
        if body and self.headers.get_content_type() == "application/x-www-form-urlencoded":
            try:
                sources.append(body.decode("utf-8"))
            except UnicodeDecodeError:
                raise ProtocolError("40002", "isv.invalid-charset", "字符集错误 The form is not utf-8") from None
        params: dict[str, str] = {}
        for source in sources:
            try:
                pairs = urllib.parse.parse_qsl(source, keep_blank_values=True, errors="strict")
            except UnicodeDecodeError:
                raise ProtocolError("40002", "isv.invalid-charset", "字符集错误 Parameters are not utf-8") from None
            for name, value in pairs:
                if name in params:
                    raise ProtocolError("40002", "isv.invalid-parameter", f"参数重复 {name} is given twice")
                params[name] = value
        return params

    def _base_url(self) -> str:
        # The address the caller used, so that a link works from where it called (a container, say).
        return f"http://{self.headers.get('Host') or self.server.url.removeprefix('http://')}"

    def _page(self, reply: cashier.Reply) -> None:
        if reply.location is not None:
            self.send_response(reply.status)
            self.send_header("Location", reply.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._send(reply.status, reply.body, HTML)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # One short line per request; the query string, signature and all, would drown the log.
        status = code.value if isinstance(code, HTTPStatus) else code
        log.info("%s %s %s", self.command, urllib.parse.urlsplit(self.path).path, status)

    def log_message(self, format: str, *args: object) -> None:
        log.warning("%s", format % args)
