"""The sale's id as a request names it, read in one place: the seed's wire name `goodsId` in a
query, a form or a JSON body (`sale_id_read`), a buy's URL (PAGE_BUY, API_BUY), and the 400 a
missing or bad one gets (`sale_id_invalid`). Inside the shop the value is `sale_id`."""

import re
from collections.abc import Mapping
from typing import Any

from django.http import HttpResponse
from django.utils.translation import gettext as _

from seckill_site.codes import Code
from seckill_site.http import fail, positive_int

__all__ = ["API_BUY", "PAGE_BUY", "SALE_ID_FIELD", "sale_id_invalid", "sale_id_plain", "sale_id_read"]

SALE_ID_FIELD = "goodsId"

# A page buy names its sale in its form (SALE_ID_FIELD); an API buy in its URL.
PAGE_BUY = re.compile(r"^/seckill/[^/]+/doSeckill$")
API_BUY = re.compile(r"^/api/v1/sales/([^/]+)/buy/[^/]+$")

# positive_int's plain spelling only, as a whole form or query: `goodsId=<id>`.
_PLAIN = re.compile(rf"{SALE_ID_FIELD}=([1-9][0-9]{{0,17}})")
_PLAIN_BYTES = re.compile(_PLAIN.pattern.encode())


def sale_id_read(fields: Mapping[str, Any]) -> int | None:
    """The sale's id under `goodsId` in a request's query or form (a QueryDict) or JSON body (a
    dict): a positive integer that fits a bigint, else None, to be answered `sale_id_invalid()`."""
    return positive_int(fields.get(SALE_ID_FIELD))


def sale_id_invalid() -> HttpResponse:
    """The 400 for a request whose `goodsId` is missing or not a positive integer."""
    return fail(Code.BAD_REQUEST, _("goodsId must be a positive integer"))


def sale_id_plain(encoded: str | bytes) -> int | None:
    """The id of a query or form that is exactly `goodsId=<id>` in positive_int's plain spelling
    (what sale_id_read would read from it, with no parser built); None for anything else, which
    the caller reads with sale_id_read or leaves to Django."""
    match = _PLAIN_BYTES.fullmatch(encoded) if isinstance(encoded, bytes) else _PLAIN.fullmatch(encoded)
    return None if match is None else int(match.group(1))
