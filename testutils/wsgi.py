"""Requests at the WSGI level, to compare the fast path's answers with Django's byte for byte."""

import io
from contextlib import contextmanager

from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections

from seckill.fastpath import FastPath
from seckill_site.metrics import ThreadCounts

REQUEST_ID = "test-request-1"


LANGUAGES = {
    "en": {},
    "zh-hans by Accept-Language": {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"},
    "zh-hans by cookie": {"HTTP_COOKIE": "django_language=zh-hans"},
}


def environ(method: str, path: str, *, body: bytes = b"", query: str = "", **extra) -> dict:
    env = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_X_REQUEST_ID": REQUEST_ID,
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    if body:
        env["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
        env["CONTENT_LENGTH"] = str(len(body))
    env.update(extra)
    return env


def call(app, env: dict) -> tuple[str, list[tuple[str, str]], bytes]:
    sent = []
    result = app(
        dict(env, **{"wsgi.input": io.BytesIO(env["wsgi.input"].getvalue())}), lambda s, h, e=None: sent.append((s, h))
    )
    body = b"".join(result)
    getattr(result, "close", lambda: None)()
    return sent[0][0], list(sent[0][1]), body


@contextmanager
def answered_below_django(fast: FastPath, *, expected: bool):
    spy = fast.app
    before = spy.calls
    yield
    assert (spy.calls == before) is expected, "answered by the fast path" if not expected else "went to Django"


class Spy:
    """Django's application, counting the requests that reach it."""

    def __init__(self, app) -> None:
        self.app, self.calls = app, 0

    def __call__(self, environ, start_response):
        self.calls += 1
        return self.app(environ, start_response)


@contextmanager
def fast_path_over_django():
    """(Django's application, the fast path over it counting what reaches Django in its Spy),
    with the database connection kept across requests as the test client keeps it (one test
    transaction)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        django = WSGIHandler()
        fast = FastPath(Spy(django), counts=ThreadCounts())
        yield django, fast
        fast.counts.fold()  # nothing left for its folder thread to add to a later test's figures
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
