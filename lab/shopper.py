"""The lab's one shopper: an account logged in as the shop's login leaves it, and its buy over HTTP.

Every experiment and the burst tests make shoppers here. A shopper holds what a browser holds
(a session cookie, a CSRF secret) and what an app holds (an API token); `path_solve` stands for
the person in front of the captcha, `buy` for their finger on the button.

Sessions and tokens are made through the shop's own stores, so the server accepts them as if
its login view had made them; passwords are unusable, so no lab account can be logged into
after a run.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import requests

RETRYABLE = {503, 401}  # busy / try again; 401: the session died with Redis, log in again
_local = threading.local()


@dataclass
class Shopper:
    user_id: int
    session: str = ""
    csrf: str = field(default_factory=lambda: secrets.token_hex(16))  # the csrftoken cookie and X-CSRFToken
    token: str = ""  # an API token (Authorization: Token), when the experiment uses the API

    @property
    def cookie(self) -> str:
        return f"sessionid={self.session}; csrftoken={self.csrf}"

    def headers(self) -> dict[str, str]:
        """What the item page's script sends with a POST."""
        return {"X-CSRFToken": self.csrf, "Cookie": self.cookie, "Accept": "application/json"}

    def post(self, url: str, data: dict, *, timeout: float = 30, headers: dict | None = None) -> requests.Response:
        return _http().post(url, data=data, headers={**self.headers(), **(headers or {})}, timeout=timeout)

    def get(self, url: str, *, timeout: float = 30, **params) -> requests.Response:
        return _http().get(url, params=params, headers=self.headers(), timeout=timeout)


def _http() -> requests.Session:
    """One keep-alive connection pool per thread: a requests.Session is not thread-safe."""
    http = getattr(_local, "http", None)
    if http is None:
        http = _local.http = requests.Session()
    return http


def session_create(user, *, secret_key: str | None = None) -> str:
    """A Redis session for `user` as the login view leaves it (the sliding-expiry mark
    included); its key. `secret_key` is the deployment's when it differs from this process's."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.utils.crypto import salted_hmac

    from users.middleware import REFRESHED_AT
    from users.sessions import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "users.backends.MobileBackend"
    # AbstractBaseUser.get_session_auth_hash, keyed with the deployment's SECRET_KEY.
    key_salt = "django.contrib.auth.models.AbstractBaseUser.get_session_auth_hash"
    secret = secret_key or settings.SECRET_KEY
    session[HASH_SESSION_KEY] = salted_hmac(key_salt, user.password, secret=secret, algorithm="sha256").hexdigest()
    session[REFRESHED_AT] = int(time.time())
    session.create()
    return session.session_key


def shoppers_create(
    *,
    count: int,
    mobile_first: int,
    nickname: str,
    secret_key: str | None = None,
    tokens: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[Shopper]:
    """`count` new accounts with mobiles from `mobile_first` on, each logged in (and with
    `tokens` given an API token as /api/v1/users/login issues it)."""
    from django.contrib.auth.hashers import make_password

    from users.models import User
    from users.tokens import api_token_issue

    password = make_password(None)
    users = User.objects.bulk_create(
        [User(mobile=str(mobile_first + i), nickname=f"{nickname}{i}", password=password) for i in range(count)],
        batch_size=1000,
    )
    shoppers = []
    for index, user in enumerate(users, 1):
        token = api_token_issue(user_id=user.pk) if tokens else ""
        shoppers.append(Shopper(user.pk, session_create(user, secret_key=secret_key), token=token))
        if progress and index % 1000 == 0:
            progress(f"logged in {index}/{count} shoppers")
    return shoppers


def log_in(shoppers: Iterable[Shopper], *, secret_key: str | None = None) -> None:
    """A new session for each (after Redis lost theirs)."""
    from users.models import User

    shoppers = list(shoppers)
    users = User.objects.in_bulk([shopper.user_id for shopper in shoppers])
    for shopper in shoppers:
        shopper.session = session_create(users[shopper.user_id], secret_key=secret_key)


def captcha_read(*, sale_id: int, user_id: int, answer: int | None = None) -> int:
    """What a person reads off the captcha the shop just drew for them. The lab cannot see the
    picture, so it tells the shop the answer it will type (`answer`, else a random one) through
    the same call the shop stores a drawn answer with; the shop's checks are unchanged."""
    from sales import sale_state
    from seckill.captcha import ANSWER_MAX

    answer = secrets.randbelow(ANSWER_MAX + 1) if answer is None else answer
    sale_state.captcha_answer_set(sale_id=sale_id, user_id=user_id, answer=answer)
    return answer


def path_solve(*, sale_id: int, user_id: int) -> str | None:
    """A one-time path as a person gets one: the captcha drawn, read and answered, through the
    shop's services; None when the shop refused (a per-sale limit)."""
    from seckill.services import paths

    paths.captcha_create(user_id=user_id, sale_id=sale_id)
    answer = captcha_read(sale_id=sale_id, user_id=user_id)
    return paths.path_create(user_id=user_id, sale_id=sale_id, answer=answer)


@dataclass
class Answer:
    user_id: int
    started: float
    status: int
    code: int | None
    msg: str
    finished: float = 0.0


def press(url: str, shopper: Shopper, sale_id: int, path: str) -> Answer:
    """One press of "buy" with a path solved before: the shop's answer, or status 0 for a
    reset or an answer that is not the shop's JSON."""
    started = time.monotonic()
    try:
        response = shopper.post(f"{url}/seckill/{path}/doSeckill", {"goodsId": sale_id})
        body = response.json()
        return Answer(shopper.user_id, started, response.status_code, body.get("code"), body.get("msg", ""),
                      time.monotonic())  # fmt: skip
    except Exception as error:  # noqa: BLE001 - counted, not raised
        return Answer(shopper.user_id, started, 0, None, repr(error)[:160], time.monotonic())


def buy(url: str, shopper: Shopper, sale_id: int, attempts: int = 6, *, path: str | None = None) -> list[Answer]:
    """Press "buy" on the item page until the shop answers for good: a shopper told "busy" or
    "try again" solves a new captcha and presses again after a short wait, as the page does.
    `path`: the first press's, solved before. Every answer, transport errors as status 0."""
    answers = []
    for attempt in range(attempts):
        if attempt:
            time.sleep(min(0.3 * 2 ** (attempt - 1), 3))
        if path is None:
            try:
                path = path_solve(sale_id=sale_id, user_id=shopper.user_id)
            except Exception as error:  # noqa: BLE001 - Redis down under the lab itself
                now = time.monotonic()
                answers.append(Answer(shopper.user_id, now, 0, None, repr(error)[:80], now))
                continue
            if path is None:
                now = time.monotonic()
                answers.append(Answer(shopper.user_id, now, 0, None, "no path: the shop refused the captcha", now))
                continue
        answers.append(press(url, shopper, sale_id, path))
        path = None
        if answers[-1].status == 401:
            log_in([shopper])
        if answers[-1].status not in RETRYABLE and answers[-1].status != 0:
            break
    return answers
