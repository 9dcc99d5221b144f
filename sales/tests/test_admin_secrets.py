"""A draw's seed is unreachable before the draw by construction: nothing stored holds it
(sales.draw_seed). And no admin changelist filters, searches or sorts on a secret field (a
password hash) or on a lookup path nothing accounts for, walked over every registered admin
and every relation path (seckill_site.admin.SecretsUnqueryable)."""

import json
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Model
from django.db.models.constants import LOOKUP_SEP

from sales import draw_seed
from sales.models import Admission, SaleDraw
from sales.services import draw_seed_ensure
from seckill_site.admin import SecretsUnqueryable, lookup_resolve
from seckill_site.redis import client as redis_client
from testutils.factories.goods import make_goods
from testutils.factories.sales import make_sale
from testutils.factories.users import make_merchant, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def draw_of_merchant():
    merchant = make_merchant()
    sale = make_sale(goods=make_goods(owner=merchant), starts_in=3600, admission=Admission.DRAW)
    draw_seed_ensure(sale=sale)
    return merchant, SaleDraw.objects.get(sale=sale)


def _seed(draw: SaleDraw) -> str:
    return draw_seed.seed_reveal(nonce=draw.seed_nonce, sha256=draw.seed_sha256)


def _every_row_as_text() -> Iterator[str]:
    """Every row of every table in the database, as JSON text: what any query could ever read."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = [name for (name,) in cursor.fetchall()]
        for table in tables:
            cursor.execute(f'SELECT row_to_json(t)::text FROM "{table}" t')  # noqa: S608 (catalogue names)
            yield from (row for (row,) in cursor.fetchall())


def _every_redis_value_as_text() -> Iterator[str]:
    redis = redis_client()
    for key in redis.scan_iter(count=1000):
        kind = redis.type(key)
        kind = kind.decode() if isinstance(kind, bytes) else kind
        value = {
            "string": lambda k: redis.get(k),
            "hash": lambda k: redis.hgetall(k),
            "set": lambda k: redis.smembers(k),
            "zset": lambda k: redis.zrange(k, 0, -1, withscores=True),
            "list": lambda k: redis.lrange(k, 0, -1),
            "stream": lambda k: redis.xrange(k),
        }.get(kind, lambda k: b"")(key)
        yield f"{key!r} {value!r}"


def test_no_row_and_no_redis_value_holds_an_undrawn_seed_or_its_key(draw_of_merchant):
    """The class: if nothing stored holds the seed or its key, no filter, export, API, log or
    backup of the database can reveal it, whatever path a query takes."""
    _merchant, draw = draw_of_merchant
    seed = _seed(draw)
    assert draw_seed.sha256_hex(seed) == draw.seed_sha256  # the published hash is the seed's
    rows = list(_every_row_as_text())
    assert any(draw.seed_sha256 in row for row in rows)  # the dump does read the draw's row
    needles = {seed, seed[:16], seed[-16:], settings.DRAW_SEED_KEY or settings.SECRET_KEY}
    for text in [*rows, *_every_redis_value_as_text()]:
        assert not any(needle in text for needle in needles), text[:200]


def test_the_drawn_seed_is_the_one_whose_hash_was_published_and_is_stored_then(draw_of_merchant):
    _merchant, draw = draw_of_merchant
    assert draw.seed == ""
    seed = _seed(draw)
    assert len(seed) == 64 and all(c in "0123456789abcdef" for c in seed)
    assert json.dumps(seed) not in json.dumps(list(SaleDraw.objects.values()), default=str)


def test_a_rotated_key_still_draws_while_it_is_a_fallback_and_never_with_another_seed(settings, draw_of_merchant):
    _merchant, draw = draw_of_merchant
    seed = _seed(draw)
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "rotated-" + "k" * 50
    assert _seed(draw) == seed
    settings.SECRET_KEY_FALLBACKS = []
    with pytest.raises(draw_seed.SeedKeyLost):
        _seed(draw)


@pytest.mark.parametrize(
    "url, lookup",
    [
        # The reviews' paths: a relation as a primary key, followed through `pk`.
        ("/admin/orders/order/", "address__pk__goods__owner__goods__sales__draw__seed__startswith"),
        ("/admin/orders/order/", "shipment__pk__goods__owner__goods__sales__draw__seed__lt"),
        ("/admin/users/user/", "notice_settings__pk__goods__sales__draw__seed__gt"),
        ("/admin/users/user/", "notice_settings__pk__password__startswith"),
        ("/admin/orders/order/", "address__pk__user__password__startswith"),
    ],
)
def test_a_primary_key_that_is_a_relation_is_followed_as_the_orm_follows_it(admin_client, url, lookup):
    assert admin_client.get(url, {lookup: "a"}).status_code == 400


def test_a_merchant_filtering_by_seed_prefixes_learns_nothing(client, draw_of_merchant):
    merchant, draw = draw_of_merchant
    client.force_login(merchant)
    seed = _seed(draw)
    for prefix in (seed[:1], "0123456789abcdef".replace(seed[0], "")[0]):
        answer = client.get("/admin/sales/saledraw/", {"seed__startswith": prefix})
        assert answer.status_code == 200
        assert draw.seed_sha256.encode() not in answer.content  # the empty column matches no prefix


def test_public_lookups_still_filter(admin_client, draw_of_merchant):
    _merchant, draw = draw_of_merchant
    answer = admin_client.get("/admin/sales/saledraw/", {"seed_sha256__startswith": draw.seed_sha256[:4]})
    assert answer.status_code == 200
    assert draw.seed_sha256.encode() in answer.content


# Deep enough for every path the reviews found (the seed was four relations from an order).
WALK_DEPTH = 4


def _relation_paths(model: type[Model], depth: int) -> Iterator[tuple[str, type[Model], object]]:
    """Every lookup path from `model` through at most `depth` relations, forward and reverse,
    each relation also reached through `pk` where a model's primary key is one: (path, the model
    its last field belongs to, that field)."""
    stack: list[tuple[str, type[Model], int]] = [("", model, 0)]
    while stack:
        prefix, current, hops = stack.pop()
        names = [(field.name, field) for field in current._meta.get_fields()]
        names.append(("pk", current._meta.pk))
        for name, field in names:
            path = f"{prefix}{LOOKUP_SEP if prefix else ''}{name}"
            yield path, current, field
            if field.is_relation and field.related_model is not None and hops < depth:
                stack.append((path, field.related_model, hops + 1))


def _superuser_request(rf):
    request = rf.get("/")
    request.user = make_user(is_staff=True, is_superuser=True)
    return request


def test_every_registered_admin_refuses_every_path_to_a_secret_or_a_part_nothing_accounts_for(rf):
    """The class, not the instance: each admin the site knows × each relation path from its
    model, `pk` aliases included. A path reaching a secret field is refused; so is a path with a
    part the ORM would not accept; a path allowed is exactly the ORM's."""
    request = _superuser_request(rf)
    walked = secrets = 0
    for model, model_admin in admin.site._registry.items():
        assert isinstance(model_admin, SecretsUnqueryable), model_admin
        for path, owner, field in _relation_paths(model, WALK_DEPTH):
            walked += 1
            if field.name in getattr(owner, "secret_fields", ()):
                secrets += 1
                for lookup in (path, f"{path}__startswith", f"{path}__lt"):
                    assert not model_admin.lookup_allowed(lookup, "a", request), (model, lookup)
            if field.get_transform("nosuchpart") is None:  # a JSON column reads any part as a key
                assert not model_admin.lookup_allowed(f"{path}__nosuchpart", "a", request), (model, path)
                assert not model_admin.lookup_allowed(f"{path}__exact__exact", "a", request), (model, path)
    assert secrets > 0 and walked > 10_000, (secrets, walked)


