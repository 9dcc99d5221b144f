"""The pass is signed for one sale, one session and a life; anything else reads as no pass."""

import time

import pytest

from waitingroom.passes import pass_read, pass_signed

SESSION = "s" * 32


def read(value, *, sale_id=7, session_key=SESSION, seconds=60):
    return pass_read(value, sale_id=sale_id, session_key=session_key, seconds=seconds)


def test_a_pass_reads_back_for_its_sale_and_session():
    value = pass_signed(user_id=3, sale_id=7, session_key=SESSION)
    held = read(value)
    assert held is not None and (held.user_id, held.sale_id) == (3, 7)


@pytest.mark.parametrize(
    "change",
    [
        {"sale_id": 8},
        {"session_key": "t" * 32},
        {"session_key": None},
        {"seconds": 0},
    ],
)
def test_a_pass_is_bound_to_its_sale_session_and_life(change):
    assert read(pass_signed(user_id=3, sale_id=7, session_key=SESSION), **change) is None


def test_an_old_or_future_pass_is_refused():
    now = int(time.time())
    assert read(pass_signed(user_id=3, sale_id=7, session_key=SESSION, signed_at=now - 61)) is None
    assert read(pass_signed(user_id=3, sale_id=7, session_key=SESSION, signed_at=now + 30)) is None


@pytest.mark.parametrize("value", ["", "x", "3.7.abc:1:00", "3.7." + "0" * 16 + ":1:" + "0" * 64])
def test_garbage_is_no_pass(value):
    assert read(value) is None


def test_a_forged_signature_or_user_is_refused():
    value = pass_signed(user_id=3, sale_id=7, session_key=SESSION)
    assert read(value[:-1] + ("0" if value[-1] != "0" else "1")) is None
    assert read("4" + value[1:]) is None


def test_a_pass_signed_under_a_fallback_key_holds(settings):
    value = pass_signed(user_id=3, sale_id=7, session_key=SESSION)
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    assert read(value) is not None
