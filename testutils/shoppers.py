"""Shoppers for tests: the lab's HTTP shopper logged in as a test user, and solved paths."""

from lab.inject import path_for, reserve_directly
from lab.shopper import Shopper, session_create
from users.models import User

__all__ = ["path_for", "reserve_directly", "shopper"]


def shopper(user: User) -> Shopper:
    """The lab's shopper (lab.shopper), logged in as `user`."""
    return Shopper(user.pk, session_create(user))
