"""Which test modules borrow from other test modules (ast).

    python -m tools.tests_borrowing     # every borrowing import, file and module; exits 1 if there is one

What tests share lives in testutils/ (CONTRIBUTING.md, "Test helpers"): a test module imports
helpers, fixtures and shared data from there, never from another test module, whose helpers
would otherwise change with its tests and be collected with them. A test module is any module
in a `tests` package, the browser tests (e2e/) and the root conftest.py. The one import allowed
is of another module's tests themselves (names starting with `test_`): a module may collect
them again under settings of its own. seckill_site/tests/test_layout.py holds the tests to this.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = {".venv", ".git", ".run", "node_modules"}


def files_of_tests(root: Path) -> Iterator[Path]:
    """Every test module under root: in a `tests` package, under e2e/, and the root conftest.py."""
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if SKIPPED.intersection(parts):
            continue
        if "tests" in parts[:-1] or parts[0] == "e2e" or parts == ("conftest.py",):
            yield path


def is_test_module(module: str) -> bool:
    """A dotted module name that points into a tests package, the browser tests or a conftest."""
    parts = module.split(".")
    return "tests" in parts or parts[0] in {"e2e", "conftest"} or parts[-1] == "conftest"


def borrowings(path: Path) -> list[str]:
    """The test modules `path` imports from (other than to collect their tests again)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                found.append("." * node.level + (node.module or ""))
                continue
            module = node.module or ""
            names = [alias.name for alias in node.names]
            targets = [f"{module}.{name}" for name in names] if not is_test_module(module) else [module]
            if any(is_test_module(target) for target in targets):
                if not (is_test_module(module) and all(name.startswith("test_") for name in names)):
                    found.append(module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if is_test_module(alias.name)]
    return found


def borrowers(root: Path = ROOT) -> dict[str, list[str]]:
    """{test file relative to root: the test modules it imports}; empty when none borrows."""
    found = {}
    for path in files_of_tests(root):
        if what := borrowings(path):
            found[str(path.relative_to(root))] = what
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="another checkout of the shop")
    args = parser.parse_args(argv)
    found = borrowers(args.root.resolve())
    for path, modules in found.items():
        for module in modules:
            print(f"{path}: imports {module}")
    print(f"test modules that import another test module: {len(found)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
