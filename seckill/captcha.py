"""Arithmetic captcha (seed 000): a sum like `47+25`, `83−29` or `7×8`, drawn to defeat OCR.

What people find easy and scripts find hard pull in different directions, so each half is
chosen on its own:

- The sums are easy for people: one operator, `+` and `−` with answers 0–99, or `×` with two
  one-digit operands. There is no precedence to get wrong (`2+3*4` was misread by about one
  shopper in five) and no answer in the hundreds.
- The drawing takes away what off-the-shelf OCR and template attacks rely on: every glyph gets
  its own font, size, rotation and advance, so there is no fixed grid and glyphs overlap; the
  clutter is drawn in the text's own colour and stroke width, so no colour or thickness filter
  separates it; and the whole ink layer goes through a smooth random warp. `make
  captcha-attack` measures the result (see the README): off-the-shelf OCR reads none, but
  an attacker who cuts the two rows apart and reads each with ddddocr solves about half.

The answer is computed from the parsed expression, never `eval`.
"""

import colorsys
import io
import math
import random
import re
import secrets
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFont

WIDTH, HEIGHT = 150, 100

# Internal (ASCII) operator -> the glyph drawn. The true minus and times signs are what
# people expect on paper; the internal form is what the answer is computed from.
OPERATOR_GLYPHS = {"+": "+", "-": "\u2212", "*": "\u00d7"}
_EXPRESSION = re.compile(r"^([0-9]{1,2})([+*-])([0-9]{1,2})$")

# Bundled subsets of DejaVu (free licence, see fonts/LICENSE): a clean checkout renders the
# same captcha on any machine. The system's DejaVu is the fallback if the folder is missing,
# and Pillow's built-in font the last resort, so the captcha never stops working.
FONT_DIR = Path(__file__).resolve().parent / "fonts"
SYSTEM_FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/TTF"), Path("/Library/Fonts"))
SYSTEM_FONT_NAMES = ("DejaVuSans-Bold.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSansMono-Bold.ttf", "DejaVuSerif.ttf")

GLYPH_SIZES = (32, 44)  # pixel size range per glyph
GLYPH_ROTATION = 24  # degrees either way
OPERATOR_ROTATION = 8
GLYPH_ADVANCE = (0.66, 0.86)  # fraction of a digit's ink width before the next glyph starts: overlap
OPERATOR_ADVANCE = (0.9, 1.05)  # operators are small: overlapping them would hide them from people too
GLYPH_JITTER = 5  # pixels up or down from a slanted baseline
# Measured with make captcha-attack: one inverted patch took ddddocr from about 35 % to 12 %,
# a stronger warp to 8 %, both together below 5 %; outlined glyphs and more scatter did little.
INVERT_BLOBS = (0, 0)  # ellipses inside which ink and paper swap
ROW_SPACING = (32.0, 36.0)  # pixels between the centres of the rows: close, but never merged
ROW_SLOPE = (0.04, 0.1)  # how steeply the rows lean (opposite ways)
WARP_GRID = (5, 3)  # columns x rows of the random mesh
WARP_AMPLITUDE = 4.0  # pixels a mesh vertex may move
# What an answer may be (the API documents it): anything else is a bad request, not a wrong
# answer. Every sum's value lies well inside.
ANSWER_MIN, ANSWER_MAX = -99_999, 999_999


def expression_new(rng: random.Random | None = None) -> str:
    """A new sum in its internal form (`47+25`, `83-29`, `7*8`); answers are 0–99."""
    rng = rng or secrets.SystemRandom()
    kind = rng.random()
    if kind < 0.4:
        left = rng.randint(10, 89)
        return f"{left}+{rng.randint(1, 99 - left)}"
    if kind < 0.8:
        left = rng.randint(11, 99)
        return f"{left}-{rng.randint(1, left)}"
    return f"{rng.randint(2, 9)}*{rng.randint(2, 9)}"


def expression_value(expression: str) -> int:
    """The answer of `a+b`, `a-b` (a ≥ b) or `a*b` (one-digit operands); ValueError otherwise."""
    match = _EXPRESSION.match(expression)
    if match is None:
        raise ValueError(f"not a captcha expression: {expression!r}")
    left, operator, right = int(match[1]), match[2], int(match[3])
    if operator == "*":
        if left > 9 or right > 9:
            raise ValueError(f"multiplication takes one-digit operands: {expression!r}")
        return left * right
    value = left + right if operator == "+" else left - right
    if not 0 <= value <= 99:
        raise ValueError(f"answer out of range: {expression!r}")
    return value


def expression_text(expression: str) -> str:
    """What the image shows: the internal form with the true minus and times signs."""
    return "".join(OPERATOR_GLYPHS.get(char, char) for char in expression)


