"""Schemathesis against the generated OpenAPI schema, in-process through the WSGI app on the
real test database and Redis: every operation gets generated valid and invalid input, and
every answer must be non-5xx and exactly what the schema documents (status, content type,
headers, body). The examples per operation are bounded so the file runs in about a minute.
"""

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from seckill_site.wsgi import application
from testutils.factories.goods import make_goods
from testutils.factories.orders import buy
from testutils.factories.sales import make_sale
from testutils.factories.users import PASSWORD, make_user, session_for
from testutils.fuzzing import record
from users.models import User
from users.revocation import user_auth_revoke
from users.tokens import api_token_issue

EXAMPLES_PER_OPERATION = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]

# Fuzzing: half a minute of CPU. `make test` runs it; `make test-fast` leaves `slow` out.
pytestmark = pytest.mark.slow
schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
calls: dict[str, int] = {}


@pytest.fixture
def keep_test_connection():
    """The WSGI handler closes the database connection after each request, which would end
    the test's transaction; Django's own test client unhooks the same signal handlers."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def world(db, keep_test_connection):
    """A superuser (allowed everywhere, so merchant operations answer too), a sale and an order;
    and credentials that must no longer work: the session of a user who changed their password
    since, and the cached token of one who was deactivated."""
    superuser = User.objects.create_superuser(mobile="13999999999", password=PASSWORD)
    sale = make_sale(goods=make_goods(owner=superuser), stock=50)
    buy(sale=sale, user=superuser)
    buy(sale=sale, user=make_user())
    stale, deactivated = make_user(), make_user()
    stale_session = session_for(stale)
    deactivated_token = api_token_issue(user_id=deactivated.pk)
    stale.set_password("changed-pass-4")
    stale.save()
    deactivated.is_active = False
    deactivated.save()
    for user in (stale, deactivated):  # what User.save schedules once committed; this test never commits
        user_auth_revoke(user_id=user.pk)
    return {"user": superuser, "stale_session": stale_session, "deactivated_token": deactivated_token}


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case, world):
    label = case.operation.label
    calls[label] = calls.get(label, 0) + 1
    # Mostly a live superuser; every third call a revoked session or token, which must be a
    # documented 401 (or the public answer), never a 5xx.
    kind = calls[label] % 3
    if kind == 1:
        response = case.call_and_validate(cookies={"sessionid": world["stale_session"]}, checks=CHECKS)
    elif kind == 2:
        headers = {"Authorization": f"Token {world['deactivated_token']}"}
        response = case.call_and_validate(headers=headers, checks=CHECKS)
    else:
        # A fresh token each time: generated calls to /users/logout revoke the previous one.
        token = api_token_issue(user_id=world["user"].pk)
        response = case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)
    record(f"{case.method} {case.operation.path} (schemathesis)", response.status_code)


def test_every_operation_was_exercised():
    """Runs after the generated tests of this file (pytest keeps file order)."""
    if not calls:
        pytest.skip("run together with the generated tests")
    operations = {operation.label for operation in (result.ok() for result in schema.get_all_operations())}
    assert set(calls) == operations, operations - set(calls)
    print(f"\nschemathesis: {len(calls)} operations, {sum(calls.values())} examples")
