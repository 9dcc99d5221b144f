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
