"""Mobile numbers are ASCII digits. Other Unicode decimal digits (full-width, Arabic-Indic, ...)
are normalised to them — one rule, users.models.mobile_normalize, on the pages, the API and
the admin — and anything else that `\\d` would take ("²" is no decimal digit) is refused."""

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from testutils.factories.users import PASSWORD, texted_code
from users.models import User, mobile_normalize

pytestmark = pytest.mark.django_db
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
DEVANAGARI = str.maketrans("0123456789", "०१२३४५६७८९")


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("13700000001", "13700000001"),
        (" 13700000001\t", "13700000001"),
        ("13700000001".translate(ARABIC_INDIC), "13700000001"),
        ("13700000001".translate(FULL_WIDTH), "13700000001"),
        ("137000000０1".translate(DEVANAGARI), "13700000001"),
        (13700000001, "13700000001"),
        ("1370000000²", "1370000000²"),  # not a decimal digit: left for the validator to refuse
        (True, ""),
        (None, ""),
        (["13700000001"], ""),
    ],
)
def test_mobile_normalize(raw, expected):
    assert mobile_normalize(raw) == expected


@pytest.mark.parametrize("mobile", ["1370000000²", "١٣٧٠٠٠٠٠٠٠١", "1370000000١"])
def test_the_model_takes_ascii_digits_only(mobile):
    with pytest.raises(ValidationError):
        User(mobile=mobile, password="x").full_clean(exclude=["password"])


@pytest.mark.parametrize("translate", [ARABIC_INDIC, FULL_WIDTH, DEVANAGARI])
def test_registering_with_unicode_digits_stores_ascii_digits(translate):
    mobile = "13712345678".translate(translate)
    code = texted_code("13712345678")  # the number as the form reads it
    page = Client().post(
        "/user/register", {"mobile": mobile, "password": PASSWORD, "password_again": PASSWORD, "code": code}
    )
    assert page.status_code == 302
    assert list(User.objects.values_list("mobile", flat=True)) == ["13712345678"]
    # The same number again, in ASCII, through the API: refused (and, without the number's
    # code, without saying that it is registered).
    again = Client().post(
        "/api/v1/users/register", {"mobile": "13712345678", "password": PASSWORD}, content_type="application/json"
    )
    assert again.status_code == 400 and "already registered" not in again.json()["msg"]
    # And logging in with any spelling is the same account.
    login = Client().post(
        "/api/v1/users/login", {"mobile": mobile, "password": PASSWORD}, content_type="application/json"
    )
    assert login.status_code == 200


@pytest.mark.parametrize("mobile", ["1370000000²", "1370000000¹", "137000000⑴"])
def test_digits_that_are_not_decimal_are_refused(mobile):
    page = Client().post("/user/register", {"mobile": mobile, "password": PASSWORD, "password_again": PASSWORD})
    api = Client().post(
        "/api/v1/users/register", {"mobile": mobile, "password": PASSWORD}, content_type="application/json"
    )
    assert page.status_code == 400 and api.status_code == 400
    assert not User.objects.exists()


def test_the_admin_applies_the_same_rule(admin_client):
    response = admin_client.post(
        "/admin/users/user/add/",
        {"mobile": "13712345678".translate(FULL_WIDTH), "password1": "long-pass-12", "password2": "long-pass-12"},
    )
    assert response.status_code == 302, response.content[:500]
    assert User.objects.filter(mobile="13712345678").exists()
    refused = admin_client.post(
        "/admin/users/user/add/", {"mobile": "1371234567²", "password1": "long-pass-12", "password2": "long-pass-12"}
    )
    assert refused.status_code == 200 and User.objects.filter(is_staff=False).count() == 1
