"""A goods' name and title are one line each: a control character or a line break is refused
with a clear message wherever goods are written (the model, the admin, the API), and nothing
changes. The sale's calendar file, texts and CSV exports carry them into other formats."""

import pytest
from django.core.exceptions import ValidationError

from goods.models import Goods
from testutils.clients import api
from testutils.factories.goods import make_goods
from testutils.factories.users import make_merchant
from users.tokens import api_token_issue

pytestmark = pytest.mark.django_db

# A bare CR ends a line for some calendar readers; the others end one for someone else.
BREAKING = ["\r", "\n", "\r\n", "\x00", "\x0b", "\x1b", "\t", "\x7f", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("field", ["name", "title"])
@pytest.mark.parametrize("char", BREAKING, ids=[f"U+{ord(c[-1]):04X}" for c in BREAKING])
def test_the_model_refuses_a_control_character_in_a_name_or_title(field, char):
    goods = Goods(owner=make_merchant(), name="Phone", title="A phone", price="1.00")
    setattr(goods, field, f"Phone{char}URL:https://evil.example")
    with pytest.raises(ValidationError) as refused:
        goods.full_clean()
    # The text in the active language (goods.translation), and `field`, which reads it.
    assert set(refused.value.message_dict) == {field, f"{field}_en"}
    assert f"U+{ord(char[-1]):04X}" in refused.value.message_dict[f"{field}_en"][0]


def test_the_model_takes_names_in_any_script_with_spaces_and_punctuation():
    goods = Goods(owner=make_merchant(), name="超长名称的手机, 特价; Phone ✓", title="One line: «ok» — 好")
    goods.price = "1.00"
    goods.full_clean()


@pytest.mark.parametrize("field", ["name", "title"])
def test_the_admin_refuses_a_bare_cr_and_saves_nothing(client, field):
    merchant = make_merchant()
    client.force_login(merchant)
    form = {"name_en": "Phone", "title_en": "A phone", "price": "1", "stock": 1, "sales-TOTAL_FORMS": 0,
            "sales-INITIAL_FORMS": 0}  # fmt: skip
    form[f"{field}_zh_hans"] = "Phone\rURL:https://evil.example"
    response = client.post("/admin/goods/goods/add/", form)
    assert response.status_code == 200 and "U+000D" in response.content.decode()
    assert not Goods.objects.filter(owner=merchant).exists()

    goods = make_goods(owner=merchant)
    response = client.post(f"/admin/goods/goods/{goods.pk}/change/", form)
    assert response.status_code == 200 and "U+000D" in response.content.decode()
    goods.refresh_from_db()
    assert (goods.name, goods.title) == ("Test phone", "A phone for tests")


@pytest.mark.parametrize("field", ["name", "title"])
def test_the_api_refuses_a_bare_cr_with_a_400_and_changes_nothing(field):
    merchant = make_merchant()
    client = api(api_token_issue(user_id=merchant.pk))
    body = {"name": "Phone", "title": "A phone", "price": "1.00", "stock": 1, field: "Phone\rURL:https://x.example"}
    created = client.post("/api/v1/merchant/goods", body, format="json")
    assert created.status_code == 400 and created.json()["code"] == 500101
    assert field in created.json()["data"] and not Goods.objects.filter(owner=merchant).exists()

    goods = make_goods(owner=merchant)
    edited = client.patch(f"/api/v1/merchant/goods/{goods.pk}", {field: "Phone\rATTACH:x"}, format="json")
    assert edited.status_code == 400 and edited.json()["code"] == 500101
    goods.refresh_from_db()
    assert (goods.name, goods.title) == ("Test phone", "A phone for tests")
