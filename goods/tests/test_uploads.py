"""Product image uploads: the body is capped before it is read, pixel sizes are capped before
anything decodes them, and what is stored is re-encoded pixels only."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image

from goods.models import MAX_IMAGE_SIDE, Goods
from testutils.factories.users import make_merchant

pytestmark = pytest.mark.django_db


@pytest.fixture
def merchant_browser():
    browser = Client()
    browser.force_login(make_merchant())
    return browser


def _add_goods(browser, image, name="Uploaded"):
    return browser.post(
        "/admin/goods/goods/add/",
        {"name_en": name, "title_en": "t", "price": "1", "stock": 1, "detail": "", "image": image,
         "sales-TOTAL_FORMS": 0, "sales-INITIAL_FORMS": 0},
    )  # fmt: skip


def _png(size, mode="1") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def test_a_decompression_bomb_is_refused_before_it_is_decoded(merchant_browser):
    bomb = _png((12_000, 12_000))  # a few KiB on the wire, 144 million pixels
    assert len(bomb) < 100_000
    response = _add_goods(merchant_browser, SimpleUploadedFile("bomb.png", bomb, content_type="image/png"))
    assert response.status_code == 200 and b"12000 x 12000 pixels" in response.content
    assert not Goods.objects.filter(name="Uploaded").exists()


def test_the_largest_side_allowed_is_taken(merchant_browser):
    image = _png((MAX_IMAGE_SIDE, 16))
    response = _add_goods(merchant_browser, SimpleUploadedFile("wide.png", image, content_type="image/png"))
    assert response.status_code == 302 and Goods.objects.get(name="Uploaded").image.width == MAX_IMAGE_SIDE


def test_a_body_over_the_cap_is_refused_before_it_is_read(merchant_browser):
    big = SimpleUploadedFile("big.png", _png((64, 64), "RGB") + b"\0" * (4 * 1024 * 1024), content_type="image/png")
    response = _add_goods(merchant_browser, big)
    assert response.status_code == 413 and not Goods.objects.exists()


@pytest.mark.parametrize("url", ["/user/login", "/seckill/abc/doSeckill", "/api/v1/sales/1/buy/abc"])
def test_an_oversized_declared_length_is_refused_without_reading(merchant_browser, url):
    # 50 MB declared, none sent: reading it would fail; the answer comes first.
    response = merchant_browser.generic(
        "POST",
        url,
        b"",
        content_type="application/x-www-form-urlencoded",
        CONTENT_LENGTH=str(50 * 2**20),
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 413 and response.json()["code"] == 500413


def test_metadata_and_trailing_bytes_are_not_stored(merchant_browser):
    photo = Image.new("RGB", (40, 30), (200, 10, 10))
    exif = Image.Exif()
    exif[0x8825] = {2: (39.0, 54.0, 0.0)}  # GPS latitude
    exif[0x010E] = "secret description"
    buffer = io.BytesIO()
    photo.save(buffer, format="JPEG", exif=exif, comment=b"a comment")
    payload = buffer.getvalue() + b"<?php system($_GET['c']); ?>"
    response = _add_goods(merchant_browser, SimpleUploadedFile("photo.jpg", payload, content_type="image/jpeg"))
    assert response.status_code == 302, response.content[:500]
    stored = Goods.objects.get(name="Uploaded").image
    data = stored.read()
    assert b"<?php" not in data and b"secret description" not in data and b"a comment" not in data
    assert data.endswith(b"\xff\xd9")  # JPEG end of image: nothing after it
    with Image.open(io.BytesIO(data)) as reopened:
        assert reopened.size == (40, 30) and not reopened.getexif()
