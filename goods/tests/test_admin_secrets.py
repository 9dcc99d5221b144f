"""No admin changelist filters, searches or sorts on a secret: a draw's seed before the draw, a
password hash. One rule for every registered admin (seckill_site.admin.SecretsUnqueryable)."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model

from goods.models import Admission, SaleDraw
from goods.services import draw_seed_ensure
from goods.tests.factories import make_goods, make_sale
from seckill_site.admin import SecretsUnqueryable
from users.tests.factories import make_merchant, make_user

pytestmark = pytest.mark.django_db

SECRET_LOOKUPS = ("exact", "startswith", "istartswith", "contains", "gt", "lt", "regex", "in", "isnull")


@pytest.fixture
def draw_of_merchant():
    merchant = make_merchant()
    sale = make_sale(goods=make_goods(owner=merchant), starts_in=3600, admission=Admission.DRAW)
    draw_seed_ensure(sale=sale)
    return merchant, SaleDraw.objects.get(sale=sale)


def test_a_merchant_cannot_learn_the_seed_by_filtering_the_draw_list(client, draw_of_merchant):
    merchant, draw = draw_of_merchant
    client.force_login(merchant)
    right, wrong = draw.seed[0], "0123456789abcdef".replace(draw.seed[0], "")[0]
    answers = [client.get("/admin/goods/saledraw/", {"seed__startswith": prefix}) for prefix in (right, wrong)]
    assert [answer.status_code for answer in answers] == [400, 400]
    assert draw.seed.encode() not in answers[0].content


@pytest.mark.parametrize("lookup", SECRET_LOOKUPS)
@pytest.mark.parametrize(
    "url, path",
    [
        ("/admin/goods/saledraw/", "seed"),
        ("/admin/goods/sale/", "draw__seed"),
        ("/admin/goods/goods/", "sales__draw__seed"),
        ("/admin/users/user/", "password"),
    ],
)
def test_every_lookup_on_a_secret_is_refused_from_any_list(admin_client, draw_of_merchant, url, path, lookup):
    _merchant, draw = draw_of_merchant
    value = {"isnull": "false", "in": draw.seed}.get(lookup, draw.seed[:1])
    assert admin_client.get(url, {f"{path}__{lookup}": value}).status_code == 400
    assert admin_client.get(url, {path: value}).status_code == 400


def test_public_lookups_still_filter(admin_client, draw_of_merchant):
    _merchant, draw = draw_of_merchant
    answer = admin_client.get("/admin/goods/saledraw/", {"seed_sha256__startswith": draw.seed_sha256[:4]})
    assert answer.status_code == 200
    assert draw.seed_sha256.encode() in answer.content


def test_every_registered_admin_refuses_its_models_secrets(rf):
    """The class, not the instance: each admin the site knows, for each secret its model declares."""
    superuser = make_user(is_staff=True, is_superuser=True)
    checked = 0
    for model, model_admin in admin.site._registry.items():
        assert isinstance(model_admin, SecretsUnqueryable), model_admin
        request = rf.get("/")
        request.user = superuser
        for name in getattr(model, "secret_fields", ()):
            assert not model_admin.lookup_allowed(f"{name}__startswith", "a", request)
            assert name not in model_admin.get_search_fields(request)
            assert name not in model_admin.get_ordering(request)
            checked += 1
    assert checked >= 2  # the seed and the password


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
