"""Goods' texts in each language (goods.translation): a reader gets theirs, else the other's; a
merchant writes them in the admin and the API, one language at least."""

import pytest
from django.core.exceptions import ValidationError
from django.utils import translation

from goods.models import Goods
from testutils.clients import api
from testutils.factories.goods import make_goods
from testutils.factories.users import make_merchant
from users.tokens import api_token_issue

pytestmark = pytest.mark.django_db

BOTH = {"name_en": "Teapot", "name_zh_hans": "茶壶", "title_en": "Clay, 300 ml", "title_zh_hans": "紫砂，300 毫升"}


def _read(goods: Goods, language: str) -> tuple[str, str]:
    with translation.override(language):
        return goods.name, goods.title


def test_each_language_reads_its_own_text():
    goods = make_goods(**BOTH)
    goods.refresh_from_db()
    assert _read(goods, "en") == ("Teapot", "Clay, 300 ml")
    assert _read(goods, "zh-hans") == ("茶壶", "紫砂，300 毫升")


ENGLISH_ONLY = {"name_en": "Teapot", "title_en": "Clay"}
CHINESE_ONLY = {"name_zh_hans": "茶壶", "title_zh_hans": "紫砂"}


@pytest.mark.parametrize(("written", "text"), [(ENGLISH_ONLY, "Teapot"), (CHINESE_ONLY, "茶壶")])
def test_a_text_written_in_one_language_is_read_in_both(written, text):
    goods = Goods(owner=make_merchant(), price="1.00", **written)
    goods.full_clean()
    goods.save()
    goods = Goods.objects.get(pk=goods.pk)
    assert _read(goods, "en")[0] == _read(goods, "zh-hans")[0] == text


def test_goods_without_a_name_in_any_language_are_refused_on_the_english_field():
    goods = Goods(owner=make_merchant(), price="1.00", title_zh_hans="紫砂")
    with pytest.raises(ValidationError) as refused:
        goods.full_clean()
    assert "Write the name in one language at least." in refused.value.message_dict["name_en"]
    assert "title_en" not in refused.value.message_dict  # the Chinese title is enough


def _admin_form(**texts) -> dict:
    return {"price": "1", "stock": 1, "sales-TOTAL_FORMS": 0, "sales-INITIAL_FORMS": 0, **texts}


def test_the_admin_takes_both_languages_and_shows_each_field_per_language(client):
    merchant = make_merchant()
    client.force_login(merchant)
    page = client.get("/admin/goods/goods/add/", headers={"accept-language": "zh-hans"}).content.decode()
    assert 'name="name_en"' in page and 'name="name_zh_hans"' in page and 'name="detail_zh_hans"' in page
    assert "名称（英语）" in page and "名称（简体中文）" in page
    response = client.post("/admin/goods/goods/add/", _admin_form(**BOTH))
    assert response.status_code == 302
    goods = Goods.objects.get(owner=merchant)
    assert _read(goods, "en") == ("Teapot", "Clay, 300 ml") and _read(goods, "zh-hans") == ("茶壶", "紫砂，300 毫升")

    edit = _admin_form(**{**BOTH, "name_zh_hans": "新茶壶"})
    assert client.post(f"/admin/goods/goods/{goods.pk}/change/", edit).status_code == 302
    goods.refresh_from_db()
    assert _read(goods, "zh-hans")[0] == "新茶壶" and _read(goods, "en")[0] == "Teapot"


def test_the_admin_takes_one_language_and_the_other_falls_back_to_it(client):
    merchant = make_merchant()
    client.force_login(merchant)
    assert (
        client.post("/admin/goods/goods/add/", _admin_form(name_zh_hans="茶壶", title_zh_hans="紫砂")).status_code
        == 302
    )
    goods = Goods.objects.get(owner=merchant)
    assert _read(goods, "en") == _read(goods, "zh-hans") == ("茶壶", "紫砂")


def test_the_admin_refuses_goods_without_a_name_and_saves_nothing(client):
    merchant = make_merchant()
    client.force_login(merchant)
    page = client.post("/admin/goods/goods/add/", _admin_form(title_en="Clay"), headers={"accept-language": "zh-hans"})
    assert page.status_code == 200 and "请至少用一种语言填写名称。" in page.content.decode()
    assert not Goods.objects.filter(owner=merchant).exists()


def test_the_api_writes_and_reads_each_language():
    merchant = make_merchant()
    client = api(api_token_issue(user_id=merchant.pk))
    body = {"nameEn": "Teapot", "nameZhHans": "茶壶", "titleZhHans": "紫砂", "price": "9.90", "stock": 1}
    created = client.post("/api/v1/merchant/goods", body, format="json")
    assert created.status_code == 201, created.json()
    data = created.json()["data"]
    assert (data["name"], data["nameEn"], data["nameZhHans"], data["title"], data["titleEn"]) == (
        "Teapot", "Teapot", "茶壶", "紫砂", None,
    )  # fmt: skip
    url = f"/api/v1/merchant/goods/{data['id']}"
    chinese = client.get(url, headers={"accept-language": "zh-hans"}).json()["data"]
    assert (chinese["name"], chinese["title"]) == ("茶壶", "紫砂")

    # `name` alone is the request's language's.
    assert (
        client.patch(url, {"name": "新茶壶"}, format="json", headers={"accept-language": "zh-hans"}).status_code == 200
    )
    goods = Goods.objects.get(pk=data["id"])
    assert _read(goods, "zh-hans")[0] == "新茶壶" and _read(goods, "en")[0] == "Teapot"


def test_the_api_refuses_goods_without_a_name_with_a_400():
    merchant = make_merchant()
    client = api(api_token_issue(user_id=merchant.pk))
    refused = client.post("/api/v1/merchant/goods", {"titleEn": "Clay", "price": "1.00", "stock": 1}, format="json")
    assert refused.status_code == 400 and not Goods.objects.filter(owner=merchant).exists()
