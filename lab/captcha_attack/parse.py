"""Turn what an OCR engine read into an answer, the way a scalper's script would: map the
look-alike letters to digits and operators, drop the decoration, and evaluate."""

import re

# Look-alikes OCR engines produce for digits and operators (both captchas' fonts).
_REPAIRS = str.maketrans(
    {
        **dict.fromkeys("oODQ", "0"),
        **dict.fromkeys("lIi|!jJ]", "1"),
        **dict.fromkeys("zZ", "2"),
        **dict.fromkeys("sS$", "5"),
        **dict.fromkeys("bG", "6"),
        **dict.fromkeys("gq", "9"),
        **dict.fromkeys("B", "8"),
        **dict.fromkeys("A", "4"),
        **dict.fromkeys("xX×*乘", "*"),
        **dict.fromkeys("−—–_~一二", "-"),
        **dict.fromkeys("t十", "+"),
    }
)
_NEW = re.compile(r"^(\d{1,2})([+*-])(\d{1,2})$")


def normalise(text: str) -> str:
    repaired = text.translate(_REPAIRS)
    repaired = re.sub(r"[^0-9+*-]", "", repaired)  # '=', '?', spaces, stray letters
    return re.sub(r"[+*-]+$", "", repaired)  # the '=' of '=?' often reads as '-'


def answer_new(text: str) -> int | None:
    match = _NEW.match(normalise(text))
    if match is None:
        return None
    left, operator, right = int(match[1]), match[2], int(match[3])
    return left + right if operator == "+" else left - right if operator == "-" else left * right


def answer_old(text: str) -> int | None:
    """The old format is strictly digit, operator, digit, operator, digit, then `=?`: keep
    to that shape, put back the thin minus OCR tends to drop (a digit where an operator
    belongs), and ignore whatever `=?` was read as."""
    from lab.captcha_attack import legacy

    shaped: list[str] = []
    for char in re.sub(r"[^0-9+*-]", "", text.translate(_REPAIRS)):
        if len(shaped) == 5:
            break
        wants_digit = len(shaped) % 2 == 0
        if wants_digit and char.isdigit() or not wants_digit and not char.isdigit():
            shaped.append(char)
        elif char.isdigit():
            shaped += ["-", char]
    if len(shaped) < 5:
        return None
    return legacy.expression_value("".join(shaped[:5]))
