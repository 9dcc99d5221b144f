import io
import random
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from seckill import captcha


@given(st.integers(0, 2**32))
def test_new_expressions_are_kind_sums(seed):
    """One operator, no precedence to get wrong, answers 0-99, one-digit factors."""
    expression = captcha.expression_new(random.Random(seed))
    value = captcha.expression_value(expression)
    assert 0 <= value <= 99
    left, right = (int(part) for part in expression.replace("+", " ").replace("-", " ").replace("*", " ").split())
    if "*" in expression:
        assert left <= 9 and right <= 9
    assert value == eval(expression)  # noqa: S307 - the test oracle only


def test_rejects_anything_else():
    for bad in ["", "1+", "a+b", "1/2", "1+2+3", "2+3*4", "12*3", "5-9", "99+1", "1+2+__import__('os')", "111+2"]:
        with pytest.raises(ValueError):
            captcha.expression_value(bad)


def test_shows_the_true_operator_signs():
    assert captcha.expression_text("47-25") == "47\u221225"
    assert captcha.expression_text("7*8") == "7\u00d78"


def test_image_is_a_png_of_the_declared_size():
    image = Image.open(io.BytesIO(captcha.image_png("47+25")))
    assert image.format == "PNG" and image.size == (captcha.WIDTH, captcha.HEIGHT)


def test_the_bundled_fonts_are_found():
    assert len(captcha.font_paths()) >= 5
    assert all(path.parent == captcha.FONT_DIR for path in captcha.font_paths())


def test_renders_without_any_font_file(monkeypatch):
    """A machine without the bundled folder or system fonts falls back to Pillow's own font."""
    monkeypatch.setattr(captcha, "FONT_DIR", captcha.FONT_DIR / "missing")
    monkeypatch.setattr(captcha, "SYSTEM_FONT_DIRS", ())
    captcha.font_paths.cache_clear()
    try:
        assert captcha.font_paths() == ()
        for expression in ("47-25", "7*8"):
            assert Image.open(io.BytesIO(captcha.image_png(expression))).size == (captcha.WIDTH, captcha.HEIGHT)
    finally:
        captcha.font_paths.cache_clear()


def test_no_two_renders_alike():
    """The same sum never draws the same pixels twice: nothing for a template to match."""
    assert captcha.image_png("47+25") != captcha.image_png("47+25")


def test_cheap_to_render():
    timings = []
    for _ in range(100):
        started = time.perf_counter()
        captcha.image_png(captcha.expression_new())
        timings.append(time.perf_counter() - started)
    # About 3 ms on this shared 2-core machine; the bound leaves room for a loaded CI host.
    assert sorted(timings)[50] < 0.03
