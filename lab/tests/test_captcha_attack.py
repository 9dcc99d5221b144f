"""`make captcha-attack`'s scoring: how an OCR reading becomes an answer (as a scalper's script
would read it), the old captcha kept as the "before", and the readers that cut an image up.
The OCR engines themselves live in .venv-attack; the readers here are plain functions."""

import io

import pytest
from PIL import Image

from lab.captcha_attack import legacy, parse
from lab.captcha_attack.__main__ import _cut_vote_reader, _rate, _rows_reader


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("12+34", 46),
        ("12 + 34 =?", 46),
        ("l2x3", 36),  # l read for 1, x for times
        ("Oz-S", -3),  # O, z, S: 0, 2, 5
        ("9t9", 18),  # t for plus
        ("21乘3", 63),
        ("7+7-", 14),  # '=' read as a trailing minus
        ("123+4", None),  # three digits: not this captcha's shape
        ("12", None),
        ("", None),
    ],
)
def test_a_new_captchas_reading_is_repaired_then_evaluated(text, answer):
    assert parse.answer_new(text) == answer


def test_normalise_keeps_digits_and_operators_only():
    assert parse.normalise("  1 2 + 3 4 = ?") == "12+34"
    assert parse.normalise("Bb-A~") == "86-4"


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("3+4*2=?", 11),  # times before plus
        ("9-2-3", 4),
        ("8*2*3=?", 48),
        ("5 2+1", 4),  # the thin minus dropped between 5 and 2: put back
        ("1+2+3+4+5", 6),  # only the first five tokens
        ("3+4", None),
        ("++", None),
    ],
)
def test_an_old_captchas_reading_keeps_its_digit_operator_shape(text, answer):
    assert parse.answer_old(text) == answer


def test_the_old_expression_is_three_digits_and_two_operators_with_precedence():
    for _ in range(50):
        expression = legacy.expression_new()
        assert len(expression) == 5
        assert all(c in "123456789" for c in expression[::2]) and all(c in "+-*" for c in expression[1::2])
        assert legacy.expression_value(expression) == eval(expression)  # noqa: S307 (digits and + - * only)
    with pytest.raises(ValueError):
        legacy.expression_value("1+")
    with pytest.raises(ValueError):
        legacy.expression_value("1/2")


def test_the_old_image_is_a_png_of_its_size():
    image = Image.open(io.BytesIO(legacy.image_png("1+2*3")))
    assert (image.format, image.size) == ("PNG", (legacy.WIDTH, legacy.HEIGHT))


def png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format="PNG")
    return buffer.getvalue()


def test_the_rows_reader_reads_the_top_half_then_the_bottom_half():
    seen = []

    def read(data: bytes) -> str:
        size = Image.open(io.BytesIO(data)).size
        seen.append(size)
        return "12" if len(seen) == 1 else "+3"

    assert _rows_reader(read)(png(200, 81)) == "12+3"
    assert seen == [(200, 40), (200, 41)]


def test_the_vote_keeps_cuts_reading_a_number_over_an_operator_and_a_number():
    def read(data: bytes) -> str:
        height = Image.open(io.BytesIO(data)).size[1]
        if height < 40:  # a top part
            return "12" if height >= 35 else "1z"  # 1z normalises to 12 as well
        return "+34" if height > 62 else "x"  # most bottoms read right; a few only the operator

    assert _cut_vote_reader(read)(png(100, 100)) == "12+34"
    assert _cut_vote_reader(lambda data: "?")(png(100, 100)) == ""


def test_the_rate_is_the_share_of_captchas_answered_right():
    samples = [("1+2", b"a"), ("2+2", b"b"), ("3+3", b"c"), ("4+4", b"d")]
    readings = {b"a": "1+2", b"b": "2+3", b"c": "3t3", b"d": "??"}
    rate, examples = _rate(samples, readings.__getitem__, parse.answer_new, lambda e: eval(e), jobs=2)  # noqa: S307
    assert rate == 0.5
    assert examples == ["1+2", "2+3", "3t3"]
