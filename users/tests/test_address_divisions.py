"""The address's province, city and district: chosen from China's divisions (users.divisions),
checked together on the page and in the API whatever a client sends; addresses saved before
still show. The valid triples are read from the data file here, not from users.divisions, so
the checks are measured against the table itself."""

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testutils.factories.users import make_user
from users import divisions
from users.models import Address

pytestmark = pytest.mark.django_db

PERSON = {"recipient": "张三", "phone": "13712345678", "street": "文三路 100 号", "postcode": ""}
TABLE = json.loads(divisions.DATA.read_text(encoding="utf-8"))["provinces"]
VALID = {
    (province, city, district)
    for province, _code, cities in TABLE
    for city, _c, districts in (cities or [["", "", []]])
    for district in ([name for name, _d in districts] or [""])
}
PROVINCES = [p for p, _c, _cities in TABLE]
CITIES = sorted({city for _p, _c, cities in TABLE for city, _cc, _d in cities})
DISTRICTS = sorted({d for _p, _c, cities in TABLE for _city, _cc, ds in cities for d, _dc in ds})
ODD = ["", " ", "x" * 33, "北京", "Beijing", "浙江省 ", "杭州市\x00", "<b>市</b>", "朝阳区" * 11]
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def where(region, city, district):
    return {"region": region, "city": city, "district": district}


# --- the table ----------------------------------------------------------------------------------


def test_the_table_has_every_province_with_its_shape():
    assert len(PROVINCES) == 34 and {"香港特别行政区", "澳门特别行政区", "台湾省"} <= set(PROVINCES)
    for municipality in ("北京市", "天津市", "上海市", "重庆市"):
        assert divisions.cities(municipality) == (municipality,)  # its own one city
        assert "朝阳区" in divisions.districts("北京市", "北京市")
    assert divisions.cities("香港特别行政区") == () and divisions.cities("台湾省") == ()
    assert "仙桃市" in divisions.cities("湖北省") and divisions.districts("湖北省", "仙桃市") == ()
    assert divisions.districts("广东省", "东莞市") == ()
    # The same district name in two cities is two divisions.
    assert "朝阳区" in divisions.districts("吉林省", "长春市")


@pytest.mark.parametrize(
    "choice, field",
    [
        (where("浙江省", "杭州市", "西湖区"), None),
        (where("北京市", "北京市", "朝阳区"), None),
        (where("湖北省", "仙桃市", ""), None),
        (where("香港特别行政区", "", ""), None),
        (where("台湾省", "", ""), None),
        (where("浙江省", "杭州市", ""), "district"),  # the city has districts: one is needed
        (where("浙江省", "杭州市", "朝阳区"), "district"),  # another city's
        (where("浙江省", "北京市", "朝阳区"), "city"),  # another province's
        (where("北京市", "", "朝阳区"), "city"),
        (where("湖北省", "仙桃市", "西湖区"), "district"),  # a city without districts
        (where("香港特别行政区", "中西区", ""), "city"),  # the table names none: none are made up
        (where("Zhejiang", "杭州市", "西湖区"), "region"),
        (where("", "", ""), "region"),
    ],
)
def test_a_choice_is_a_division_of_the_table(choice, field):
    problems = divisions.division_errors(**choice)
    assert list(problems) == ([field] if field else [])


def test_the_place_line_says_a_municipality_once():
    assert divisions.place_line(region="北京市", city="北京市", district="朝阳区") == "北京市 朝阳区"
    assert divisions.place_line(region="浙江省", city="杭州市", district="") == "浙江省 杭州市"


# --- the page -------------------------------------------------------------------------------------


def test_the_page_saves_names_and_refuses_a_mix_with_a_clear_error(client):
    me = make_user()
    client.force_login(me)
    saved = client.post("/user/addresses", {**PERSON, **where("北京市", "北京市", "朝阳区")})
    assert saved.status_code == 302
    home = Address.objects.get(user=me)
    assert (home.region, home.city, home.district) == ("北京市", "北京市", "朝阳区")
    assert "北京市 朝阳区 文三路 100 号" in client.get("/user/addresses").content.decode()

    refused = client.post("/user/addresses", {**PERSON, **where("浙江省", "杭州市", "朝阳区")})
    assert refused.status_code == 400 and Address.objects.filter(user=me).count() == 1
    assert "Choose a district of 杭州市 from the list." in refused.content.decode()
    # The page offers the names of what was chosen, so the shopper corrects one field.
    assert '<option value="西湖区">西湖区</option>' in refused.content.decode()


def test_without_the_script_the_show_button_narrows_the_choices_and_saves_nothing(client):
    me = make_user()
    client.force_login(me)
    page = client.get("/user/addresses").content.decode()
    assert 'name="divisions_show"' in page and '<option value="西湖区">' not in page
    shown = client.post("/user/addresses", {**PERSON, "region": "浙江省", "divisions_show": "1"})
    assert shown.status_code == 200 and not Address.objects.filter(user=me).exists()
    assert '<option value="杭州市">' in shown.content.decode() and "field-error" not in shown.content.decode()
    shown = client.post("/user/addresses", {**PERSON, **where("浙江省", "杭州市", ""), "divisions_show": "1"})
    assert '<option value="西湖区">' in shown.content.decode()
    # A municipality's one city is chosen already, its districts offered.
    shown = client.post("/user/addresses", {**PERSON, "region": "上海市", "divisions_show": "1"})
    assert '<option value="上海市" selected>' in shown.content.decode()
    assert '<option value="黄浦区">' in shown.content.decode()


