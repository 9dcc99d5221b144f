"""A sale's Redis state has one owner (tools/layout.py). The layers, the circles and the harness
are import-linter's contracts (pyproject.toml), checked by `lint-imports` in make test."""

from pathlib import Path

from tools import layout


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
