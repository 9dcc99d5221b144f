"""Arithmetic captcha: a sum like `47+25`, `83−29` or `7×8`, drawn to defeat OCR.

The sums are easy for people: one operator, no precedence, answers 0–99. The drawing removes
what OCR relies on: each glyph has its own font, size, rotation and advance; the clutter has the
text's colour and stroke width, so no filter separates it; a smooth random warp bends it all.
The design and what `make captcha-attack` measures: docs/bots.md. The answer is computed from
the parsed expression, never `eval`.
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

# The size shown, in CSS pixels like every length below; drawn at PIXEL_SCALE times that so it
# stays sharp on high-density screens.
WIDTH, HEIGHT = 180, 120
PIXEL_SCALE = 2
PNG_WIDTH, PNG_HEIGHT = WIDTH * PIXEL_SCALE, HEIGHT * PIXEL_SCALE

# Internal (ASCII) operator, which the answer is computed from -> the glyph drawn.
OPERATOR_GLYPHS = {"+": "+", "-": "\u2212", "*": "\u00d7"}
_EXPRESSION = re.compile(r"^([0-9]{1,2})([+*-])([0-9]{1,2})$")

# Bundled DejaVu subsets (fonts/LICENSE), so every machine draws the same; the system's DejaVu
# and then Pillow's own font are fallbacks, so the captcha never stops working.
FONT_DIR = Path(__file__).resolve().parent / "fonts"
SYSTEM_FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/TTF"), Path("/Library/Fonts"))
SYSTEM_FONT_NAMES = ("DejaVuSans-Bold.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSansMono-Bold.ttf")
# Regular weights are too thin to read once warped.
BOLD_ONLY = "Bold"

# Legibility for people first (docs/bots.md): digits of one number touch at most, an operator
# never overlaps the next digit, and nothing is drawn within MARGIN of an edge.
GLYPH_SIZES = (36, 44)  # CSS pixel size range per glyph
GLYPH_ROTATION = 12  # degrees either way
OPERATOR_ROTATION = 5
GLYPH_ADVANCE = (0.86, 0.98)  # fraction of a digit's ink width before the next digit starts
OPERATOR_ADVANCE = (1.25, 1.4)  # after an operator: a gap, so "+8" never fuses into one sign
GLYPH_JITTER = 3  # pixels up or down from a slanted baseline
MARGIN = 5  # pixels kept clear along every edge, so the warp cannot push ink out of the picture
INVERT_BLOBS = (0, 0)  # ellipses inside which ink and paper swap
ROW_SPACING = (44.0, 48.0)  # pixels between the centres of the rows: a clear gap between them
ROW_SLOPE = (0.03, 0.07)  # how steeply the rows lean (opposite ways)
WARP_GRID = (5, 3)  # columns x rows of the random mesh
WARP_AMPLITUDE = 3.0  # pixels a mesh vertex may move
# Outside these (as the API documents) an answer is a bad request, not a wrong one.
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
    bundled = tuple(sorted(path for path in FONT_DIR.glob("*.ttf") if BOLD_ONLY in path.name))
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
    size = rng.randint(*GLYPH_SIZES) if char.isdigit() else rng.randint(GLYPH_SIZES[1] - 4, GLYPH_SIZES[1])
    size *= PIXEL_SCALE
    canvas = Image.new("L", (size * 2, size * 2), 0)
    draw = ImageDraw.Draw(canvas)
    draw.text((size, size), char, font=_font(path, size), fill=255, anchor="mm")
    # A "+" turned 45° is a "×": operators lean only a little.
    turn = GLYPH_ROTATION if char.isdigit() else OPERATOR_ROTATION
    canvas = canvas.rotate(rng.uniform(-turn, turn), resample=Image.Resampling.BICUBIC)
    box = canvas.getbbox()
    return canvas.crop(box) if box else canvas


def _warp_mesh(rng: random.Random) -> list[tuple[tuple[int, int, int, int], tuple[float, ...]]]:
    """A smooth random warp: a coarse grid whose inner vertices move a few pixels. Shared
    vertices move together, so the image stays continuous across cells."""
    columns, rows = WARP_GRID
    xs = [round(PNG_WIDTH * i / columns) for i in range(columns + 1)]
    ys = [round(PNG_HEIGHT * j / rows) for j in range(rows + 1)]
    amplitude = WARP_AMPLITUDE * PIXEL_SCALE
    moved = {}
    for i, x in enumerate(xs):
        for j, y in enumerate(ys):
            edge_x = i in (0, columns)
            edge_y = j in (0, rows)
            dx = 0.0 if edge_x else rng.uniform(-amplitude, amplitude)
            dy = 0.0 if edge_y else rng.uniform(-amplitude, amplitude)
            moved[i, j] = (x + dx, y + dy)
    mesh: list[tuple[tuple[int, int, int, int], tuple[float, ...]]] = []
    for i in range(columns):
        for j in range(rows):
            box = (xs[i], ys[j], xs[i + 1], ys[j + 1])
            # Source quad corners: upper left, lower left, lower right, upper right.
            quad = (*moved[i, j], *moved[i, j + 1], *moved[i + 1, j + 1], *moved[i + 1, j])
            mesh.append((box, quad))
    return mesh


def _clutter(
    draw: ImageDraw.ImageDraw,
    rng: random.Random,
    *,
    width: int,
    middle: float,
    operator_x: float,
    glyphs: list[tuple[float, float, float, float]],
) -> None:
    """Draw a wave between the rows and one or two short arcs into the ink (PNG pixels).

    The wave's crest sits above the operator, as a stroke through `−` or `+` makes people compute
    the wrong sum; the arcs keep clear of the glyphs, where they read as part of a digit."""
    s = PIXEL_SCALE
    amplitude = rng.uniform(7, 11) * s
    wavelength = rng.uniform(PNG_WIDTH * 0.5, PNG_WIDTH * 0.9)
    phase = math.pi / 2 - 2 * math.pi * operator_x / wavelength  # sin(...) == 1 at the operator
    edge = (MARGIN + 1) * s + width  # the stroke's round ends reach past its points
    start, end = rng.uniform(edge, PNG_WIDTH * 0.15), rng.uniform(PNG_WIDTH * 0.85, PNG_WIDTH - edge)
    points = [
        (x, middle - amplitude * math.sin(2 * math.pi * x / wavelength + phase))
        for x in (start + (end - start) * k / 48 for k in range(49))
    ]
    draw.line(points, fill=255, width=max(s, round(width * 0.75)), joint="curve")
    for _ in range(rng.randint(1, 2)):
        for _try in range(20):
            radius = rng.uniform(5, 9) * s
            x = rng.uniform(radius + MARGIN * s, PNG_WIDTH - radius - MARGIN * s)
            y = rng.uniform(radius + MARGIN * s, PNG_HEIGHT - radius - MARGIN * s)
            box = (x - radius, y - radius, x + radius, y + radius)
            if not any(_overlap(box, glyph, pad=3 * s) for glyph in glyphs):
                break
        else:
            continue  # no free spot: fewer arcs rather than one across a digit
        begin = rng.uniform(0, 360)
        draw.arc(box, begin, begin + rng.uniform(70, 140), fill=255, width=max(s, round(width * 0.75)))


def _overlap(a: tuple[float, ...], b: tuple[float, ...], *, pad: float) -> bool:
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def _invert_blob(ink: Image.Image, rng: random.Random) -> None:
    """Swap ink and paper inside a random ellipse: the glyphs there turn into holes in a
    patch of ink, which people read as the same digits and OCR mostly cannot."""
    s = PIXEL_SCALE
    blob = Image.new("L", ink.size, 0)
    width, height = rng.uniform(30, 60) * s, rng.uniform(26, 44) * s
    x, y = rng.uniform(0, PNG_WIDTH - width), rng.uniform(0, PNG_HEIGHT - height)
    ImageDraw.Draw(blob).ellipse((x, y, x + width, y + height), fill=255)
    ink.paste(ImageChops.invert(ink), (0, 0), blob)


def _ink_colour(rng: random.Random) -> tuple[int, int, int]:
    red, green, blue = colorsys.hls_to_rgb(rng.random(), rng.uniform(0.14, 0.26), rng.uniform(0.4, 0.8))
    return round(red * 255), round(green * 255), round(blue * 255)


def _paper(rng: random.Random) -> Image.Image:
    """A light background with a gentle left-to-right tint change."""
    hue = rng.random()
    left = colorsys.hls_to_rgb(hue, rng.uniform(0.91, 0.96), rng.uniform(0.3, 0.7))
    right = colorsys.hls_to_rgb((hue + rng.uniform(-0.15, 0.15)) % 1, rng.uniform(0.91, 0.96), rng.uniform(0.3, 0.7))
    strip = Image.new("RGB", (2, 1))
    strip.putpixel((0, 0), tuple(round(c * 255) for c in left))
    strip.putpixel((1, 0), tuple(round(c * 255) for c in right))
    return strip.resize((PNG_WIDTH, PNG_HEIGHT), Image.Resampling.BILINEAR)


def _row(
    ink: Image.Image, text: str, rng: random.Random, *, right: float, centre: float, slope: float
) -> list[tuple[str, tuple]]:
    """Draw one row of glyphs ending at `right` (PNG pixels); each glyph's character and box."""
    s = PIXEL_SCALE
    glyphs = [_glyph_mask(char, rng) for char in text]
    advances = [
        glyph.width * rng.uniform(*(GLYPH_ADVANCE if char.isdigit() and after.isdigit() else OPERATOR_ADVANCE))
        for glyph, char, after in zip(glyphs, text, text[1:], strict=False)
    ] + [glyphs[-1].width]
    x = max(MARGIN * s, right - sum(advances))
    boxes = []
    for glyph, char, advance in zip(glyphs, text, advances, strict=True):
        y = centre + slope * (x - right) - glyph.height / 2 + rng.uniform(-GLYPH_JITTER, GLYPH_JITTER) * s
        y = min(max(MARGIN * s, y), PNG_HEIGHT - glyph.height - MARGIN * s)
        ink.paste(255, (round(x), round(y)), glyph)
        boxes.append((char, (x, y, x + glyph.width, y + glyph.height)))
        x += advance
    return boxes