def test_the_divisions_are_served_to_the_script_cacheable():
    from django.test import Client

    response = Client().get("/user/divisions")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert "public" in response["Cache-Control"] and response["ETag"]
    assert json.loads(response.content)["provinces"] == TABLE
    again = Client().get("/user/divisions", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304


def test_an_address_saved_before_districts_still_shows_and_is_asked_for_them_when_edited(client):
    me = make_user()
    client.force_login(me)
    old = Address.objects.create(
        user=me,
        recipient="李四",
        phone="13712345678",
        region="Zhejiang",
        city="Hangzhou",
        street="1 Road",
        is_default=True,
    )
    assert "Zhejiang Hangzhou 1 Road" in client.get("/user/addresses").content.decode()
    edit = client.get(f"/user/addresses/{old.pk}")
    assert edit.status_code == 200 and 'value="Zhejiang"' not in edit.content.decode()
    assert "Saved as “Zhejiang Hangzhou”: choose its province, city and district" in edit.content.decode()
    response = client.post(f"/user/addresses/{old.pk}", {**PERSON, "region": "Zhejiang", "city": "Hangzhou"})
    assert response.status_code == 400 and "Choose a province from the list." in response.content.decode()
    old.refresh_from_db()
    assert (old.region, old.district, old.street) == ("Zhejiang", "", "1 Road")


# --- fuzzed combinations, on the page and in the API --------------------------------------------

names = st.one_of(st.sampled_from(ODD), st.text(max_size=40))
mixes = st.tuples(
    st.one_of(st.sampled_from(PROVINCES), names),
    st.one_of(st.sampled_from(CITIES), names),
    st.one_of(st.sampled_from(DISTRICTS), names),
)
# Mostly valid triples with one level swapped, the combinations a wrong or stale client sends.
swaps = st.tuples(st.sampled_from(sorted(VALID)), st.integers(0, 2), st.sampled_from(DISTRICTS + CITIES + PROVINCES))


def _as_sent(triple):
    """The triple as the form sees it once trimmed; NULs and overlong names are refused anyway."""
    return tuple(value.strip() for value in triple)


def _check(client, me, triple, *, api):
    before = list(Address.objects.filter(user=me).values_list("pk", "updated_at"))
    body = {**PERSON, **where(*triple)}
    if api:
        response = client.post("/api/v1/users/addresses", body, content_type="application/json")
    else:
        response = client.post("/user/addresses", body)
    valid = _as_sent(triple) in VALID and all(len(v) <= 32 and "\x00" not in v for v in triple)
    if valid:
        assert response.status_code in (201, 302), (triple, response.content[:300])
        Address.objects.filter(user=me).delete()  # the book's cap stays out of the way
        return
    assert 400 <= response.status_code < 500, (triple, response.status_code)
    assert list(Address.objects.filter(user=me).values_list("pk", "updated_at")) == before
    if api:
        assert response.json()["code"] != 0 and response.json()["msg"]


@pytest.mark.slow
@FUZZ
@given(mix=st.one_of(mixes, swaps.map(lambda s: tuple(s[2] if i == s[1] else v for i, v in enumerate(s[0])))))
def test_fuzzed_mixes_are_refused_with_a_4xx_and_change_nothing(client, mix):
    me = make_user()
    client.force_login(me)
    for api in (False, True):
        _check(client, me, mix, api=api)


def test_every_kind_of_bad_triple_is_refused_in_the_api(client):
    me = make_user()
    client.force_login(me)
    bad = list(itertools.product(["浙江省", "", "x" * 33], ["杭州市", "长春市", ""], ["西湖区", "朝阳区", "x" * 33]))
    for triple in bad:
        if triple == ("浙江省", "杭州市", "西湖区"):
            continue
        _check(client, me, triple, api=True)
    for body in ({"district": 1}, {"district": None}, {"city": ["杭州市"]}, {"region": {"name": "浙江省"}}):
        response = client.post(
            "/api/v1/users/addresses",
            {**PERSON, **where("浙江省", "杭州市", "西湖区"), **body},
            content_type="application/json",
        )
        assert response.status_code == 400 and not Address.objects.filter(user=me).exists()


def test_the_api_edits_the_division_and_refuses_a_partial_mix(client):
    me = make_user()
    client.force_login(me)
    created = client.post(
        "/api/v1/users/addresses", {**PERSON, **where("浙江省", "杭州市", "西湖区")}, content_type="application/json"
    )
    assert created.status_code == 201 and created.json()["data"]["district"] == "西湖区"
    pk = created.json()["data"]["id"]
    # Changing the city alone leaves the district of the old one: refused, nothing written.
    refused = client.patch(f"/api/v1/users/addresses/{pk}", {"city": "宁波市"}, content_type="application/json")
    assert refused.status_code == 400 and "宁波市" in refused.json()["msg"] + json.dumps(refused.json()["data"])
    assert Address.objects.get(pk=pk).city == "杭州市"
    changed = client.patch(
        f"/api/v1/users/addresses/{pk}", where("香港特别行政区", "", ""), content_type="application/json"
    )
    assert changed.status_code == 200 and changed.json()["data"]["city"] == ""
    assert (Address.objects.get(pk=pk).region, Address.objects.get(pk=pk).district) == ("香港特别行政区", "")
