"""The address book: services (one default, a cap), the shopper's pages and the API."""

import threading

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import Client

from testutils.factories.users import make_address, make_user
from users.addresses import selectors, services
from users.models import ADDRESSES_PER_USER, Address

pytestmark = pytest.mark.django_db

VALID = {
    "recipient": "张三",
    "phone": "13712345678",
    "region": "浙江省",
    "city": "杭州市",
    "district": "西湖区",
    "street": "文三路 100 号",
    "postcode": "310000",
}
SHANGHAI = {"region": "上海市", "city": "上海市", "district": "黄浦区"}  # a municipality is its own city
SUZHOU = {"region": "江苏省", "city": "苏州市", "district": "姑苏区"}


def defaults(user) -> list[int]:
    return list(Address.objects.filter(user=user, is_default=True).values_list("pk", flat=True))


# --- services -------------------------------------------------------------------------------


def test_the_first_address_is_the_default_and_one_default_at_a_time():
    me = make_user()
    first = make_address(me)
    second = make_address(me, city="上海市")
    assert defaults(me) == [first.pk]
    third = make_address(me, city="北京市", is_default=True)
    assert defaults(me) == [third.pk]
    services.address_default_set(address=second)
    assert defaults(me) == [second.pk]
    services.address_update(address=first, changes={"is_default": True, "street": "新地址 1 号"})
    assert defaults(me) == [first.pk] and Address.objects.get(pk=first.pk).street == "新地址 1 号"


def test_deleting_the_default_makes_another_the_default():
    me = make_user()
    first, second = make_address(me), make_address(me, city="上海市")
    services.address_delete(address=first)
    assert defaults(me) == [second.pk]
    services.address_delete(address=second)
    assert not Address.objects.filter(user=me).exists()


def test_the_database_holds_one_default_per_shopper():
    me = make_user()
    make_address(me)
    with pytest.raises(IntegrityError), transaction.atomic():
        Address.objects.create(user=me, is_default=True, **VALID)


def test_the_book_is_capped():
    me = make_user()
    for _ in range(ADDRESSES_PER_USER):
        make_address(me)
    with pytest.raises(services.AddressBookFull):
        make_address(me)
    assert Address.objects.filter(user=me).count() == ADDRESSES_PER_USER


@pytest.mark.parametrize(
    "field, value",
    [
        ("phone", "12345"),
        ("postcode", "31000"),
        ("postcode", "３１００００"),
        ("recipient", ""),
        ("street", "x" * 121),
        ("recipient", "张三\rURL:https://evil.example"),
        ("street", "文三路\u2028100 号"),
        ("street", "文三路\x00100 号"),
    ],
)
def test_the_services_validate(field, value):
    me = make_user()
    with pytest.raises(Exception) as refused:
        services.address_create(user=me, **{**VALID, field: value})
    assert type(refused.value).__name__ == "ValidationError"
    assert not Address.objects.filter(user=me).exists()


# --- pages ------------------------------------------------------------------------------------


def test_the_book_needs_a_login(client):
    response = client.get("/user/addresses")
    assert response.status_code == 302 and response["Location"].startswith("/user/index")


def test_add_edit_make_default_and_delete_on_the_pages(client):
    me = make_user()
    client.force_login(me)
    assert "No addresses yet" in client.get("/user/addresses").content.decode()
    response = client.post("/user/addresses", {**VALID, "phone": " １３７１２３４５６７８ "})
    assert response.status_code == 302 and response["Location"] == "/user/addresses"
    home = Address.objects.get(user=me)
    assert home.is_default and home.phone == "13712345678"  # normalised as a login number is
    client.post("/user/addresses", {**VALID, **SHANGHAI, "postcode": ""})
    office = Address.objects.get(user=me, city="上海市")
    page = client.get("/user/addresses").content.decode()
    assert page.index("杭州市") < page.index("上海市")  # the default first
    assert f"/user/addresses/{office.pk}/default" in page and f"/user/addresses/{home.pk}/default" not in page

    edit = client.get(f"/user/addresses/{office.pk}").content.decode()
    assert 'value="上海市"' in edit
    response = client.post(f"/user/addresses/{office.pk}", {**VALID, **SUZHOU, "is_default": "on"})
    assert response.status_code == 302
    office.refresh_from_db()
    assert office.city == "苏州市" and defaults(me) == [office.pk]
    # Unticking the default is no way to have none.
    client.post(f"/user/addresses/{office.pk}", {**VALID, **SUZHOU})
    assert defaults(me) == [office.pk]

    client.post(f"/user/addresses/{home.pk}/default")
    assert defaults(me) == [home.pk]
    client.post(f"/user/addresses/{home.pk}/delete")
    assert list(Address.objects.filter(user=me)) == [office] and defaults(me) == [office.pk]


