"""The captcha as it was before issue 15 (main at 2dc01a6), kept verbatim as the "before" of
`make captcha-attack`. Not used by the shop."""

import io
import secrets

from PIL import Image, ImageDraw, ImageFilter, ImageFont

OPERATORS = "+-*"
WIDTH, HEIGHT = 150, 48


def expression_new() -> str:
    digits = [str(secrets.randbelow(9) + 1) for _ in range(3)]
    ops = [secrets.choice(OPERATORS) for _ in range(2)]
    return f"{digits[0]}{ops[0]}{digits[1]}{ops[1]}{digits[2]}"


def expression_value(expression: str) -> int:
    """Evaluate single-digit `+ - *` expressions with the usual precedence."""
    tokens = list(expression)
    if (
        len(tokens) % 2 == 0
        or not all(t.isdigit() for t in tokens[::2])
        or not all(t in OPERATORS for t in tokens[1::2])
    ):
        raise ValueError(f"not a captcha expression: {expression!r}")
    # First pass folds multiplications into terms; second pass adds the signed terms.
    terms: list[int] = [int(tokens[0])]
    signs: list[int] = [1]
    for op, digit in zip(tokens[1::2], tokens[2::2], strict=True):
        if op == "*":
            terms[-1] *= int(digit)
        else:
            terms.append(int(digit))
            signs.append(1 if op == "+" else -1)
    return sum(sign * term for sign, term in zip(signs, terms, strict=True))


def image_png(expression: str) -> bytes:
    rng = secrets.SystemRandom()
    image = Image.new("RGB", (WIDTH, HEIGHT), (240, 244, 250))
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        points = [(rng.randrange(WIDTH), rng.randrange(HEIGHT)) for _ in range(2)]
        draw.line(points, fill=(rng.randrange(120, 200),) * 3, width=1)
    font = ImageFont.load_default(size=28)
    x = 10
    for char in f"{expression}=?":
        y = rng.randrange(2, 12)
        draw.text((x, y), char, font=font, fill=(rng.randrange(0, 90), rng.randrange(0, 90), rng.randrange(60, 140)))
        x += 17
    for _ in range(120):
        draw.point((rng.randrange(WIDTH), rng.randrange(HEIGHT)), fill=(rng.randrange(256),) * 3)
    image = image.filter(ImageFilter.SMOOTH)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
