"""The result tickets the bench makes for its shoppers are the ones the shop reads (real Redis
sessions, the shop's own ticket_read)."""

import time

import pytest
from django.conf import settings

from lab.bench.tickets import tickets_mint
from lab.shopper import Shopper, session_create
from seckill import tickets
from testutils.factories.users import make_user
from users.middleware import REFRESHED_AT
from users.revocation import user_auth_revoke
from users.sessions import SessionStore

pytestmark = pytest.mark.django_db

DEPLOYMENT_KEY = "the deployment's own secret key, not this process's"


def test_a_minted_ticket_is_read_by_the_shop_with_the_deployments_key(settings):
    user = make_user()
    shopper = Shopper(user.pk, session_create(user, secret_key=DEPLOYMENT_KEY))
    made = tickets_mint([shopper], sale_id=7, secret_key=DEPLOYMENT_KEY)
    name, _sep, value = made[user.pk].partition("=")
    assert name == settings.SECKILL_RESULT_TICKET_COOKIE
    settings.SECRET_KEY = DEPLOYMENT_KEY  # as the web process reads it
    ticket = tickets.ticket_read(value, session_key=shopper.session)
    assert ticket is not None and (ticket.user_id, ticket.sale_id) == (user.pk, 7)
    assert tickets.ticket_read(value, session_key=session_create(user)) is None  # another session's


def test_a_shopper_whose_session_is_gone_gets_no_ticket():
    user = make_user()
    shopper = Shopper(user.pk, session_create(user))
    user_auth_revoke(user_id=user.pk)
    assert tickets_mint([shopper], sale_id=7, secret_key=settings.SECRET_KEY) == {}


def test_the_shoppers_session_is_marked_slid_as_the_buy_leaves_it():
    # A session slid long ago is re-saved, cookie and all, by the first poll that reaches Django.
    user = make_user()
    shopper = Shopper(user.pk, session_create(user))
    session = SessionStore(shopper.session)
    session[REFRESHED_AT] = int(time.time()) - 3600
    session.save()
    tickets_mint([shopper], sale_id=7, secret_key=settings.SECRET_KEY)
    assert time.time() - SessionStore(shopper.session)[REFRESHED_AT] < 5
