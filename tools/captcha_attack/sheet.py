"""A contact sheet of 20 fresh captchas at twice their size, each with its sum and answer
underneath, to judge readability by eye: python -m tools.captcha_attack.sheet OUT.png"""

import sys

from PIL import Image, ImageDraw

from seckill import captcha

COLUMNS, ROWS, SCALE, GAP, CAPTION = 4, 5, 2, 10, 18


def sheet() -> Image.Image:
    width, height = captcha.WIDTH * SCALE, captcha.HEIGHT * SCALE
    image = Image.new("RGB", (COLUMNS * (width + GAP) + GAP, ROWS * (height + CAPTION + GAP) + GAP), "white")
    draw = ImageDraw.Draw(image)
    for index in range(COLUMNS * ROWS):
        expression = captcha.expression_new()
        drawn = captcha.image_new(expression).resize((width, height), Image.Resampling.LANCZOS)
        x = GAP + (index % COLUMNS) * (width + GAP)
        y = GAP + (index // COLUMNS) * (height + CAPTION + GAP)
        image.paste(drawn, (x, y))
        label = f"{expression.replace('*', ' x ')} = {captcha.expression_value(expression)}"
        draw.text((x, y + height + 3), label, fill="black")
    return image


if __name__ == "__main__":
    sheet().save(sys.argv[1] if len(sys.argv) > 1 else "captcha-sheet.png", optimize=True)
