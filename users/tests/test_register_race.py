"""Two people register one mobile number at the same moment, on real PostgreSQL with real
concurrent requests: one account, and the other gets the sequential "already registered"."""

import threading

import pytest
from django.db import connection
from django.test import Client

from testutils.factories.users import PASSWORD
from users.forms import RegisterForm
from users.models import User
from users.verification import services as verification

TAKEN = "This mobile number is already registered."


def _register(door: str, mobile: str, ip: str):
    if door == "api":
        body = {"mobile": mobile, "password": PASSWORD, "code": "123456"}
        response = Client().post("/api/v1/users/register", body, content_type="application/json", REMOTE_ADDR=ip)
    else:
        body = {"mobile": mobile, "password": PASSWORD, "password_again": PASSWORD, "code": "123456"}
        response = Client().post("/user/register", body, HTTP_ACCEPT="application/json", REMOTE_ADDR=ip)
    return response.status_code, response.json()


def _codes_accepted(monkeypatch) -> None:
    """A texted code is single use, so two racers for one number cannot both pass it: accept
    every code, to race the insert itself (a code check cannot be the last guard)."""
    monkeypatch.setattr(verification, "sms_code_check", lambda **kwargs: True)


def _race(doors: list[str], mobile: str) -> list:
    answers: list = [None] * len(doors)

    def run(index: int) -> None:
        try:
            answers[index] = _register(doors[index], mobile, f"10.9.{index}.1")
        except Exception as error:  # a 500 raised through the test client
            answers[index] = (500, repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(doors))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return answers


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("doors", [["api", "api"], ["page", "page"], ["page", "api"]])
def test_the_loser_of_a_registration_race_hears_already_registered(monkeypatch, doors):
    # Hold every request after its "already registered?" check until all have made it, so
    # the race happens on every run: all see the number free, all try to insert it.
    barrier = threading.Barrier(len(doors), timeout=20)
    checked = RegisterForm.mobile_free_check

    def check_then_wait(form):
        checked(form)
        barrier.wait()

    monkeypatch.setattr(RegisterForm, "mobile_free_check", check_then_wait)
    _codes_accepted(monkeypatch)
    answers = _race(doors, "13755550001")
    statuses = sorted(status for status, _body in answers)
    assert statuses in ([200, 400], [201, 400]), answers  # the page answers 200, the API 201
    loser = next(body for status, body in answers if status == 400)
    assert TAKEN in loser["msg"], loser
    assert User.objects.filter(mobile="13755550001").count() == 1


@pytest.mark.django_db(transaction=True)
def test_many_simultaneous_registrations_make_one_account(monkeypatch):
    _codes_accepted(monkeypatch)
    answers = _race(["api", "page"] * 4, "13755550002")
    assert all(status < 500 for status, _body in answers), answers
    assert sum(status in (200, 201) for status, _body in answers) == 1, answers
    assert all(TAKEN in body["msg"] for status, body in answers if status == 400), answers
    assert User.objects.filter(mobile="13755550002").count() == 1
