"""The shop's layers, read from its imports (ast): who imports whom, and what breaks the rules.

    python -m tools.layout            # the counts: upward imports, import circles, in-function imports, sizes
    python -m tools.layout --list     # and every offending import, file and line

The layers, lowest first (an import may only point down or sideways within a layer):

    seckill_site, celery_app   infrastructure: settings, HTTP helpers, Redis and the sale's state,
                               broker, logs, metrics exporter; imports no app
    users < goods < orders < seckill   the apps, each building on the ones before it
    tools < bench              the harness (tests, e2e/ and migrations are not counted)

seckill_site/tests/test_layout.py holds the shop to this; this command reports the counts.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"seckill_site": 0, "celery_app": 0, "users": 1, "goods": 2, "orders": 3, "seckill": 4, "tools": 5, "bench": 6}
APPS = ("users", "goods", "orders", "seckill")
# Modules of an app that a sibling may not import: its admin (a UI), and names with a leading underscore.
PRIVATE_MODULES = ("admin",)


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module, dotted (the longest prefix that is a project module)
    names: tuple[str, ...]  # names taken from it (from-imports)
    line: int
    in_function: bool
    reason: str  # the comment on the import's line, if any


@dataclass
class Layout:
    modules: dict[str, Path] = field(default_factory=dict)
    imports: list[Import] = field(default_factory=list)

    def top(self, module: str) -> str:
        return module.split(".")[0]

    def upward(self) -> list[Import]:
        """Imports from a lower layer into a higher one."""
        return [i for i in self.imports if LAYERS[self.top(i.target)] > LAYERS[self.top(i.source)]]

    def private(self) -> list[Import]:
        """Imports of another app's private names or its admin."""
        found = []
        for i in self.imports:
            source, target = self.top(i.source), self.top(i.target)
            if source == target or target not in APPS:
                continue
            module = i.target.split(".")[-1]
            if module in PRIVATE_MODULES or module.startswith("_") or any(n.startswith("_") for n in i.names):
                found.append(i)
        return found

    def in_function(self, *, shop: bool = True) -> list[Import]:
        """Project imports inside a function: in the shop's code (apps and site), or in the harness."""
        return [i for i in self.imports if i.in_function and (LAYERS[self.top(i.source)] <= 4) == shop]

    def circles(self) -> list[list[str]]:
        """Strongly connected groups of more than one module (Tarjan), in-function imports included."""
        graph: dict[str, set[str]] = {module: set() for module in self.modules}
        for i in self.imports:
            graph[i.source].add(i.target)
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        groups: list[list[str]] = []
        counter = [0]

        def visit(node: str) -> None:
            index[node] = low[node] = counter[0]
            counter[0] += 1
            stack.append(node)
            on_stack.add(node)
            for succ in graph[node]:
                if succ not in index:
                    visit(succ)
                    low[node] = min(low[node], low[succ])
                elif succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

        sys.setrecursionlimit(10_000)
        for node in sorted(graph):
            if node not in index:
                visit(node)
        return groups


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _counted(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).with_suffix("").parts
    return parts[0] in LAYERS and "tests" not in parts and "migrations" not in parts


def read(root: Path = ROOT) -> Layout:
    layout = Layout()
    for top in LAYERS:
        candidates = [root / f"{top}.py"] if (root / f"{top}.py").exists() else sorted((root / top).rglob("*.py"))
        for path in candidates:
            if _counted(path, root):
                layout.modules[_module_name(path, root)] = path
    for module, path in layout.modules.items():
        source = path.read_text()
        lines = source.splitlines()
        tree = ast.parse(source, str(path))
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        inside = {id(n) for f in functions for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [(alias.name, ()) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
                # `from pkg import module` imports the module; `from module import name` the module.
                targets = []
                for alias in node.names:
                    joined = f"{base}.{alias.name}"
                    targets.append((joined, ()) if joined in layout.modules else (base, (alias.name,)))
            else:
                continue
            comment = lines[node.lineno - 1].partition("#")[2].strip()
            for name, names in targets:
                target = _project_module(name, layout.modules)
                if target is not None and target != module:
                    layout.imports.append(Import(module, target, names, node.lineno, id(node) in inside, comment))
    return layout


def _project_module(name: str, modules: dict[str, Path]) -> str | None:
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def sizes(layout: Layout) -> tuple[tuple[int, str], tuple[int, str]]:
    """(lines, module) of the largest module and (lines, function) of the largest function in app code."""
    largest_module, largest_function = (0, ""), (0, "")
    for module, path in layout.modules.items():
        if layout.top(module) not in APPS:
            continue
        source = path.read_text()
        largest_module = max(largest_module, (len(source.splitlines()), module))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                largest_function = max(largest_function, (length, f"{module}.{node.name}"))
    return largest_module, largest_function


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list every offending import")
    parser.add_argument("--root", type=Path, default=ROOT, help="another checkout of the shop")
    args = parser.parse_args(argv)
    layout = read(args.root.resolve())
    circles = layout.circles()
    (module_lines, module), (function_lines, function) = sizes(layout)
    readme = args.root / "README.md"
    print(f"modules counted:               {len(layout.modules)}")
    print(f"upward imports:                {len(layout.upward())}")
    print(f"imports of a sibling's private names or admin: {len(layout.private())}")
    print(f"files in import circles:       {sum(len(group) for group in circles)} in {len(circles)} circle(s)")
    print(f"in-function project imports:   {len(layout.in_function())} in the shop, "
          f"{len(layout.in_function(shop=False))} in the harness")  # fmt: skip
    print(f"largest app module:            {module} ({module_lines} lines)")
    print(f"largest app function:          {function} ({function_lines} lines)")
    if readme.exists():
        print(f"README lines:                  {len(readme.read_text().splitlines())}")
    if args.list:
        for title, found in (("upward", layout.upward()), ("private", layout.private()),
                             ("in a function (shop)", layout.in_function())):  # fmt: skip
            print(f"\n{title}:")
            for i in found:
                where = layout.modules[i.source].relative_to(args.root.resolve())
                why = f"  # {i.reason}" if i.reason else ""
                print(f"  {where}:{i.line} {i.source} -> {i.target}{why}")
        for group in circles:
            print(f"\ncircle: {', '.join(group)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
