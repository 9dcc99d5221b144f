"""Requests at the WSGI level, to compare the fast path's answers with Django's byte for byte."""

import io
from contextlib import contextmanager

from seckill.fastpath import FastPath

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