@lru_cache(maxsize=1)
def font_paths() -> tuple[Path, ...]:
    bundled = tuple(sorted(FONT_DIR.glob("*.ttf")))
    if bundled:
        return bundled
    found = [folder / name for folder in SYSTEM_FONT_DIRS for name in SYSTEM_FONT_NAMES if (folder / name).is_file()]
    return tuple(found)


@lru_cache(maxsize=256)
def _font(path: Path | None, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    if path is None:
        return ImageFont.load_default(size=size)
    return ImageFont.truetype(str(path), size=size)


def _glyph_mask(char: str, rng: random.Random) -> Image.Image:
    """One character as a white-on-black mask, in its own font, size and rotation, cropped to its ink."""
    paths = font_paths()
    path = rng.choice(paths) if paths else None
    if path is None:  # Pillow's own font has no true minus or times sign
        char = {"\u2212": "-", "\u00d7": "x"}.get(char, char)
    # Operators are drawn large: they are thin, and mistaking one for another changes the answer.
    size = rng.randint(*GLYPH_SIZES) if char.isdigit() else rng.randint(GLYPH_SIZES[1] - 4, GLYPH_SIZES[1] + 4)
    canvas = Image.new("L", (size * 2, size * 2), 0)
    draw = ImageDraw.Draw(canvas)
    draw.text((size, size), char, font=_font(path, size), fill=255, anchor="mm")
    # A "+" turned 45° is a "×": operators lean only a little.
    turn = GLYPH_ROTATION if char.isdigit() else OPERATOR_ROTATION
    canvas = canvas.rotate(rng.uniform(-turn, turn), resample=Image.Resampling.BILINEAR)
    box = canvas.getbbox()
    return canvas.crop(box) if box else canvas


def _warp_mesh(rng: random.Random) -> list[tuple[tuple[int, int, int, int], tuple[float, ...]]]:
    """A smooth random warp: a coarse grid whose inner vertices move a few pixels. Shared
    vertices move together, so the image stays continuous across cells."""
    columns, rows = WARP_GRID
    xs = [round(WIDTH * i / columns) for i in range(columns + 1)]
    ys = [round(HEIGHT * j / rows) for j in range(rows + 1)]
    moved = {}
    for i, x in enumerate(xs):
        for j, y in enumerate(ys):
            edge_x = i in (0, columns)
            edge_y = j in (0, rows)
            dx = 0.0 if edge_x else rng.uniform(-WARP_AMPLITUDE, WARP_AMPLITUDE)
            dy = 0.0 if edge_y else rng.uniform(-WARP_AMPLITUDE, WARP_AMPLITUDE)
            moved[i, j] = (x + dx, y + dy)
    mesh = []
    for i in range(columns):
        for j in range(rows):
            box = (xs[i], ys[j], xs[i + 1], ys[j + 1])
            # Source quad corners: upper left, lower left, lower right, upper right.
            quad = (*moved[i, j], *moved[i, j + 1], *moved[i + 1, j + 1], *moved[i + 1, j])
            mesh.append((box, quad))
    return mesh


def _clutter(draw: ImageDraw.ImageDraw, rng: random.Random, *, width: int, middle: float, operator_x: float) -> None:
    """Strokes in the ink layer itself, as thick as the glyphs' strokes: a long wave that
    weaves between the two rows, crossing digits, and a couple of short arcs that look like
    pieces of digits.

    The wave's crest sits above the operator: a stroke through a `−` or `+` is the one
    overlap that makes people compute the wrong sum."""
    amplitude = rng.uniform(8, 13)
    wavelength = rng.uniform(WIDTH * 0.5, WIDTH * 0.9)
    phase = math.pi / 2 - 2 * math.pi * operator_x / wavelength  # sin(...) == 1 at the operator
    start, end = rng.uniform(0, WIDTH * 0.15), rng.uniform(WIDTH * 0.85, WIDTH)
    points = [
        (x, middle - amplitude * math.sin(2 * math.pi * x / wavelength + phase))
        for x in (start + (end - start) * k / 32 for k in range(33))
    ]
    draw.line(points, fill=255, width=width, joint="curve")
    for _ in range(rng.randint(1, 2)):
        radius = rng.uniform(6, 11)
        x, y = rng.uniform(radius, WIDTH - radius), rng.uniform(radius, HEIGHT - radius)
        begin = rng.uniform(0, 360)
        draw.arc(
            (x - radius, y - radius, x + radius, y + radius),
            begin,
            begin + rng.uniform(70, 140),
            fill=255,
            width=width,
        )


def _invert_blob(ink: Image.Image, rng: random.Random) -> None:
    """Swap ink and paper inside a random ellipse: the glyphs there turn into holes in a
    patch of ink, which people read as the same digits and OCR mostly cannot."""
    blob = Image.new("L", ink.size, 0)
    width, height = rng.uniform(30, 60), rng.uniform(26, 44)
    x, y = rng.uniform(0, WIDTH - width), rng.uniform(0, HEIGHT - height)
    ImageDraw.Draw(blob).ellipse((x, y, x + width, y + height), fill=255)
    ink.paste(ImageChops.invert(ink), (0, 0), blob)


def _ink_colour(rng: random.Random) -> tuple[int, int, int]:
    red, green, blue = colorsys.hls_to_rgb(rng.random(), rng.uniform(0.16, 0.3), rng.uniform(0.4, 0.8))
    return round(red * 255), round(green * 255), round(blue * 255)


def _paper(rng: random.Random) -> Image.Image:
    """A light background with a gentle left-to-right tint change."""
    hue = rng.random()
    left = colorsys.hls_to_rgb(hue, rng.uniform(0.9, 0.96), rng.uniform(0.3, 0.7))
    right = colorsys.hls_to_rgb((hue + rng.uniform(-0.15, 0.15)) % 1, rng.uniform(0.9, 0.96), rng.uniform(0.3, 0.7))
    strip = Image.new("RGB", (2, 1))
    strip.putpixel((0, 0), tuple(round(c * 255) for c in left))
    strip.putpixel((1, 0), tuple(round(c * 255) for c in right))
    return strip.resize((WIDTH, HEIGHT), Image.Resampling.BILINEAR)


def _row(
    ink: Image.Image, text: str, rng: random.Random, *, right: float, centre: float, slope: float
) -> list[tuple[str, tuple]]:
    """Draw one row of glyphs ending at `right`; each glyph's character and box."""
    glyphs = [_glyph_mask(char, rng) for char in text]
    advances = [
        glyph.width * rng.uniform(*(GLYPH_ADVANCE if char.isdigit() and after.isdigit() else OPERATOR_ADVANCE))
        for glyph, char, after in zip(glyphs, text, text[1:], strict=False)
    ] + [glyphs[-1].width]
    x = max(2.0, right - sum(advances))
    boxes = []
    for glyph, char, advance in zip(glyphs, text, advances, strict=True):
        y = centre + slope * (x - right) - glyph.height / 2 + rng.uniform(-GLYPH_JITTER, GLYPH_JITTER)
        y = min(max(1, y), HEIGHT - glyph.height - 1)
        ink.paste(255, (round(x), round(y)), glyph)
        boxes.append((char, (x, y, x + glyph.width, y + glyph.height)))
        x += advance
    return boxes


def image_new(expression: str, rng: random.Random | None = None) -> Image.Image:
    """Draw an expression (internal form) as a column sum, the way people learn to add on
    paper: the first number above, the operator and the second number below it, a rule
    under them. Two rows are nothing to people and defeat OCR engines built to read one
    line. `rng` is for tests and the attack harness; the shop uses the operating system's
    randomness so renders cannot be replayed."""
    rng = rng or secrets.SystemRandom()
    match = _EXPRESSION.match(expression)
    if match is None:
        raise ValueError(f"not a captcha expression: {expression!r}")
    ink = Image.new("L", (WIDTH, HEIGHT), 0)
    right = rng.uniform(WIDTH * 0.55, WIDTH * 0.92)
    top_centre = rng.uniform(HEIGHT * 0.26, HEIGHT * 0.32)
    bottom_centre = top_centre + rng.uniform(*ROW_SPACING)
    # The rows lean in opposite directions, so no straight cut separates them.
    slope = rng.uniform(*ROW_SLOPE) * rng.choice((-1, 1))
    top = _row(ink, match[1], rng, right=right + rng.uniform(-6, 6), centre=top_centre, slope=slope)
    bottom = _row(ink, OPERATOR_GLYPHS[match[2]] + match[3], rng, right=right, centre=bottom_centre, slope=-slope)
    stroke = max(3, round(sum(GLYPH_SIZES) / 2 / 10))
    left_edge = min(box[0] for _, box in top + bottom) - rng.uniform(2, 8)
    rule_y = max(box[3] for _, box in bottom) + rng.uniform(3, 7)
    draw = ImageDraw.Draw(ink)
    draw.line((left_edge, rule_y, right + rng.uniform(2, 8), rule_y + rng.uniform(-3, 3)), fill=255, width=stroke)
    _, (x0, _, x1, _) = bottom[0]
    _clutter(draw, rng, width=stroke, middle=(top_centre + bottom_centre) / 2, operator_x=(x0 + x1) / 2)
    for _ in range(rng.randint(*INVERT_BLOBS)):
        _invert_blob(ink, rng)
    ink = ink.transform((WIDTH, HEIGHT), Image.Transform.MESH, _warp_mesh(rng), Image.Resampling.BILINEAR)
    image = _paper(rng)
    image.paste(_ink_colour(rng), (0, 0), ink)
    return image


def image_png(expression: str, rng: random.Random | None = None) -> bytes:
    buffer = io.BytesIO()
    image_new(expression, rng).save(buffer, format="PNG")
    return buffer.getvalue()
