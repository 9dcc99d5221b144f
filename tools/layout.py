"""Who owns what in Redis and in the envelope: the layout rules import-linter cannot state,
since it sees modules, not key strings (ast).

    python -m tools.layout     # every offender, file and what it does; exits 1 if there is one

A sale's Redis state has one owner: sales/sale_state owns a sale's keys (sale_state/keys.py)
and Lua scripts (sale_state/lua/); the rest of the shop calls its transitions, so no two writers
can race through a seam of their own.

The site core (seckill_site/) holds what no app owns: it names no app's Redis keys, Lua scripts
or envelope codes, which each app keeps in its own modules (`keys.py`, `cache_keys.py`,
`codes.py`, `lua/`). Only its wiring (settings, URLconfs, WSGI/ASGI) and its tests name apps.

The layers, the circles and the harness are import-linter's contracts in pyproject.toml
(`lint-imports`). seckill_site/tests/test_layout.py holds the shop to this.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOP = ("users", "goods", "sales", "orders", "seckill", "waitingroom", "seckill_site")
OWNER = Path("sales", "sale_state")
KEYS_MODULE = "sales.sale_state.keys"
SALE_KEY = "sk:{"  # the hash-tagged prefix of every key of a sale

CORE = Path("seckill_site")
APPS = ("users", "goods", "sales", "orders", "seckill", "waitingroom")
# The core's modules that wire the apps together: they may name them (and its tests).
CORE_WIRING = ("settings", "urls.py", "api_urls.py", "wsgi.py", "asgi.py", "tests")
# The modules in which an app names its Redis keys and its envelope codes.
APP_NAMING = ("keys.py", "cache_keys.py", "codes.py")
# The core's own Lua: app-independent mechanisms only (a lock's compare-and-delete release).
CORE_SCRIPTS = {"unlock"}
# The core's registries of keys and codes, and the words an app's keys and codes are named by.
CORE_REGISTRIES = (Path("seckill_site", "redis", "keys.py"), Path("seckill_site", "codes.py"))
APP_WORDS = ("sms", "sale", "draw", "goods", "captcha", "order", "login", "address", "payment", "reminder")
APP_WORDS += ("registration", "auth", "token", "sold", "bought", "entr", "path")


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


def _defined(tree: ast.Module) -> Iterator[str]:
    """The public names a module defines: its functions, constants and classes' members."""
    for node in tree.body:
        body = node.body if isinstance(node, ast.ClassDef) else [node]
        for statement in body:
            if isinstance(statement, ast.FunctionDef):
                yield statement.name
            elif isinstance(statement, ast.Assign):
                yield from (target.id for target in statement.targets if isinstance(target, ast.Name))
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                yield statement.target.id


def _key_heads(tree: ast.Module) -> Iterator[str]:
    """The first segment ("sms:") of every key a keys module builds, after its PREFIX."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.JoinedStr | ast.Constant):
            parts = node.value.values if isinstance(node.value, ast.JoinedStr) else [node.value]
            if parts and isinstance(parts[0], ast.FormattedValue) and getattr(parts[0].value, "id", None) == "PREFIX":
                parts = parts[1:]
            text = parts[0].value if parts and isinstance(parts[0], ast.Constant) else None
            if isinstance(text, str) and text.find(":") > 0:
                yield text[: text.index(":") + 1]


def app_owned(root: Path = ROOT) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """({name: its app} of every key and code the apps name, {Lua script: its app}, the heads
    of their keys), read from the apps' key and code modules and lua/ folders."""
    names, scripts, heads = {}, {}, set()
    for app in APPS:
        for path in sorted((root / app).rglob("*")):
            if "tests" in path.relative_to(root).parts:
                continue
            if path.suffix == ".lua" and path.parent.name == "lua":
                scripts[path.stem] = app
            elif path.name in APP_NAMING:
                tree = ast.parse(path.read_text(), str(path))
                names.update((name, app) for name in _defined(tree) if not name.startswith("_"))
                if path.name != "codes.py":
                    heads.update(_key_heads(tree))
    return names, scripts, heads


def core_files(root: Path) -> Iterator[Path]:
    """The core's modules, without its wiring and tests."""
    for path in sorted((root / CORE).rglob("*.py")):
        if not set(path.relative_to(root / CORE).parts) & set(CORE_WIRING):
            yield path


def core_offenses(path: Path, owned: dict[str, str], scripts: dict[str, str], heads: set[str]) -> list[str]:
    """What one core module does that only an app may: define or name an app's key or code,
    spell out an app's key, run an app's script."""
    tree = ast.parse(path.read_text(), str(path))
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # docstrings
    # Constants and codes by name; a key builder by the key it spells (its head), below.
    found = [f"defines {name}, {owned[name]}'s" for name in _defined(tree) if name in owned and name.isupper()]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in owned and node.attr.isupper():
            found.append(f"names {owned[node.attr]}'s {node.attr}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "script" and node.args:
            if isinstance(node.args[0], ast.Constant) and node.args[0].value in scripts:
                found.append(f"runs {scripts[node.args[0].value]}'s {node.args[0].value}.lua")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            if node.value.startswith(tuple(heads)):
                found.append(f"names an app's key: {node.value!r}")
    return found


def core_offenders(root: Path = ROOT) -> dict[str, list[str]]:
    """{file relative to root: what it does} for every core module that names an app's keys,
    scripts or codes, every Lua script of the core's beyond CORE_SCRIPTS, and every name in the
    core's registries that reads as an app's (APP_WORDS); empty when the core names no app."""
    owned, scripts, heads = app_owned(root)
    found: dict[str, list[str]] = {}
    for path in core_files(root):
        if what := core_offenses(path, owned, scripts, heads):
            found[str(path.relative_to(root))] = what
    for path in sorted((root / CORE).rglob("*.lua")):
        if path.stem not in CORE_SCRIPTS:
            found.setdefault(str(path.relative_to(root)), []).append("is an app's script, not the core's")
    for registry in CORE_REGISTRIES:
        if (root / registry).exists():
            tree = ast.parse((root / registry).read_text(), str(registry))
            named = [name for name in _defined(tree) if any(word in name.lower() for word in APP_WORDS)]
            found.setdefault(str(registry), []).extend(f"defines {name}, an app's name" for name in named)
    return {path: what for path, what in found.items() if what}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="another checkout of the shop")
    args = parser.parse_args(argv)
    found = sale_state_offenders(args.root.resolve())
    core = core_offenders(args.root.resolve())
    for path, what in [*found.items(), *core.items()]:
        for one in what:
            print(f"{path}: {one}")
    print(f"modules outside {OWNER} that name a sale's keys or run its scripts: {len(found)}")
    print(f"files of {CORE} that name an app's keys, scripts or codes: {len(core)}")
    return 1 if found or core else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