def test_bad_input_is_a_400_with_the_errors_and_saves_nothing(client):
    me = make_user()
    client.force_login(me)
    response = client.post("/user/addresses", {**VALID, "phone": "123", "recipient": ""})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Enter an 11-digit mobile number starting with 1." in page and "This field is required." in page
    assert not Address.objects.filter(user=me).exists()
    home = make_address(me)
    assert client.post(f"/user/addresses/{home.pk}", {**VALID, "postcode": "abc"}).status_code == 400
    assert Address.objects.get(pk=home.pk).postcode == "310000"


@pytest.mark.parametrize("method, suffix", [("get", ""), ("post", ""), ("post", "/delete"), ("post", "/default")])
def test_another_shoppers_address_is_a_404(client, method, suffix):
    me, other = make_user(), make_user()
    theirs = make_address(other)
    client.force_login(me)
    for address_id in (theirs.pk, "abc", "0", "9" * 30):
        response = getattr(client, method)(f"/user/addresses/{address_id}{suffix}", VALID if method == "post" else None)
        assert response.status_code == 404, (address_id, suffix)
    assert Address.objects.get(pk=theirs.pk).is_default and Address.objects.get(pk=theirs.pk).city == "杭州市"


def test_next_returns_to_the_order_being_paid_and_only_inside_the_shop(client):
    me = make_user()
    client.force_login(me)
    response = client.post("/user/addresses", {**VALID, "next": "/orders/123"})
    assert response["Location"] == "/orders/123"
    for elsewhere in ("https://evil.example/", "//evil.example/", "0", "orders", "javascript:alert(1)"):
        response = client.post("/user/addresses", {**VALID, "next": elsewhere})
        assert response.status_code == 302 and response["Location"] == "/user/addresses", elsewhere


def test_a_full_book_says_so(client):
    me = make_user()
    for _ in range(ADDRESSES_PER_USER):
        make_address(me)
    client.force_login(me)
    assert "Your address book is full" in client.get("/user/addresses").content.decode()
    response = client.post("/user/addresses", VALID)
    assert response.status_code == 400 and "Your address book is full" in response.content.decode()


def test_the_pages_speak_chinese(client):
    me = make_user()
    make_address(me)
    client.force_login(me)
    client.cookies["django_language"] = "zh-hans"
    page = client.get("/user/addresses").content.decode()
    assert "我的地址" in page and "添加地址" in page and "收货人" in page and "默认" in page


# --- the API ------------------------------------------------------------------------------------


def api(client, method, url, body=None):
    kwargs = {"content_type": "application/json"} if body is not None else {}
    return getattr(client, method)(f"/api/v1/users/addresses{url}", body, **kwargs)


def test_the_api_keeps_the_book(client):
    me = make_user()
    client.force_login(me)
    created = api(client, "post", "", {**VALID, "postcode": ""})
    assert created.status_code == 201 and created.json()["data"]["isDefault"] is True
    first = created.json()["data"]["id"]
    second = api(client, "post", "", {**VALID, **SHANGHAI, "isDefault": True}).json()["data"]
    assert second["isDefault"] and not api(client, "get", f"/{first}").json()["data"]["isDefault"]
    changed = api(client, "patch", f"/{first}", {"street": "文一路 1 号"})
    assert changed.status_code == 200 and changed.json()["data"]["street"] == "文一路 1 号"
    assert changed.json()["data"]["city"] == "杭州市"  # a partial edit keeps the rest
    assert api(client, "post", f"/{first}/default").json()["data"]["isDefault"] is True
    listed = api(client, "get", "").json()["data"]
    assert [a["id"] for a in listed] == [first, second["id"]]
    assert api(client, "delete", f"/{first}").status_code == 200
    assert [a["isDefault"] for a in api(client, "get", "").json()["data"]] == [True]