def image_new(expression: str, rng: random.Random | None = None) -> Image.Image:
    """`expression` (internal form) drawn PNG_WIDTH x PNG_HEIGHT as a column sum, as on paper;
    ValueError when it is no expression. Two rows are nothing to people and defeat OCR built for
    one line. `rng` is for tests and the attack harness: by default renders cannot be replayed."""
    rng = rng or secrets.SystemRandom()
    match = _EXPRESSION.match(expression)
    if match is None:
        raise ValueError(f"not a captcha expression: {expression!r}")
    s = PIXEL_SCALE
    ink = Image.new("L", (PNG_WIDTH, PNG_HEIGHT), 0)
    right = rng.uniform(PNG_WIDTH * 0.6, PNG_WIDTH * 0.88)
    top_centre = rng.uniform(HEIGHT * 0.24, HEIGHT * 0.28) * s
    bottom_centre = top_centre + rng.uniform(*ROW_SPACING) * s
    # The rows lean in opposite directions, so no straight cut separates them.
    slope = rng.uniform(*ROW_SLOPE) * rng.choice((-1, 1))
    top = _row(ink, match[1], rng, right=right + rng.uniform(-4, 4) * s, centre=top_centre, slope=slope)
    bottom = _row(ink, OPERATOR_GLYPHS[match[2]] + match[3], rng, right=right, centre=bottom_centre, slope=-slope)
    stroke = max(3, round(sum(GLYPH_SIZES) / 2 / 10)) * s
    left_edge = max(MARGIN * s, min(box[0] for _, box in top + bottom) - rng.uniform(2, 6) * s)
    rule_y = min(max(box[3] for _, box in bottom) + rng.uniform(3, 5) * s, PNG_HEIGHT - (MARGIN + 2) * s)
    draw = ImageDraw.Draw(ink)
    rule_end = min(PNG_WIDTH - MARGIN * s, right + rng.uniform(2, 8) * s)
    draw.line((left_edge, rule_y, rule_end, rule_y + rng.uniform(-2, 2) * s), fill=255, width=stroke)
    _, (x0, _, x1, _) = bottom[0]
    _clutter(
        draw,
        rng,
        width=stroke,
        middle=(top_centre + bottom_centre) / 2,
        operator_x=(x0 + x1) / 2,
        glyphs=[box for _, box in top + bottom],
    )
    for _ in range(rng.randint(*INVERT_BLOBS)):
        _invert_blob(ink, rng)
    ink = ink.transform((PNG_WIDTH, PNG_HEIGHT), Image.Transform.MESH, _warp_mesh(rng), Image.Resampling.BICUBIC)
    image = _paper(rng)
    image.paste(_ink_colour(rng), (0, 0), ink)
    return image


def image_png(expression: str, rng: random.Random | None = None) -> bytes:
    buffer = io.BytesIO()
    image_new(expression, rng).save(buffer, format="PNG", optimize=False, compress_level=3)
    return buffer.getvalue()


# The spoken alternative: the `captcha` library reads digits over noise. It has English digits
# only, so it is a number to type, not a sum; weaker than the picture, capped by the sale limits.
AUDIO_DIGITS = 4


def audio_answer_new(rng: random.Random | None = None) -> str:
    """Four digits, the first never 0 (the answer field reads a whole number)."""
    rng = rng or secrets.SystemRandom()
    return str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(AUDIO_DIGITS - 1))


@lru_cache(maxsize=1)
def _audio_captcha():
    from captcha.audio import AudioCaptcha

    audio = AudioCaptcha()
    audio.load()  # the recordings once per process, not per request
    return audio


def audio_wav(digits: str) -> bytes:
    """The digits spoken with noise, as a WAV file (8 kHz mono, about 10 s)."""
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"only digits can be spoken: {digits!r}")
    return bytes(_audio_captcha().generate(digits))
