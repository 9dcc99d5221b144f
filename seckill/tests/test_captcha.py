import io

from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from seckill import captcha

expressions = st.builds(
    lambda a, o1, b, o2, c: f"{a}{o1}{b}{o2}{c}",
    *[st.integers(1, 9).map(str), st.sampled_from("+-*")] * 2,
    st.integers(1, 9).map(str),
)


@given(expressions)
def test_value_matches_python_arithmetic(expression):
    assert captcha.expression_value(expression) == eval(expression)  # noqa: S307 - the test oracle only


def test_rejects_anything_else():
    for bad in ["", "1+", "a+b", "1/2", "1+2+__import__('os')", "11+2"]:
        try:
            captcha.expression_value(bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad!r}")


def test_image_is_a_png():
    image = Image.open(io.BytesIO(captcha.image_png("7+3*2")))
    assert image.format == "PNG" and image.size == (captcha.WIDTH, captcha.HEIGHT)
