"""A sale's Redis state has one owner, the site core names no app's keys, scripts or codes
(tools/layout.py), and tests borrow only from testutils (tools/tests_borrowing.py). The layers,
the circles and the harness are import-linter's contracts (pyproject.toml), checked by
`lint-imports` in make test."""

import tomllib
from pathlib import Path

from tools import layout, tests_borrowing

ROOT = Path(__file__).resolve().parents[2]


def test_only_the_sale_state_module_names_a_sales_keys_or_runs_its_scripts():
    """A sale's Redis state has one owner (sales.sale_state): everything else calls its
    transitions, so no two writers can race through a seam of their own."""
    assert layout.sale_state_offenders() == {}


def test_the_check_finds_each_way_a_module_can_reach_a_sales_state(tmp_path: Path):
    """Against a tree of its own: a module that imports the key names, builds a key, spells one
    out or runs a sale's script is named, and a docstring that quotes a key is not."""
    owner = tmp_path / "sales" / "sale_state"
    (owner / "lua").mkdir(parents=True)
    (owner / "lua" / "reserve.lua").write_text("return 1\n")
    (owner / "keys.py").write_text('def stock(sale_id):\n    return f"sk:{{{sale_id}}}:stock"\n')
    (tmp_path / "sales").mkdir(exist_ok=True)
    (tmp_path / "sales" / "services.py").write_text(
        '"""Quotes sk:{1}:stock in prose."""\n'
        "from sales.sale_state import keys\n"
        "from seckill_site.redis import script\n"
        "def f():\n"
        '    script("reserve")\n'
        "    keys.stock(1)\n"
        '    return "sk:{1}:buyers"\n'
    )
    (tmp_path / "sales" / "selectors.py").write_text('"""Only sk:{1}:stock in prose."""\n')
    found = layout.sale_state_offenders(tmp_path)
    assert found.keys() == {"sales/services.py"}
    assert sorted(found["sales/services.py"]) == [
        "builds keys.stock()",
        "imports the sale's key names",
        "names a sale key: 'sk:{1}:buyers'",
        "runs reserve.lua",
    ]


def test_the_core_names_no_apps_keys_scripts_or_codes():
    """seckill_site wires the apps and holds the mechanisms; each app owns its Redis keys, its
    Lua scripts and its envelope codes, so the core changes with no app."""
    assert layout.core_offenders() == {}


def test_the_check_finds_each_way_the_core_can_name_an_apps_things(tmp_path: Path):
    """Against a tree of its own: the core defining an app's code or a key of an app's, spelling
    an app's key, running an app's script or holding one, and a registry whose names read as an
    app's are named; the wiring (settings), the tests and a generic lock's script are not."""
    verification = tmp_path / "users" / "verification"
    (verification / "lua").mkdir(parents=True)
    (verification / "lua" / "sms_send.lua").write_text("return 1\n")
    (verification / "keys.py").write_text(
        "from seckill_site.redis.keys import PREFIX\n"
        "SMS_CODE_TTL = 300\n"
        "def sms_code(mobile):\n"
        '    return f"{PREFIX}sms:{{{mobile}}}:code"\n'
    )
    (tmp_path / "goods").mkdir()
    (tmp_path / "goods" / "codes.py").write_text(
        "class SaleCode(EnvelopeCode):\n    SOLD_OUT = (500500, 'sold out', 200)\n"
    )
    core = tmp_path / "seckill_site"
    for folder in ("redis/lua", "settings", "tests"):
        (core / folder).mkdir(parents=True)
    (core / "redis" / "lua" / "unlock.lua").write_text("return 1\n")
    (core / "redis" / "lua" / "sms_check.lua").write_text("return 1\n")
    (core / "redis" / "keys.py").write_text(
        '"""Quotes sms:{1}:code in prose."""\nPREFIX = ""\nCAPTCHA_POOL_TTL = 3600\n'
        'def sms_day(mobile):\n    return f"{PREFIX}sms:{{{mobile}}}:day"\n'
    )
    (core / "codes.py").write_text("class Code(EnvelopeCode):\n    SUCCESS = (0, 'success', 200)\n    SOLD_OUT = 1\n")
    (core / "http.py").write_text("def f():\n    script('sms_send')\n    return Code.SOLD_OUT\n")
    (core / "settings" / "base.py").write_text('KEY = "sms:x"\n')
    (core / "tests" / "test_x.py").write_text('KEY = "sms:x"\n')
    found = layout.core_offenders(tmp_path)
    assert found == {
        "seckill_site/codes.py": ["defines SOLD_OUT, goods's", "defines SOLD_OUT, an app's name"],
        "seckill_site/http.py": ["runs users's sms_send.lua", "names goods's SOLD_OUT"],
        "seckill_site/redis/keys.py": [
            "names an app's key: 'sms:{'",
            "defines CAPTCHA_POOL_TTL, an app's name",
            "defines sms_day, an app's name",
        ],
        "seckill_site/redis/lua/sms_check.lua": ["is an app's script, not the core's"],
    }


def test_no_test_module_imports_another_test_module():
    """What tests share is in testutils/: a test module's helpers change with its tests and are
    collected with them, so another app's tests must not build on them."""
    assert tests_borrowing.borrowers() == {}


def test_the_check_finds_each_way_a_test_module_can_borrow_from_another(tmp_path: Path):
    """Against a tree of its own: imports from a tests package, from a test module, of a
    conftest, relative ones and from the browser tests are named; testutils, the shop and
    another module's tests collected again are not."""
    tests = tmp_path / "users" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_a.py").write_text(
        "from users.tests.factories import make_user\n"
        "from users.tests import helpers\n"
        "import orders.tests.test_b\n"
        "from conftest import ROOT\n"
        "from .test_c import thing\n"
        "from e2e.conftest import poll\n"
    )
    (tests / "test_fine.py").write_text(
        "from testutils.factories.users import make_user\n"
        "from users.models import User\n"
        "from users.tests.test_a import test_one, test_two  # collected again\n"
    )
    (tmp_path / "e2e").mkdir()
    (tmp_path / "e2e" / "test_pages.py").write_text("from e2e.test_flows import log_in\n")
    (tmp_path / "users" / "services.py").write_text("from users.tests.factories import make_user\n")  # not a test
    assert tests_borrowing.borrowers(tmp_path) == {
        "e2e/test_pages.py": ["e2e.test_flows"],
        "users/tests/test_a.py": [
            "users.tests.factories",
            "users.tests",
            "orders.tests.test_b",
            "conftest",
            ".test_c",
            "e2e.conftest",
        ],
    }


def test_every_package_with_tests_is_collected_by_a_bare_run():
    """make test and CI run a bare `pytest`, which collects only pyproject's testpaths: an app
    added or moved without its name there would have its tests silently skipped."""
    testpaths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["testpaths"]
    tested = {path.relative_to(ROOT).parts[0] for path in ROOT.glob("*/**/tests/__init__.py")}
    tested |= {path.relative_to(ROOT).parts[0] for path in ROOT.glob("*/test_*.py")}
    assert tested - {".venv", ".run"} <= set(testpaths)
