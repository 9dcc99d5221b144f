"""Ending a user's credentials everywhere at once, the seckill gate included (it never reads the
user row). Kept apart from users.services so that the User model, which revokes on a changed
password or is_active, can call it without importing the services that import the model."""

import secrets

from django.db import transaction

from seckill_site.redis import durable_set
from users import keys
from users.tokens import api_token_cache_drop, api_token_keys, api_tokens_revoke


def user_auth_revoke(*, user_id: int) -> None:
    """End every session and API token of the user at once, the seckill gate included:
    on a password change or deactivation (User.save calls this once committed), an admin's
    edit of the user, or "log out everywhere".

    Sessions: a new random auth epoch in Redis; a session made under another one loads empty
    (users.sessions). Random, not a counter: if Redis lost the key, no old value comes back.
    Tokens: their rows and cache entries are deleted (seckill_site.api.api_tokens_revoke).
    The new epoch waits for a replica's confirmation where REDIS_WAIT_REPLICAS asks for one
    (seckill_site.redis.durable_set): unconfirmed, it fails closed (NotDurable, answered 503)
    rather than report a revocation a failover could undo."""
    durable_set(keys.auth_epoch(user_id), secrets.token_hex(8))
    api_tokens_revoke(user_id=user_id)


def user_deleted_revoke(*, user_id: int) -> None:
    """A user row is about to be deleted: once that commits, end their sessions and tokens as
    a revocation does. The gate never reads the user row, so without this a deleted account's
    session or cached token would still buy. Called before the delete (users.apps connects it),
    because the token rows go with the user."""
    token_keys = api_token_keys(user_id=user_id)

    def revoke() -> None:
        durable_set(keys.auth_epoch(user_id), secrets.token_hex(8))
        api_token_cache_drop(keys=token_keys)

    transaction.on_commit(revoke)
