"""Every password rule speaks Chinese on a Chinese page: its refusal and its help text."""

import re

import pytest
from django.contrib.auth.password_validation import password_validators_help_texts, validate_password
from django.core.exceptions import ValidationError
from django.utils import translation

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("password", ["1", "123456", "password"])
def test_every_refusal_of_a_password_is_in_chinese_on_a_chinese_page(password):
    with translation.override("zh-hans"), pytest.raises(ValidationError) as refused:
        validate_password(password)
    assert refused.value.messages
    for message in refused.value.messages:
        assert CHINESE.search(message), message


def test_every_password_rule_is_explained_in_chinese():
    with translation.override("zh-hans"):
        texts = password_validators_help_texts()
    assert texts and all(CHINESE.search(text) for text in texts), texts


def test_the_refusal_still_says_how_long_in_english():
    with translation.override("en"), pytest.raises(ValidationError) as refused:
        validate_password("12")
    assert "at least 6 characters" in refused.value.messages[0]
