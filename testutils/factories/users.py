"""Users for tests: shoppers (one or hundreds), merchants, their sessions, texted codes and addresses."""

import itertools
import re

from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group

from users.models import MERCHANTS_GROUP, User
from users.sessions import SessionStore

PASSWORD = "secret-pass-1"
_mobiles = itertools.count(13000000000)


def next_mobile() -> str:
    return str(next(_mobiles))


def make_user(**fields) -> User:
    fields.setdefault("mobile", next_mobile())
    password = fields.pop("password", PASSWORD)
    return User.objects.create_user(password=password, **fields)


def make_users(count: int) -> list[User]:
    """Many shoppers in one INSERT (bursts need hundreds)."""
    hashed = make_password(PASSWORD)
    users = [User(mobile=next_mobile(), nickname=f"shopper {i}", password=hashed) for i in range(count)]
    return User.objects.bulk_create(users)


def make_merchant(**fields) -> User:
    user = make_user(is_staff=True, **fields)
    group, _ = Group.objects.get_or_create(name=MERCHANTS_GROUP)
    user.groups.add(group)
    return user


def session_for(user: User) -> str:
    """A logged-in session stored in Redis, as the login view would make it; returns its key."""
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "users.backends.MobileBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def texted_code(mobile: str, purpose: str = "register", requester: str = "127.0.0.1") -> str:
    """Have a code texted to `mobile` and read it as its owner would (from the test
    settings' in-memory SMS backend)."""
    from users import sms
    from users.verification.services import sms_code_send

    assert sms_code_send(mobile=mobile, purpose=purpose, requester=requester).sent
    message = [m for m in sms.outbox if m["mobile"] == mobile][-1]["text"]
    return re.search(r"\b(\d{6})\b", message)[1]


def make_address(user: User, **fields):
    """An address in the user's book (the first one becomes their default), as the address page makes it."""
    from users.addresses.services import address_create

    fields.setdefault("recipient", "张三")
    fields.setdefault("phone", "13712345678")
    fields.setdefault("region", "浙江省")
    fields.setdefault("city", "杭州市")
    fields.setdefault("district", "西湖区")
    fields.setdefault("street", "文三路 100 号")
    fields.setdefault("postcode", "310000")
    return address_create(user=user, **fields)
