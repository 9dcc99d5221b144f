"""A contact sheet of fresh captchas at the pixels a high-density screen shows (the PNG's own
size, twice the page's CSS size), each numbered with its sum and answer underneath, to judge
readability by eye: python -m lab.captcha_attack.sheet [OUT.png] [--count 50] [--hide-answers]

--hide-answers leaves the answers off (reading the sheet first, then checking against a
second copy with --seed makes the judgement honest)."""

import argparse
import random

from PIL import Image, ImageDraw, ImageFont

from seckill import captcha

COLUMNS, GAP, CAPTION = 5, 12, 26


def sheet(count: int = 50, *, answers: bool = True, seed: int | None = None) -> Image.Image:
    rng = random.Random(seed) if seed is not None else None
    width, height = captcha.PNG_WIDTH, captcha.PNG_HEIGHT
    rows = -(-count // COLUMNS)
    image = Image.new("RGB", (COLUMNS * (width + GAP) + GAP, rows * (height + CAPTION + GAP) + GAP), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=18)
    for index in range(count):
        expression = captcha.expression_new(rng)
        drawn = captcha.image_new(expression, rng)
        x = GAP + (index % COLUMNS) * (width + GAP)
        y = GAP + (index // COLUMNS) * (height + CAPTION + GAP)
        image.paste(drawn, (x, y))
        label = f"{index + 1}."
        if answers:
            # ASCII operators: the caption font has no true minus or times sign.
            label += f"  {expression.replace('*', ' x ')} = {captcha.expression_value(expression)}"
        draw.text((x, y + height + 3), label, fill="black", font=font)
    return image


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default="captcha-sheet.png")
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--hide-answers", action="store_true")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    sheet(args.count, answers=not args.hide_answers, seed=args.seed).save(args.out, optimize=True)
