"""tools/edge.py's files for deploy/edge.vcl: the backend and the purgers' ACL it includes."""

import pytest

from tools.edge import _purgers_vcl, edge_files


def test_purgers_become_an_acl_of_addresses_and_networks():
    assert _purgers_vcl(["10.231.0.2", "10.0.1.0/24", "::1"]) == (
        'acl purgers {\n    "10.231.0.2";\n    "10.0.1.0"/24;\n    "::1";\n}\n'
    )


@pytest.mark.parametrize("purgers", [[], ["edge1"], ["10.0.1.5/24"], ['10.0.0.1"; "0.0.0.0"/0']])
def test_no_purger_a_name_or_a_network_with_host_bits_is_refused(purgers):
    with pytest.raises(ValueError):
        _purgers_vcl(purgers)


def test_without_purgers_deploys_localhost_applies_again(tmp_path):
    edge_files(tmp_path, "10.231.0.50:18000", purgers=["10.231.0.2"])
    assert '"10.231.0.2";' in (tmp_path / "edge-purgers.vcl").read_text()
    assert '.host = "10.231.0.50";' in (tmp_path / "edge-backend.vcl").read_text()
    edge_files(tmp_path, "127.0.0.1:8000")
    assert not (tmp_path / "edge-purgers.vcl").exists()


def test_the_answers_files_come_from_a_deployments_settings_and_go_without_them(tmp_path):
    import os
    import stat

    from seckill.tickets import ticket_key

    key = "a-deployment-key-" + "q" * 40
    edge_files(tmp_path, "127.0.0.1:8000", answers=dict(os.environ, SECRET_KEY=key))
    secrets = tmp_path / "edge-secrets.vcl"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert f'"{ticket_key(key)}"' in secrets.read_text() and key not in secrets.read_text()
    assert "new answers_redis = redis.db(" in (tmp_path / "edge-answers-config.vcl").read_text()
    edge_files(tmp_path, "127.0.0.1:8000")
    assert not secrets.exists() and not (tmp_path / "edge-answers-config.vcl").exists()


def test_the_edge_refuses_with_the_public_refusals_and_no_other():
    """deploy/edge-answers.vcl reads the refusal from Redis and answers it with
    answers_refusal, which tools/edge_answers.py writes for sale_state.PUBLIC_REFUSALS: both
    name the same ones, so no refusal the shop gives is one the edge passes or answers alone."""
    import re

    from sales.sale_state import PUBLIC_REFUSALS
    from tools.edge import ROOT
    from tools.edge_answers import _refusals_vcl

    vcl = (ROOT / "deploy" / "edge-answers.vcl").read_text()
    named = {frozenset(names.split("|")) for names in re.findall(r'"\^\(([A-Z_|]+)\)\$"', vcl)}
    assert named == {frozenset(refusal.name for refusal in PUBLIC_REFUSALS)}
    written = set(re.findall(r'var.get\("answers-refusal"\) == "([A-Z_]+)"', "\n".join(_refusals_vcl())))
    assert written == {refusal.name for refusal in PUBLIC_REFUSALS}


def test_the_pass_key_and_the_first_fallbacks_are_the_edges_secret_and_nothing_else(settings):
    from tools.edge_answers import secrets_vcl
    from waitingroom.passes import pass_key

    settings.SECRET_KEY_FALLBACKS = ["an-old-key-" + "o" * 40, "an-older-key-" + "p" * 40]
    written = secrets_vcl()
    assert f'var.set("pass-key", "{pass_key()}");' in written
    assert f'var.set("pass-key-old", "{pass_key(settings.SECRET_KEY_FALLBACKS[0])}");' in written
    assert pass_key(settings.SECRET_KEY_FALLBACKS[1]) not in written
    assert not any(secret in written for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS])


def test_the_edge_reads_the_cookies_and_keys_the_shop_writes():
    """deploy/edge-pass.vcl names the pass's cookie and the session's in its patterns, where a
    setting cannot reach; the rooms' keys it is given are the room's own."""
    import re

    from django.conf import settings

    from tools.edge import ROOT
    from tools.edge_answers import _SALE, _pass_vcl
    from waitingroom import keys
    from waitingroom.passes import COOKIE_PREFIX

    vcl = (ROOT / "deploy" / "edge-pass.vcl").read_text()
    assert re.findall(r"\\s\*([a-z_]+)\\1=", vcl) == [COOKIE_PREFIX]
    assert set(re.findall(r"\\s\*([a-z_]+)=", vcl)) == {settings.SESSION_COOKIE_NAME}
    config = "\n".join(_pass_vcl("master"))
    before, after = re.search(
        r'"pass-room-before", "([^"]+)"\);\s+var.set\("pass-room-after", "([^"]+)"', config
    ).groups()
    assert before + "42" + after == keys.room(42)
    assert f'"pass-shop-key", "{keys.shop()}"' in config
    assert str(_SALE) not in config


def test_the_waiting_rooms_answer_is_the_shops_envelope_in_each_language():
    import json
    import re

    from django.conf import settings

    from tools.edge_answers import _pass_vcl, waiting_code

    config = "\n".join(_pass_vcl("master"))
    for language, _name in settings.LANGUAGES:
        block = config.split(f'var.get("pass-language") == "{language}"', 1)[1].split("    }", 1)[0]
        parts = dict(re.findall(r'var.set\("pass-([a-z-]+)", (.+)\);', block))
        text = {name: _vcl_strings(value) for name, value in parts.items()}
        body = json.loads(text["body-before"] + "42" + text["body-after"])
        prefix = "" if language == settings.LANGUAGE_CODE else f"/{language}"
        assert text["url"] == f"{prefix}/waiting-room/"
        assert body["code"] == waiting_code().code and body["data"]["waitingRoomUrl"] == f"{prefix}/waiting-room/42"


def _vcl_strings(value: str) -> str:
    """The text of VCL strings joined with `+` ("…" and {"…"})."""
    import re

    return "".join(long if long or not plain else plain for long, plain in re.findall(r'\{"(.*?)"\}|"([^"]*)"', value))