@pytest.mark.parametrize(
    "body",
    [
        {**VALID, "recipient": 12},
        {**VALID, "phone": 13712345678},
        {**VALID, "phone": "123"},
        {**VALID, "isDefault": "yes"},
        {**VALID, "street": "x" * 121},
        {**VALID, "postcode": " 310000 "},
        {k: v for k, v in VALID.items() if k != "city"},
        [],
    ],
)
def test_the_api_refuses_bad_bodies(client, body):
    me = make_user()
    client.force_login(me)
    response = api(client, "post", "", body)
    assert response.status_code == 400 and response.json()["code"] != 0
    assert not Address.objects.filter(user=me).exists()


def test_the_api_hides_other_shoppers_addresses(client):
    theirs = make_address(make_user())
    client.force_login(make_user())
    for method, suffix, body in [
        ("get", "", None),
        ("patch", "", {"city": "x"}),
        ("delete", "", None),
        ("post", "/default", None),
    ]:
        assert api(client, method, f"/{theirs.pk}{suffix}", body).status_code == 404
    assert Address.objects.get(pk=theirs.pk).city == "杭州市"


def test_the_api_says_when_the_book_is_full(client):
    me = make_user()
    for _ in range(ADDRESSES_PER_USER):
        make_address(me)
    client.force_login(me)
    response = api(client, "post", "", VALID)
    assert response.status_code == 409 and response.json()["code"] == 500610


# --- an edit racing another change of the book ----------------------------------------------------


def _edit(door: str, user, address_id: int):
    client = Client()
    client.force_login(user)
    if door == "api":
        return client.patch(
            f"/api/v1/users/addresses/{address_id}", {"street": "改过的地址 9 号"}, content_type="application/json"
        )
    return client.post(f"/user/addresses/{address_id}", {**VALID, "street": "改过的地址 9 号"})


def _meanwhile(change: str, user, other_id: int, edited_id: int):
    client = Client()
    client.force_login(user)
    if change == "default":
        return client.post(f"/user/addresses/{other_id}/default")
    return client.post(f"/user/addresses/{edited_id}/delete")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("door", ["page", "api"])
@pytest.mark.parametrize("change", ["default", "delete"])
def test_an_edit_racing_another_change_neither_fails_nor_brings_a_row_back(monkeypatch, door, change):
    """The edit reads the address, then another request makes another address the default or
    deletes this one and commits, then the edit goes on: it must not write what it read."""
    me = make_user()
    edited = make_address(me)  # the default
    other = make_address(me, city="上海市")
    read, changed = threading.Event(), threading.Event()
    lookup = selectors.address_of_user

    def held_lookup(**kwargs):
        found = lookup(**kwargs)
        if threading.current_thread().name == "editor":
            read.set()
            assert changed.wait(20)
        return found

    monkeypatch.setattr(selectors, "address_of_user", held_lookup)
    answers = {}

    def edit() -> None:
        try:
            answers["edit"] = _edit(door, me, edited.pk).status_code
        except Exception as error:  # a 500 raised through the test client
            answers["edit"] = repr(error)
        finally:
            connection.close()

    editor = threading.Thread(target=edit, name="editor")
    editor.start()
    assert read.wait(20)
    answers["change"] = _meanwhile(change, me, other.pk, edited.pk).status_code
    changed.set()
    editor.join(30)

    assert answers["change"] == 302
    if change == "default":
        assert answers["edit"] in (200, 302)
        assert defaults(me) == [other.pk]
        assert Address.objects.get(pk=edited.pk).street == "改过的地址 9 号"
    else:
        assert answers["edit"] == 404
        assert not Address.objects.filter(pk=edited.pk).exists()
        assert defaults(me) == [other.pk]
