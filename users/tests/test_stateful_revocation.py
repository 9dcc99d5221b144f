"""Revocation as a Hypothesis state machine against real Redis and PostgreSQL: sessions and API
tokens issued, read, their cache entries lapsing, token reads whose cache fill lands late,
"log out everywhere", single logouts and a lost auth epoch, in any order. After every step a
revoked credential answers for nobody, and a live one for its user."""

import os
import time

import pytest
from django.contrib.auth import SESSION_KEY
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from rest_framework.authtoken.models import Token

from seckill_site.redis import client
from testutils.factories.users import make_user, session_for
from users import keys as redis_keys
from users import tokens
from users.revocation import user_auth_revoke
from users.sessions import SessionStore

# The late fill is found within a few hundred examples (`make stateful` runs more).
REVOCATION_EXAMPLES = int(os.environ.get("STATEFUL_EXAMPLES", "100"))


class RevocationLife(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.user = make_user()
        self.sessions: dict[str, bool] = {}  # session key -> still valid
        self.tokens: dict[str, bool] = {}  # token -> still valid
        self.fills: list[tuple[str, int, int, float]] = []  # token reads whose cache write is late

    @rule()
    def log_in(self):
        self.sessions[session_for(self.user)] = True

    @rule()
    def token_issued(self):
        self.tokens[tokens.api_token_issue(user_id=self.user.pk)] = True

    @precondition(lambda self: self.tokens)
    @rule(index=st.integers(0, 20))
    def token_cache_lapses(self, index):
        key = list(self.tokens)[index % len(self.tokens)]
        client().delete(tokens._token_cache_key(key))

    @precondition(lambda self: self.tokens)
    @rule(index=st.integers(0, 20))
    def token_read_begins(self, index):
        """A request missed the cache and read the token row; its cache write comes later."""
        key = list(self.tokens)[index % len(self.tokens)]
        read_at = time.monotonic()
        row = Token.objects.filter(key=key, user__is_active=True).values_list("user_id", "created").first()
        if row is not None:
            self.fills.append((key, row[0], tokens._token_expires(row[1]), read_at))

    @precondition(lambda self: self.fills)
    @rule(index=st.integers(0, 20))
    def token_read_completes(self, index):
        key, user_id, expires, read_at = self.fills.pop(index % len(self.fills))
        tokens._token_cache_set(key, user_id, expires, read_at=read_at)

    @rule()
    def log_out_everywhere(self):
        user_auth_revoke(user_id=self.user.pk)
        self.sessions = dict.fromkeys(self.sessions, False)
        self.tokens = dict.fromkeys(self.tokens, False)

    @precondition(lambda self: any(self.tokens.values()))
    @rule(index=st.integers(0, 20))
    def one_token_logs_out(self, index):
        live = [key for key, valid in self.tokens.items() if valid]
        key = live[index % len(live)]
        tokens.api_token_revoke(key=key)
        self.tokens[key] = False

    @rule()
    def auth_epoch_lost(self):
        """Redis lost the epoch (evicted, or a failover lost it): sessions end; tokens do not."""
        client().delete(redis_keys.auth_epoch(self.user.pk))
        self.sessions = dict.fromkeys(self.sessions, False)

    @invariant()
    def revoked_answers_for_nobody_and_live_for_its_user(self):
        for key, valid in self.tokens.items():
            assert tokens.api_token_user_id(key) == (self.user.pk if valid else None), (key, valid)
        for key, valid in list(self.sessions.items()):
            data = SessionStore(session_key=key).load()
            assert (data.get(SESSION_KEY) == str(self.user.pk)) is valid, (key, valid)


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_revocation_holds_whatever_the_order_of_reads_writes_and_revocations():
    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(
        RevocationLife,
        settings=hypothesis_settings(
            max_examples=REVOCATION_EXAMPLES,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
