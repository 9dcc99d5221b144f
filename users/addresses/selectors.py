"""Reads on the address book, always the signed-in shopper's own."""

from typing import Any

from django.db.models import QuerySet

from seckill_site.http import positive_int
from users.models import Address, User


def addresses_of_user(*, user: User) -> QuerySet[Address]:
    """The shopper's address book, the default first, then the most recently edited."""
    return Address.objects.filter(user=user).order_by("-is_default", "-updated_at", "-pk")


def address_of_user(*, user: User, address_id: Any) -> Address | None:
    """One of the shopper's addresses by its id as a client sent it; another shopper's
    address is indistinguishable from a missing one, and a malformed id from both."""
    parsed = positive_int(address_id)
    if parsed is None:
        return None
    return addresses_of_user(user=user).filter(pk=parsed).first()


def address_default(*, user: User) -> Address | None:
    return addresses_of_user(user=user).filter(is_default=True).first()


def address_public_data(address: Address) -> dict[str, Any]:
    return {
        "id": address.pk,
        "recipient": address.recipient,
        "phone": address.phone,
        "region": address.region,
        "city": address.city,
        "district": address.district,
        "street": address.street,
        "postcode": address.postcode,
        "isDefault": address.is_default,
    }
