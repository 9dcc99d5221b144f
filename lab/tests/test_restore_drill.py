"""lab.restore_drill's pure parts: the pgBackRest configuration it renders from deploy/pgbackrest.conf,
and its comparison of the restored orders with the original's. `make restore-drill` is the proof of
the rest: it needs PostgreSQL 15 and pgBackRest, and takes seconds."""

import pytest

from lab.restore_drill.postgres import STANZA, TEMPLATE, config_render
from lab.restore_drill.verdict import ids_compare

TEMPLATE_TEXT = """# a comment naming repo1-path=/nowhere
[global]
repo1-path=/var/lib/pgbackrest
# the next one stays
start-fast=y

# the stanza's comment
[main]
pg1-path=/var/lib/postgresql/15/main
"""


def test_overrides_replace_values_where_they_stand_and_keep_everything_else():
    overrides = {"global": {"repo1-path": "/drill/repo"}, "main": {"pg1-path": "/drill/pg"}}
    wanted = TEMPLATE_TEXT.replace("/var/lib/pgbackrest", "/drill/repo")
    wanted = wanted.replace("/var/lib/postgresql/15/main", "/drill/pg")
    assert config_render(TEMPLATE_TEXT, overrides) == wanted  # the comment naming repo1-path stays as written


def test_a_missing_key_is_added_after_its_sections_last_setting():
    rendered = config_render(TEMPLATE_TEXT, {"global": {"lock-path": "/drill/lock"}, "main": {"pg1-port": "15499"}})
    lines = rendered.splitlines()
    assert lines[lines.index("start-fast=y") + 1] == "lock-path=/drill/lock"  # before the stanza's comment
    assert lines[-1] == "pg1-port=15499"


def test_a_section_the_template_lacks_is_refused():
    with pytest.raises(ValueError, match=r"\[other\]"):
        config_render(TEMPLATE_TEXT, {"other": {"pg1-path": "/x"}})


def test_the_deploy_template_renders_with_the_drills_paths():
    rendered = config_render(TEMPLATE.read_text(), {"global": {"repo1-path": "/r"}, STANZA: {"pg1-path": "/d"}})
    settings = [line for line in rendered.splitlines() if line and not line.startswith("#")]
    assert "repo1-path=/r" in settings and "pg1-path=/d" in settings
    assert "compress-type=zst" in settings and "start-fast=y" in settings  # the template's own, kept


def test_a_restore_to_the_target_holds_exactly_the_orders_before_it():
    assert ids_compare(before=[1, 2, 3], after=[4, 5], restored=[1, 2, 3]).ok
    short = ids_compare(before=[1, 2, 3], after=[4, 5], restored=[1, 2])
    assert (short.found, short.missing, short.extra, short.ok) == (2, [3], [], False)
    late = ids_compare(before=[1, 2, 3], after=[4, 5], restored=[1, 2, 3, 4])
    assert (late.found, late.extra, late.after_present, late.ok) == (3, [4], 1, False)
