"""Imports point down (tools/layout.py names the layers), and a sale's Redis state has one owner."""

import ast
from pathlib import Path

from tools import layout

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


def _project_modules():
    """The shop's own code: the apps and the site, without tests and migrations."""
    for top in ("users", "goods", "orders", "seckill", "seckill_site"):
        for path in (ROOT / top).rglob("*.py"):
            if "tests" not in path.parts and "migrations" not in path.parts:
                yield path
    yield ROOT / "celery_app.py"


def test_only_the_sale_state_module_names_a_sales_keys_or_runs_its_scripts():
    """A sale's Redis state has one owner (seckill_site.sale_state): everything else calls its
    transitions, so no two writers can race through a seam of their own."""
    owner = ROOT / "seckill_site" / "sale_state"
    sale_scripts = {path.stem for path in (owner / "lua").glob("*.lua")}
    sale_keys = {
        node.name for node in ast.parse((owner / "keys.py").read_text()).body if isinstance(node, ast.FunctionDef)
    }
    offenders = {}
    for path in _project_modules():
        if owner in path.parents:
            continue
        found = []
        tree = ast.parse(path.read_text(), str(path))
        prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # docstrings
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                named = {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
                if "seckill_site.sale_state.keys" in named:
                    found.append("imports the sale's key names")
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "script" and node.args:
                if isinstance(node.args[0], ast.Constant) and node.args[0].value in sale_scripts:
                    found.append(f"runs {node.args[0].value}.lua")
            elif isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "keys":
                if node.attr in sale_keys:
                    found.append(f"builds keys.{node.attr}()")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "sk:{" in node.value:
                if id(node) in prose:
                    continue
                found.append(f"names a sale key: {node.value!r}")
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}


def test_the_goods_pages_import_neither_orders_nor_seckill():
    """The item page needs the shopper's order state, which orders and seckill know, so its
    view lives in seckill (issue 24); goods' pages and reads stay below both."""
    modules = ["views.py", "selectors.py", "urls.py", "apis.py", "serializers.py"]
    offenders = {
        name: sorted(i for i in _imports(ROOT / "goods" / name) if i.split(".")[0] in ("orders", "seckill"))
        for name in modules
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def _in_shop(found: layout.Import) -> bool:
    """The apps, the site and celery_app; the harness (tools, bench) is reported, not held."""
    return layout.LAYERS[found.source.split(".")[0]] <= layout.LAYERS["seckill"]


def _named(imports: list[layout.Import]) -> list[str]:
    return [f"{i.source}:{i.line} -> {i.target}" for i in imports if _in_shop(i)]


def test_the_shops_imports_point_down():
    """seckill_site imports no app, and users < goods < orders < seckill (tools/layout.py)."""
    assert _named(layout.read().upward()) == []


def test_no_app_imports_a_siblings_admin_or_private_names():
    assert _named(layout.read().private()) == []


def test_no_import_circles():
    assert layout.read().circles() == []


def test_an_import_inside_a_function_says_why_on_its_line():
    """An in-function import hides a dependency from the reader: each one carries its reason."""
    assert _named([i for i in layout.read().in_function() if not i.reason]) == []
