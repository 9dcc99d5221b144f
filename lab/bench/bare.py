"""The bench's `bare` scenario: a fixed JSON answer to `POST /bench/bare`, outside Django but in
the same web server, process and settings as the shop (lab.bench.settings names `wrap` in
WSGI_MIDDLEWARE). Its rate is the server's own ceiling, the yardstick of every other scenario."""

from collections.abc import Callable, Iterable

BARE_PATH = "/bench/bare"
BODY = b'{"code":0,"msg":"success","data":null}'
HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(BODY)))]


def wrap(app: Callable) -> Callable:
    def bare(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == BARE_PATH and environ.get("REQUEST_METHOD") == "POST":
            start_response("200 OK", HEADERS)
            return [BODY]
        return app(environ, start_response)

    return bare
