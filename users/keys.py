"""The Redis keys of a user's credentials: the auth epoch that sessions check (users.sessions,
users.revocation, the seckill gate) and the API tokens' cache (users.tokens)."""

from seckill_site.redis.keys import PREFIX


def auth_epoch(user_id: int) -> str:
    """The user's auth epoch (no TTL), rewritten by users.revocation.user_auth_revoke. It shares
    the hash tag of the user's session keys, so both are read in one round trip."""
    return f"{PREFIX}auth:{{u{user_id}}}:epoch"


def api_token(token_hash: str) -> str:
    """sha256 of an API token (so a dump shows none usable) -> user id."""
    return f"{PREFIX}api:token:{token_hash}"
