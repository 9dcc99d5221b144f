"""`python -m lab.bench.middleware_cost`: what each middleware costs per request, in microseconds.

Django's handler is built with settings.MIDDLEWARE as usual, except that each entry is wrapped
in a timer: a request records how long it spent inside each middleware, and an entry's own
price is its time less the time of the entries inside it. Both readings come from the same
request, so a neighbour's burst on the shared machine lands on both; the median over many
requests is printed. The view's column includes what runs between the last middleware and the
view (URL resolving, process_view hooks such as CSRF's). "whole" is the WSGI call, Django's
request and response objects and signals included. Two requests: an anonymous GET of the detail
poll (/goods/getDetails/<id> of a bench sale) and a shopper's GET of /seckill/result (the
session read from Redis: the floor's kind of request).

    python -m lab.bench.middleware_cost [--requests 3000]

It runs in this process (no server, no network but Redis and PostgreSQL) with the bench's
settings (production's middleware, DEBUG off).
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import secrets
import statistics
import sys
import time

# As tools.deploy runs the web processes: production's settings on loopback.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.bench.settings")
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")
os.environ.setdefault("LOG_LEVEL", "WARNING")


def _environ(path: str, query: str = "", cookie: str = "") -> dict:
    env = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "HTTP_HOST": "127.0.0.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_ACCEPT": "application/json",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
    }
    if cookie:
        env["HTTP_COOKIE"] = cookie
    return env


class _Timed:
    """One middleware, timed: adds its inclusive time to the request's readings."""

    def __init__(self, middleware, index: int) -> None:
        self.middleware, self.index = middleware, index

    def __call__(self, request):
        started = time.perf_counter()
        response = self.middleware(request)
        request._inclusive[self.index] = time.perf_counter() - started
        return response


class _TimedView:
    """What runs inside the innermost middleware: URL resolving, process_view hooks, the view."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        request._inclusive[-1] = time.perf_counter() - started
        return response


def _handler(stack: list[str]):
    """WSGIHandler whose middleware chain is BaseHandler.load_middleware's (synchronous), each
    entry wrapped in _Timed."""
    from django.core.exceptions import MiddlewareNotUsed
    from django.core.handlers.exception import convert_exception_to_response
    from django.core.handlers.wsgi import WSGIHandler
    from django.utils.module_loading import import_string

    class TimedHandler(WSGIHandler):
        def load_middleware(self, is_async: bool = False) -> None:
            self._view_middleware, self._template_response_middleware, self._exception_middleware = [], [], []
            handler = convert_exception_to_response(_TimedView(self._get_response))
            for index in reversed(range(len(stack))):
                try:
                    middleware = import_string(stack[index])(handler)
                except MiddlewareNotUsed:
                    continue
                if hasattr(middleware, "process_view"):
                    self._view_middleware.insert(0, middleware.process_view)
                if hasattr(middleware, "process_template_response"):
                    self._template_response_middleware.append(middleware.process_template_response)
                if hasattr(middleware, "process_exception"):
                    self._exception_middleware.append(middleware.process_exception)
                handler = convert_exception_to_response(_Timed(middleware, index))
            self._middleware_chain = handler

    return TimedHandler()


def _measure(handler, environ: dict, count: int, layers: int) -> tuple[list[float], float]:
    """Median own time of each layer (the view last), and the median whole WSGI call, in µs."""
    from django.core.handlers.wsgi import WSGIRequest

    seen: list[list[float]] = [[] for _ in range(layers + 1)]
    whole: list[float] = []
    original_init = WSGIRequest.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self._inclusive = [0.0] * (layers + 1)  # the view last
        readings.append(self._inclusive)

    def start_response(status, headers, exc_info=None):
        if not status.startswith("200"):
            raise RuntimeError(f"{environ['PATH_INFO']}: {status}")

    WSGIRequest.__init__ = init  # type: ignore[method-assign]
    try:
        for _ in range(count):
            readings: list[list[float]] = []
            started = time.perf_counter()
            handler(dict(environ, **{"wsgi.input": io.BytesIO(b"")}), start_response).close()
            whole.append(time.perf_counter() - started)
            inclusive = readings[0]
            for index in range(layers):
                seen[index].append(inclusive[index] - inclusive[index + 1])
            seen[layers].append(inclusive[layers])
    finally:
        WSGIRequest.__init__ = original_init  # type: ignore[method-assign]
    return [statistics.median(values) * 1e6 for values in seen], statistics.median(whole) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.bench.middleware_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000, help="requests of each kind (3000)")
    args = parser.parse_args(argv)

    import django

    django.setup()
    from django.conf import settings
    from django.core import signals
    from django.db import close_old_connections

    from lab import prepare

    # The request log's line per request is part of the price, but not its terminal.
    for handler in logging.getLogger().handlers + logging.getLogger("seckill.request").handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(io.StringIO())  # type: ignore[arg-type]
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)

    sale = prepare.sale_create(name="middleware-cost", units=10)
    shopper = prepare.shoppers_create(count=1, secret_key=settings.SECRET_KEY, progress=lambda _line: None)[0]
    try:
        requests = {
            "anonymous detail": _environ(f"/goods/getDetails/{sale.pk}"),
            "shopper's result": _environ(
                "/seckill/result", f"goodsId={sale.pk}", f"sessionid={shopper.session}; csrftoken={shopper.csrf}"
            ),  # fmt: skip
        }
        stack = list(settings.MIDDLEWARE)
        handler = _handler(stack)
        figures = {name: _measure(handler, env, args.requests, len(stack)) for name, env in requests.items()}
        print(f"{args.requests} requests each; median µs per request\n")
        print(f"{'middleware (outermost first)':<52}" + "".join(f"{name:>20}" for name in requests))
        for index, entry in enumerate(stack):
            print(f"{entry:<52}" + "".join(f"{figures[n][0][index]:>20.1f}" for n in requests))
        print(
            f"{'(URL resolving, process_view, the view)':<52}"
            + "".join(f"{figures[n][0][-1]:>20.1f}" for n in requests)
        )
        print(f"{'whole WSGI call':<52}" + "".join(f"{figures[n][1]:>20.1f}" for n in requests))
    finally:
        prepare.cleanup(sales=None, shoppers=[shopper])
        prepare.leftovers_remove()  # the sale
    return 0


if __name__ == "__main__":
    sys.exit(main())
