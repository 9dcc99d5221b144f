"""The admin names the app after what it holds for a merchant, not after one of its models: its
breadcrumb never reads "Waiting rooms › Waiting rooms", in either language."""

import pytest

from testutils.factories.users import make_merchant

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("language", "app", "model"),
    [("en", "Sale openings", "Waiting rooms"), ("zh-hans", "开场管理", "排队室")],
)
def test_the_rooms_breadcrumb_names_the_app_apart_from_its_model(client, language, app, model):
    client.force_login(make_merchant(nickname="A"))
    client.cookies["django_language"] = language
    index = client.get("/admin/").content.decode()
    assert app in index
    page = client.get("/admin/waitingroom/waitingroom/").content.decode()
    crumbs = page.split('<div class="breadcrumbs">', 1)[1].split("</div>", 1)[0]
    assert f'/admin/waitingroom/">{app}</a>' in crumbs
    assert crumbs.count(model) == 1
