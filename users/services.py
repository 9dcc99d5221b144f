"""Writes on users: login, registration, the address book."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, login, logout
from django.db import IntegrityError, transaction
from django.db.models import F
from django.http import HttpRequest
from django.utils import translation
from django.utils.translation import gettext as _
from django_ratelimit.core import is_ratelimited

from seckill_site.http import client_bucket
from users.models import ADDRESSES_PER_USER, MOBILE_TAKEN_MESSAGE, Address, User, mobile_normalize
from users.sessions import auth_epoch, auth_epoch_ensure
from users.tokens import api_token_issue, api_token_revoke

# Login attempts, on the shop's login page, its API and the admin's login alike (one budget:
# switching between them buys an attacker nothing).
LOGIN_RATE_PER_IP = "30/m"
LOGIN_RATE_PER_MOBILE = "10/m"
LOGIN_GROUP_IP = "user.login.ip"
LOGIN_GROUP_MOBILE = "user.login.mobile"


@dataclass(frozen=True)
class LoginResult:
    user: User | None
    error: str | None = None
    token: str | None = None  # with issue_token: the API token issued


def login_attempt_limited(*, request: HttpRequest, mobile: Any) -> bool:
    """Count one login attempt against the caller's IP and the account it names; True when
    either is over its limit. The account is the mobile number as the login form would read
    it, so " 13700000001", "13700000001\\t", "１３７…" and the JSON number 13700000001 share one
    bucket. (The API counts the same buckets through seckill_site.api's throttles.)"""
    ip, account = client_bucket(request), mobile_normalize(mobile)
    by_ip = is_ratelimited(
        request, group=LOGIN_GROUP_IP, key=lambda _group, _request: ip, rate=LOGIN_RATE_PER_IP, increment=True
    )
    by_mobile = is_ratelimited(
        request,
        group=LOGIN_GROUP_MOBILE,
        key=lambda _group, _request: account,
        rate=LOGIN_RATE_PER_MOBILE,
        increment=True,
    )
    return by_ip or by_mobile


def user_language_remember(*, user: User) -> None:
    """Keep the language of the page a shopper first logs in from, for the text messages the shop
    sends them (users.notices); one they chose on their settings page stays."""
    User.objects.filter(pk=user.pk, language="").update(language=translation.get_language() or "")


def user_language_set(*, user: User, language: str) -> None:
    if language not in dict(settings.LANGUAGES):
        raise ValueError(f"not one of the shop's languages: {language!r}")
    User.objects.filter(pk=user.pk).update(language=language)


def user_login(*, request: HttpRequest, mobile: str, password: str, issue_token: bool = False) -> LoginResult:
    """Authenticate and start a Redis-backed session (and with `issue_token`, an API token);
    counts the login on the user row.

    Checking a password takes a while (the hasher is slow on purpose). If the user's
    credentials are revoked meanwhile — a password reset commits while the old one is being
    checked — the session and token issued after it would outlive the revocation. So the auth
    epoch is read before the check and again after everything is issued: if it moved, what
    was issued is revoked again here and the login is refused."""
    epoch = _auth_epoch_of(mobile)
    user = authenticate(request, mobile=mobile, password=password)
    if user is None:
        return LoginResult(user=None, error=_("Wrong mobile number or password."))
    login(request, user)
    token = api_token_issue(user_id=user.pk) if issue_token else None
    if auth_epoch(user.pk) != epoch:
        logout(request)
        if token is not None:
            api_token_revoke(key=token)
        return LoginResult(user=None, error=_("Your account changed while you were logging in; log in again."))
    User.objects.filter(pk=user.pk).update(login_count=F("login_count") + 1)
    user_language_remember(user=user)
    user.refresh_from_db(fields=["login_count", "language"])
    return LoginResult(user=user, token=token)


def _auth_epoch_of(mobile: str) -> str | None:
    user_id = User.objects.filter(mobile=mobile_normalize(mobile)).values_list("pk", flat=True).first()
    return auth_epoch_ensure(user_id) if user_id is not None else None


def user_logout(*, request: HttpRequest) -> None:
    logout(request)


class MobileTaken(Exception):
    """The mobile number is registered already; the message is for the person registering."""


def user_register(*, mobile: str, password: str, nickname: str = "") -> User:
    """Caller has validated the input (users.forms.RegisterForm). The form's "already
    registered" check cannot see a registration committed after it ran: two simultaneous
    sign-ups of one number both pass it, and the unique index stops the second. That one gets
    MobileTaken, the form's own answer, instead of an IntegrityError."""
    try:
        with transaction.atomic():
            return User.objects.create_user(mobile=mobile, password=password, nickname=nickname or mobile[-4:])
    except IntegrityError as error:
        if User.objects.filter(mobile=mobile).exists():
            raise MobileTaken(MOBILE_TAKEN_MESSAGE) from error
        raise


# --- the address book ----------------------------------------------------------------------------


class AddressBookFull(Exception):
    """The shopper has ADDRESSES_PER_USER addresses already; the message is for them."""


ADDRESS_FIELDS = ("recipient", "phone", "region", "city", "district", "street", "postcode")


def _address_book_lock(*, user_id: int) -> None:
    """Serialise the writes of one shopper's address book (the count cap and the single
    default) on their user row, for the rest of the transaction."""
    User.objects.select_for_update().filter(pk=user_id).values_list("pk", flat=True).first()


def _defaults_clear(*, user_id: int, keep: int | None = None) -> None:
    others = Address.objects.filter(user_id=user_id, is_default=True)
    if keep is not None:
        others = others.exclude(pk=keep)
    others.update(is_default=False)


def address_create(
    *,
    user: User,
    recipient: str,
    phone: str,
    region: str,
    city: str,
    street: str,
    district: str = "",
    postcode: str = "",
    is_default: bool = False,
) -> Address:
    """Add an address (validated). The shopper's first address is their default whatever
    `is_default` says, so a shopper with addresses always has a default to pay with."""
    with transaction.atomic():
        _address_book_lock(user_id=user.pk)
        count = Address.objects.filter(user=user).count()
        if count >= ADDRESSES_PER_USER:
            raise AddressBookFull(
                _("Your address book is full (%(n)d addresses); delete one first.") % {"n": ADDRESSES_PER_USER}
            )
        address = Address(
            user=user,
            recipient=recipient,
            phone=phone,
            region=region,
            city=city,
            district=district,
            street=street,
            postcode=postcode,
            is_default=is_default or count == 0,
        )
        # The single-default constraint holds by the lock and the clearing below, not by a query here.
        address.full_clean(exclude=["user"], validate_constraints=False)
        if address.is_default:
            _defaults_clear(user_id=user.pk)
        address.save()
        return address


def _address_locked(*, address: Address) -> Address:
    """The address as it is now, under its owner's address-book lock (the caller is in a
    transaction); Address.DoesNotExist when it was deleted meanwhile. A service changes only
    the row it reads here: one read before the lock would save a deleted row back, or a
    default another request has just moved."""
    _address_book_lock(user_id=address.user_id)
    return Address.objects.get(pk=address.pk, user_id=address.user_id)


def address_update(*, address: Address, changes: dict[str, Any]) -> Address:
    """Edit an address (validated); only the fields in `changes` are written. Raises
    Address.DoesNotExist when it is gone. Orders paid with it keep the copy they were paid with."""
    unknown = set(changes) - set(ADDRESS_FIELDS) - {"is_default"}
    if unknown:
        raise ValueError(f"not address fields: {sorted(unknown)}")
    with transaction.atomic():
        address = _address_locked(address=address)
        written = [name for name in ADDRESS_FIELDS if name in changes]
        for name in written:
            setattr(address, name, changes[name])
        address.full_clean(exclude=["user", "is_default"], validate_constraints=False)
        # Unticking the default is not a way to have none: another address must be made default.
        if changes.get("is_default") and not address.is_default:
            _defaults_clear(user_id=address.user_id, keep=address.pk)
            address.is_default = True
            written.append("is_default")
        if written:
            address.save(update_fields=[*written, "updated_at"])
        return address


def address_default_set(*, address: Address) -> Address:
    """Make the address its owner's default; Address.DoesNotExist when it is gone."""
    with transaction.atomic():
        address = _address_locked(address=address)
        _defaults_clear(user_id=address.user_id, keep=address.pk)
        Address.objects.filter(pk=address.pk).update(is_default=True)
    address.refresh_from_db()
    return address


def address_delete(*, address: Address) -> None:
    """Delete an address; when it was the default, the most recently used other one becomes
    the default. Orders paid with it keep their copy."""
    with transaction.atomic():
        try:
            was_default = _address_locked(address=address).is_default
        except Address.DoesNotExist:
            return  # deleted meanwhile: what was asked is done
        Address.objects.filter(pk=address.pk).delete()
        if was_default:
            successor = Address.objects.filter(user_id=address.user_id).order_by("-updated_at", "-pk").first()
            if successor is not None:
                Address.objects.filter(pk=successor.pk).update(is_default=True)
