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
