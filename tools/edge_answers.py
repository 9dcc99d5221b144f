"""The two files deploy/edge-answers.vcl includes, written from the shop's settings: what the edge
needs to answer a ticketed result poll itself (docs/edge.md, "Answers at the edge") and to check
the waiting room's pass (deploy/edge-pass.vcl).

`answers_files(directory)` writes `edge-answers-config.vcl` (the Redis server or Cluster seeds,
the key names' prefixes, the ticket's life, the hosts and schemes Django serves and the headers
of its answer, taken from Django's own answer to a poll; the rooms' keys and the waiting room's
answer) and `edge-secrets.vcl` (the ticket key, seckill.tickets.ticket_key, and the pass key,
waitingroom.passes.pass_key, mode 0600). `answers_files_remove(directory)` removes them, so that
deploy's copies, which answer nothing, apply. Needs Django's settings (DJANGO_SETTINGS_MODULE):
a deploy runs `python -m tools.edge_answers <vcl_path directory>`.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:  # the codes' words need Django's settings, which a harness may set only later
    from seckill_site.codes import EnvelopeCode

CONFIG, SECRETS = "edge-answers-config.vcl", "edge-secrets.vcl"
# Django's headers the edge's answer sets per request, or that the server adds on its own.
_PER_ANSWER = {"content-length", "content-language", "x-request-id", "set-cookie", "date", "server"}
_VCL_TEXT = re.compile(r'[^"\x00-\x1f\x7f]*')
_VCL_LONG_TEXT = re.compile(r"[^\x00-\x1f\x7f]*")
_HEADER = re.compile(r"[A-Za-z0-9-]{1,64}")
# A sale id no shop reaches, where the edge puts the request's: it splits a key or a body in two.
_SALE = 918273645
# The waiting room's page of a sale, under each language's prefix as the shop's pages are.
WAITING_ROOM_PATH = "/waiting-room/"
# How long a client refused at the edge for want of a pass waits before it asks again.
PASS_RETRY_SECONDS = 5


def _text(value: str) -> str:
    """`value` as a VCL string; ValueError for anything VCL cannot hold plainly."""
    if _VCL_TEXT.fullmatch(value):
        return f'"{value}"'
    if _VCL_LONG_TEXT.fullmatch(value) and '"}' not in value:
        return '{"' + value + '"}'
    raise ValueError(f"not a VCL string: {value!r}")


def _text_joined(value: str) -> str:
    """`value` as VCL strings joined with `+`: a long string cannot hold `"}`, so it is cut there."""
    pieces = value.split('"}')
    parts = [piece + '"' * (i < len(pieces) - 1) for i, piece in enumerate(pieces)]
    parts = [parts[0], *("}" + part for part in parts[1:])]
    return " + ".join(_text(part) for part in parts if part) or '""'


def _redis_db(url: str) -> tuple[str, str, str]:
    """(location, type, password) for vmod redis from REDIS_URL; ValueError for what the edge
    does not reach (TLS, a database other than 0, a user name)."""
    parts = urlsplit(url)
    cluster = parts.scheme == "redis+cluster"
    if parts.scheme not in ("redis", "redis+cluster"):
        raise ValueError("the edge reads Redis over plain TCP only (redis:// or redis+cluster://)")
    if parts.path.strip("/") not in ("", "0") or parts.username:
        raise ValueError("the edge reads Redis database 0 with a password at most")
    seed = parts.netloc.rpartition("@")[2].split(",")[0]
    return seed, "cluster" if cluster else "master", unquote(parts.password or "")


def _host_pattern(hosts: list[str]) -> str:
    exact = [re.escape(host.lower()).replace("\\-", "-") for host in hosts if host and host[0] not in ".*"]
    return "^(?i)(" + "|".join(exact) + ")(:[0-9]{1,5})?$" if exact else "^$"


def _head(*, host: str, https: bool) -> list[tuple[str, str]]:
    """The headers of Django's answer to a result poll that are the same for every shopper."""
    from django.conf import settings
    from django.test import Client

    extra = {"HTTP_HOST": host}
    if https:
        name, value = settings.SECURE_PROXY_SSL_HEADER
        extra[name] = value
    response = Client().get(settings.SECKILL_RESULT_TICKET_PATH, {"goodsId": "1"}, **extra)
    return [(name, value) for name, value in response.items() if name.lower() not in _PER_ANSWER]


