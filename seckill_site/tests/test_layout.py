"""Imports point down: orders builds on goods, so nothing in goods may import orders."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_goods_does_not_import_orders():
    offenders = {
        str(path.relative_to(ROOT)): sorted(name for name in _imports(path) if name.split(".")[0] == "orders")
        for path in (ROOT / "goods").rglob("*.py")
        if "tests" not in path.parts and "migrations" not in path.parts
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_goods_pages_import_neither_orders_nor_seckill():
    """The item page needs the shopper's order state, which orders and seckill know, so its
    view lives in seckill (issue 24); goods' pages and reads stay below both."""
    modules = ["views.py", "selectors.py", "urls.py", "apis.py", "serializers.py"]
    offenders = {
        name: sorted(i for i in _imports(ROOT / "goods" / name) if i.split(".")[0] in ("orders", "seckill"))
        for name in modules
    }
    assert {name: found for name, found in offenders.items() if found} == {}
