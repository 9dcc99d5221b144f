"""What the fuzz tests share: hostile values, stale credentials, and the per-endpoint tally
that `make test` prints at the end (conftest.pytest_terminal_summary)."""

import io
from collections import Counter, defaultdict

from hypothesis import strategies as st
from PIL import Image

# endpoint ("POST /api/v1/users/login", "form /user/register") -> inputs sent, 5xx answers
TALLY: dict[str, Counter] = defaultdict(Counter)


def record(endpoint: str, status: int) -> None:
    TALLY[endpoint]["inputs"] += 1
    TALLY[endpoint]["5xx"] += status >= 500


UNICODE_DIGITS = ["١٢٣", "１２３", "²", "٣", "१२३", "13７00000001", "١٣٧٠٠٠٠٠٠٠١", "𝟏𝟑𝟕"]
BOUNDARY_INTEGERS = [0, -1, 1, 2**15, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**53 + 1, 2**63 - 1, 2**63,
                     -(2**63) - 1, 10**18, 10**30, -(10**30)]  # fmt: skip
ODD_NUMBER_TEXT = ["--5", "+5", "5-", "1e9", "1e400", "NaN", "Infinity", "-0", "0x1F", "1_000", " 7 ", "7\t", "٫5"]


# Redirect targets (`next`): bare words and URL names (which django.shortcuts.redirect would
# reverse), schemes, protocol-relative and backslash forms, encoded and Unicode look-alikes,
# control characters. None may answer 5xx or send a browser to another host.
REDIRECT_TARGETS = [
    "id", "login", "index", "logout", "admin", "admin:index", "users:index", "users:login", "healthz", "metrics",
    "javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox", "//evil.example", "///evil.example", "////evil.example", "https://evil.example/",
    "http:evil.example", "https:/\\evil.example", "/\\evil.example", "\\\\evil.example", "\\/evil.example",
    "/%2F%2Fevil.example", "%2F%2Fevil.example", "/%5Cevil.example", "/\t/evil.example", "/\n/evil.example",
    "/\r\nSet-Cookie: x=1", "/goods\nLocation: https://evil.example", "\x00/goods", "/goods\x00",
    "\u202e//evil.example", "\u3000//evil.example", "／／evil.example", "ｊavascript:alert(1)", "/\u2028evil",
    "http://testserver@evil.example/", "https://evil.example\\@testserver/", "/" + "a" * 5000, "", " ", "?x=1",
    "#frag", "../../etc/passwd", "/goods/goodsList", "/orders/?page=2",
]  # fmt: skip
_URL_CHARACTERS = st.characters(categories=["L", "N", "P", "S", "Cc", "Cf", "Zs"])
hostile_next = st.one_of(
    st.sampled_from(REDIRECT_TARGETS),
    st.text(max_size=40),
    st.text(max_size=30).map(lambda text: "/" + text),
    st.text(max_size=30).map(lambda text: "//" + text),
    st.sampled_from(["/", "\\", "//", "/\\", "http://", "javascript:"]).flatmap(
        lambda head: st.text(alphabet=_URL_CHARACTERS, max_size=20).map(lambda tail: head + tail)
    ),
)


def deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


hostile_scalar = st.one_of(
    st.sampled_from(UNICODE_DIGITS + ODD_NUMBER_TEXT),
    st.sampled_from(BOUNDARY_INTEGERS),
    st.sampled_from(BOUNDARY_INTEGERS).map(str),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.text(max_size=30),
    st.text(alphabet=st.characters(categories=["Nd", "No", "Zs", "Cc", "Cf"]), min_size=1, max_size=20),
    st.integers(min_value=1, max_value=200_000).map(lambda n: "9" * n),  # long digit strings
)
hostile_value = st.recursive(
    hostile_scalar,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=6,
)


def png(size: tuple[int, int], mode: str = "1") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


# Uploads: a decompression bomb, a body past the cap, garbage, a polyglot, and a plain image.
IMAGE_BOMB = png((12_000, 12_000))
UPLOADS = {
    "bomb": IMAGE_BOMB,
    "too-large": png((8, 8), "RGB") + b"\0" * (3 * 1024 * 1024),
    "garbage": b"GIF89a not really",
    "polyglot": png((8, 8), "RGB") + b"<?php echo 1; ?>",
    "small": png((16, 16), "RGB"),
}