def test_a_resolved_path_is_the_one_the_orm_builds(rf):
    """lookup_resolve names each `pk` as the field it stands for: the same SQL as the ORM's."""
    user_model = get_user_model()
    cases = {
        "notice_settings__pk__pk": "notice_settings__user__id",
        "pk__in": "id__in",
        "orders__address__pk__user__mobile__startswith": "orders__address__order__user__mobile__startswith",
        "date_joined__date__gte": "date_joined__date__gte",
    }
    for lookup, expected in cases.items():
        resolved = lookup_resolve(user_model, lookup)
        assert resolved == (expected, False)
        value = [1] if lookup.endswith("in") else ("2026-01-01" if "date" in lookup else "1")
        same = str(user_model.objects.filter(**{lookup: value}).query)
        assert str(user_model.objects.filter(**{expected: value}).query) == same
    assert lookup_resolve(user_model, "orders__address__pk__user__password") == (
        "orders__address__order__user__password",
        True,
    )
    for nothing in ("nosuch", "mobile__nosuch", "mobile__exact__gte", "orders__nosuch__id"):
        assert lookup_resolve(user_model, nothing) is None


def test_a_search_or_sort_on_a_secret_is_dropped(rf):
    """An admin that names a secret in search_fields, ordering or a column is stripped of it."""

    class Careless(admin.ModelAdmin):
        search_fields = ("mobile", "password")
        ordering = ("password",)
        list_display = ("mobile", "password")

    site = admin.site.__class__(name="careless")
    site.register(get_user_model(), Careless)
    model_admin = site._registry[get_user_model()]
    request = rf.get("/", {"o": "1"})
    request.user = make_user(is_staff=True, is_superuser=True)
    assert list(model_admin.get_search_fields(request)) == ["mobile"]
    assert list(model_admin.get_ordering(request)) == []
    changelist = model_admin.get_changelist_instance(request)
    assert changelist.get_ordering_field("password") is None
    assert not any("password" in str(term) for term in changelist.get_ordering(request, changelist.root_queryset))
