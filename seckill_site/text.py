"""One-line text the shop stores and then writes into other formats (pages, calendar files,
spreadsheets, texts): what a line may hold, checked where it comes in."""

import unicodedata

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

# Control characters (C0, DEL, C1: tab, CR, LF, NUL, ESC, NEL ...) and the Unicode line and
# paragraph separators: whatever some reader of some format takes as the end of a line.
_BREAKING = ("Cc", "Zl", "Zp")


def is_control(char: str) -> bool:
    """Whether one line may not hold `char`."""
    return unicodedata.category(char) in _BREAKING


def control_characters(value: str) -> list[str]:
    """The characters of `value` that one line may not hold, each once, in the order met."""
    return list(dict.fromkeys(char for char in value if is_control(char)))


def validate_one_line(value: str) -> None:
    """A model field's validator: refuses control characters and line breaks, naming them."""
    found = control_characters(value)
    if found:
        raise ValidationError(
            _("Remove the control characters or line breaks: %(found)s."),
            code="control_characters",
            params={"found": ", ".join(f"U+{ord(char):04X}" for char in found)},
        )
