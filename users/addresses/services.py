"""Writes on the address book: add, edit, delete, make default. Each takes the shopper's user
row lock first, so the cap (ADDRESSES_PER_USER) and the single default hold under races."""

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from users.models import ADDRESSES_PER_USER, Address, User


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
