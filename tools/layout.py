"""A sale's Redis state has one owner: who else names its keys or runs its scripts (ast).

    python -m tools.layout     # every offender, file and what it does; exits 1 if there is one

sales/sale_state owns a sale's keys (sale_state/keys.py) and Lua scripts (sale_state/lua/);
the rest of the shop calls its transitions, so no two writers can race through a seam of their
own. This is the one layout rule import-linter cannot state: it sees modules, not key strings.
The layers, the circles and the harness are its contracts in pyproject.toml (`lint-imports`).
seckill_site/tests/test_layout.py holds the shop to this.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOP = ("users", "goods", "sales", "orders", "seckill", "seckill_site")
OWNER = Path("sales", "sale_state")
KEYS_MODULE = "sales.sale_state.keys"
SALE_KEY = "sk:{"  # the hash-tagged prefix of every key of a sale


def shop_files(root: Path) -> Iterator[Path]:
    """The shop's own code (the apps, the site, celery_app), without tests and migrations."""
    for top in SHOP:
        for path in sorted((root / top).rglob("*.py")):
            if "tests" not in path.parts and "migrations" not in path.parts:
                yield path
    if (root / "celery_app.py").exists():
        yield root / "celery_app.py"


def offenses(path: Path, sale_keys: set[str], sale_scripts: set[str]) -> list[str]:
    """What one module does that only the owner may: import the key names, build a key, run a script."""
    tree = ast.parse(path.read_text(), str(path))
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # docstrings
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if KEYS_MODULE in {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}:
                found.append("imports the sale's key names")
        elif isinstance(node, ast.Import):
            if any(alias.name == KEYS_MODULE for alias in node.names):
                found.append("imports the sale's key names")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "script" and node.args:
            if isinstance(node.args[0], ast.Constant) and node.args[0].value in sale_scripts:
                found.append(f"runs {node.args[0].value}.lua")
        elif isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "keys":
            if node.attr in sale_keys:
                found.append(f"builds keys.{node.attr}()")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SALE_KEY in node.value:
            if id(node) not in prose:
                found.append(f"names a sale key: {node.value!r}")
    return found


def sale_state_offenders(root: Path = ROOT) -> dict[str, list[str]]:
    """{file relative to root: what it does} for every module outside the owner that names a
    sale's keys or runs its scripts; empty when the owner is the only one."""
    owner = root / OWNER
    sale_scripts = {path.stem for path in (owner / "lua").glob("*.lua")}
    keys_source = (owner / "keys.py").read_text()
    sale_keys = {node.name for node in ast.parse(keys_source).body if isinstance(node, ast.FunctionDef)}
    found = {}
    for path in shop_files(root):
        if owner not in path.parents:
            if what := offenses(path, sale_keys, sale_scripts):
                found[str(path.relative_to(root))] = what
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="another checkout of the shop")
    args = parser.parse_args(argv)
    found = sale_state_offenders(args.root.resolve())
    for path, what in found.items():
        for one in what:
            print(f"{path}: {one}")
    print(f"modules outside {OWNER} that name a sale's keys or run its scripts: {len(found)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
