"""Error codes of the JSON envelope `{"code", "msg", "data"}`: the machinery and the core's codes.

Each code is an EnvelopeCode member (code, default message, HTTP status); the envelope
(seckill_site.http, seckill_site.api, seckill_site.errors) answers any app's. The core's codes
(`Code`) are the ones every endpoint may answer; each app defines its own in its `codes` module,
a subclass of EnvelopeCode. A code is a client's contract: unique across every app, so that
a client can tell one answer from another (a retry from an end), and one in use is never
renumbered or reused (seckill_site/tests/test_codes.py).
"""

from collections import Counter
from collections.abc import Iterable, Iterator
from enum import Enum

from django.apps import apps
from django.utils.module_loading import autodiscover_modules
from django.utils.translation import gettext, gettext_noop

_ = gettext_noop  # marked for translation here, translated when answered (EnvelopeCode.msg)


class EnvelopeCode(Enum):
    """The base of every app's codes; its members' values are (code, default message, HTTP status)."""

    @property
    def code(self) -> int:
        return self.value[0]

    @property
    def msg(self) -> str:
        return gettext(self.value[1])

    @property
    def status(self) -> int:
        return self.value[2]


class Code(EnvelopeCode):
    """The core's codes: success, and the refusals any endpoint may answer."""

    SUCCESS = (0, "success", 200)
    BAD_REQUEST = (500101, _("bad request"), 400)
    NOT_LOGGED_IN = (500210, _("please log in first"), 401)
    FORBIDDEN = (500211, _("forbidden"), 403)
    NOT_FOUND = (500404, _("not found"), 404)
    METHOD_NOT_ALLOWED = (500405, _("method not allowed"), 405)
    TOO_LARGE = (500413, _("the request is too large"), 413)
    TOO_MANY_REQUESTS = (500429, _("too many requests, slow down"), 429)
    SERVER_BUSY = (500503, _("the shop is busy, retry in a moment"), 503)
    SERVER_ERROR = (500100, _("server error"), 500)


def _subclasses(base: type[EnvelopeCode]) -> Iterator[type[EnvelopeCode]]:
    for subclass in base.__subclasses__():
        yield subclass
        yield from _subclasses(subclass)


def every_code() -> list[EnvelopeCode]:
    """Every code the shop answers: the core's and those of each installed app's `codes` module
    (imported here if nothing has yet). Needs the app registry ready."""
    autodiscover_modules("codes")
    modules = {f"{config.name}.codes" for config in apps.get_app_configs()} | {__name__}
    return [member for enum in _subclasses(EnvelopeCode) if enum.__module__ in modules for member in enum]


def clashes(codes: Iterable[EnvelopeCode]) -> dict[int, list[str]]:
    """{number: the codes sharing it, as "Enum.NAME"} for every number two codes share; empty
    when each is unique. A shared number makes two answers one to a client."""
    codes = list(codes)
    counts = Counter(member.code for member in codes)
    return {
        number: sorted(f"{type(member).__name__}.{member.name}" for member in codes if member.code == number)
        for number, seen in counts.items()
        if seen > 1
    }
