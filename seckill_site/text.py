"""One-line text the shop stores and then writes into other formats (pages, calendar files,
spreadsheets, texts): what a line may hold."""

import unicodedata

# Control characters (C0, DEL, C1: tab, CR, LF, NUL, ESC, NEL ...) and the Unicode line and
# paragraph separators: whatever some reader of some format takes as the end of a line.
_BREAKING = ("Cc", "Zl", "Zp")


def is_control(char: str) -> bool:
    """Whether one line may not hold `char`."""
    return unicodedata.category(char) in _BREAKING