def config_vcl() -> str:
    from django.conf import settings

    from seckill.tickets import ticket_seconds
    from seckill_site.redis.keys import PREFIX
    from users.sessions import session_stored_key

    location, kind, password = _redis_db(settings.REDIS_URL)
    sample = "u1." + "0" * 32
    session_prefix = session_stored_key(sample).removesuffix("{u1}" + sample)
    host = next((h for h in settings.ALLOWED_HOSTS if h and h[0] not in ".*"), "")
    schemes = []
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy == ("HTTP_X_FORWARDED_PROTO", "https") and host:
        schemes.append(("https", 'req.http.X-Forwarded-Proto == "https"', _head(host=host, https=True)))
    if not settings.SECURE_SSL_REDIRECT and host:
        schemes.append(("http", "!req.http.X-Forwarded-Proto", _head(host=host, https=False)))
    lines = [
        "# Written by tools/edge_answers.py from the shop's settings; deploy/edge-answers.vcl says why.",
        "",
        "sub vcl_init {",
        f"    new answers_redis = redis.db(location={_text(location)}, type={kind}, connection_timeout=500,",
        "        command_timeout=500, max_command_retries=0, sickness_ttl=5"
        + (f", password={_text(password)});" if password else ");"),
        "}",
        "",
        "sub answers_config {",
        '    var.set("answers-refusals", "1");',
        f'    var.set("answers-cluster", "{int(kind == "cluster")}");',
        f'    var.set("answers-prefix", {_text(PREFIX)});',
        f'    var.set("answers-session-prefix", {_text(session_prefix)});',
        f'    var.set("answers-ticket-seconds", "{ticket_seconds()}");',
        '    var.set("answers-scheme", "");',
        f"    if (req.http.Host ~ {_text(_host_pattern(settings.ALLOWED_HOSTS))}) {{",
    ]
    for index, (scheme, condition, _headers) in enumerate(schemes):
        lines.append(f"        {'} els' if index else ''}if ({condition}) {{")
        lines.append(f'            var.set("answers-scheme", "{scheme}");')
    lines += ["        }" if schemes else "", "    }", "}", "", *_refusals_vcl(), "", *_pass_vcl(kind), ""]
    lines.append("sub answers_head {")
    for scheme, _condition, headers in schemes:
        lines.append(f'    if (var.get("answers-scheme") == "{scheme}") {{')
        for name, value in headers:
            if not _HEADER.fullmatch(name):
                raise ValueError(f"header {name!r}")
            lines.append(f"        set resp.http.{name} = {_text(value)};")
        lines.append("    }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _refusals_vcl() -> list[str]:
    """`answers_refusal`: the answer the fast path (and Django) gives a buy of a sale published
    closed (sales.sale_state's `closed` key) or whose window is not open, by refusal and language."""
    from django.conf import settings

    from sales.sale_state import PUBLIC_REFUSALS
    from seckill.fastpath.refusal import refusal_response

    lines = ["sub answers_refusal {"]
    for refusal in PUBLIC_REFUSALS:
        for language, _name in settings.LANGUAGES:
            response = refusal_response(refusal.code, language)
            asked = f'var.get("answers-refusal") == "{refusal.name}" && var.get("answers-language") == "{language}"'
            lines += [
                f"    if ({asked}) {{",
                '        var.set("answers-refused", "1");',
                f"        set resp.status = {response.status_code};",
                f"        set resp.reason = {_text(response.reason_phrase)};",
                *(f"        set resp.http.{name} = {_text(value)};" for name, value in response.items()
                  if name.lower() not in ("content-length",) and _HEADER.fullmatch(name)),
                f"        set resp.body = {_text(response.content.decode())};",
                "    }",
            ]  # fmt: skip
    return [*lines, "}"]


def waiting_code() -> EnvelopeCode:
    """The code the edge answers a request without a pass with: the shop's own."""
    from waitingroom.codes import WaitingCode

    return WaitingCode.IN_WAITING_ROOM


def _pass_vcl(kind: str) -> list[str]:
    """`pass_config` (the rooms' keys, split where the sale id goes) and `pass_words` (the
    waiting room's page and the shop's envelope saying so, per language) for edge-pass.vcl."""
    from django.conf import settings
    from django.utils import translation

    from seckill_site.http import fail
    from waitingroom import keys
    from waitingroom.answers import refusal_data

    room_before, room_after = _split(keys.room(_SALE))
    lines = [
        "sub pass_config {",
        '    var.set("pass-check", "1");',
        f'    var.set("pass-cluster", "{int(kind == "cluster")}");',
        f'    var.set("pass-room-before", {_text(room_before)});',
        f'    var.set("pass-room-after", {_text(room_after)});',
        f'    var.set("pass-shop-key", {_text(keys.shop())});',
        f'    var.set("pass-retry-after", "{PASS_RETRY_SECONDS}");',
        f'    var.set("pass-json-status", "{waiting_code().status}");',
        "}",
        "",
        "sub pass_words {",
        '    var.set("pass-language", var.get("answers-language"));',
        f'    if (var.get("pass-language") !~ "^({"|".join(code for code, _name in settings.LANGUAGES)})$") {{',
        f'        var.set("pass-language", "{settings.LANGUAGE_CODE}");',
        "    }",
    ]
    for language, _name in settings.LANGUAGES:
        url = ("" if language == settings.LANGUAGE_CODE else f"/{language}") + WAITING_ROOM_PATH
        with translation.override(language):
            body = fail(waiting_code(), data=refusal_data(None, _SALE, language)).content.decode()
        before, after = _split(body)
        lines += [
            f'    if (var.get("pass-language") == "{language}") {{',
            f'        var.set("pass-url", {_text(url)});',
            f'        var.set("pass-body-before", {_text_joined(before)});',
            f'        var.set("pass-body-after", {_text_joined(after)});',
            "    }",
        ]
    return [*lines, "}"]


def _split(text: str) -> tuple[str, str]:
    """`text` before and after the one place _SALE stands in it."""
    before, found, after = text.partition(str(_SALE))
    if not found or str(_SALE) in after:
        raise ValueError(f"no one place for the sale in {text!r}")
    return before, after


def secrets_vcl() -> str:
    from django.conf import settings

    from seckill.tickets import ticket_key
    from waitingroom.passes import pass_key

    # A pass signed under the first fallback key still passes: a rotation must not send every
    # admitted shopper back to the queue (Python takes all the fallbacks').
    fallbacks = settings.SECRET_KEY_FALLBACKS
    old = pass_key(fallbacks[0]) if fallbacks else ""
    return (
        "# Written by tools/edge_answers.py: the result ticket's key (seckill.tickets.ticket_key) and the\n"
        "# waiting room pass's (waitingroom.passes.pass_key, the first fallback's beside it). Secret.\n\n"
        f'sub answers_secret {{\n    var.set("answers-key", "{ticket_key()}");\n}}\n\n'
        f'sub pass_secret {{\n    var.set("pass-key", "{pass_key()}");\n    var.set("pass-key-old", "{old}");\n}}\n'
    )


def answers_files(directory: Path) -> None:
    """Write both files into `directory`, the secret one readable by its owner alone."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / CONFIG).write_text(config_vcl())
    secrets = directory / SECRETS
    secrets.unlink(missing_ok=True)
    descriptor = os.open(secrets, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(secrets_vcl())


def answers_files_remove(directory: Path) -> None:
    for name in (CONFIG, SECRETS):
        (directory / name).unlink(missing_ok=True)


if __name__ == "__main__":
    import django

    django.setup()
    answers_files(Path(sys.argv[1]))
