"""A draw's published ranking (docs/draw.md): every entrant's place is the hex SHA-256 of
"<seed>:<user id>", smallest first, ties (which SHA-256 makes impossible in practice) by id.
The winners are the first `units` of it, and units that come back after the draw are offered
down the rest of it, so both depend only on the seed and the sorted entrant ids."""

import hashlib


def rank_of(seed: str, user_id: int) -> str:
    """An entrant's place in the draw: the hex SHA-256 of "<seed>:<user id>" (smallest first)."""
    return hashlib.sha256(f"{seed}:{user_id}".encode()).hexdigest()


def ranked(seed: str, entrant_ids: list[int]) -> list[int]:
    """Every entrant in the published order."""
    return sorted(entrant_ids, key=lambda user_id: (rank_of(seed, user_id), user_id))


def winners_of(seed: str, entrant_ids: list[int], units: int) -> list[int]:
    """The draw, as docs/draw.md publishes it: the `units` entrants of smallest rank. Every
    entrant is equally likely to win."""
    return ranked(seed, entrant_ids)[:units]
