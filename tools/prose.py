"""Lines of prose per line of code, per package: how much of the code is explanation.

    python -m tools.prose            # the shop and the harness, without tests and migrations
    python -m tools.prose --tests    # with their tests

Prose is a docstring line (a string standing alone as a statement: a module's, class's or
function's docstring, or one under an attribute) or a comment line; code is any other line with a
token on it. A line with code and a comment after it counts as both. Blank lines, tool directives
(`# noqa`, `# type:`, `# fmt:`, `# pragma`) and a shebang count as neither. Read with tokenize
and ast, so a `#` inside a string is not a comment and a string that is a value is code.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (label, folder); sales/sale_state is also counted within goods.
PACKAGES = [
    ("seckill_site", "seckill_site"),
    ("users", "users"),
    ("goods", "goods"),
    ("  sale_state", "sales/sale_state"),
    ("seckill", "seckill"),
    ("orders", "orders"),
    ("waitingroom", "waitingroom"),
    ("tools", "tools"),
    ("lab", "lab"),
    ("e2e", "e2e"),
]
SHOP = {"seckill_site", "users", "goods", "seckill", "orders", "waitingroom"}
# Tool directives inside a comment; what is left once they are gone is prose.
DIRECTIVE = re.compile(
    r"#!.*|#\s*-\*-.*-\*-|#\s*(?:noqa(?::\s*[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)?|type:\s*ignore(?:\[[^\]]*\])?"
    r"|fmt:\s*(?:skip|off|on)|pragma:[^#]*|pyright:\s*\S+|mypy:\s*\S+)"
)
NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}  # fmt: skip


@dataclass
class Count:
    files: int = 0
    code: int = 0
    docstring: int = 0
    comment: int = 0

    @property
    def prose(self) -> int:
        return self.docstring + self.comment

    def add(self, other: Count) -> None:
        self.files += other.files
        self.code += other.code
        self.docstring += other.docstring
        self.comment += other.comment


def count(source: str) -> Count:
    """One module's lines of code, of docstrings and of comments."""
    lines = source.splitlines()
    standalone = set()  # the lines of strings that stand alone as statements
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            standalone.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    code, comment = set(), set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            if DIRECTIVE.sub("", token.string).strip(" #"):
                comment.add(token.start[0])
        elif token.type not in NOT_CODE:
            code.update(row for row in range(token.start[0], token.end[0] + 1) if row not in standalone)
    docstring = {row for row in standalone if lines[row - 1].strip()}
    return Count(files=1, code=len(code), docstring=len(docstring), comment=len(comment))


def package(folder: Path, *, tests: bool) -> Count:
    total = Count()
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder).parts
        if "migrations" in parts or (not tests and "tests" in parts):
            continue
        total.add(count(path.read_text()))
    return total


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", action="store_true", help="count the packages' tests too")
    parser.add_argument("--root", type=Path, default=ROOT, help="another checkout of the shop")
    args = parser.parse_args(argv)
    print(f"{'package':<16}{'files':>6}{'code':>8}{'docstring':>11}{'comment':>9}{'prose/code':>12}")
    shop, harness = Count(), Count()
    for label, folder in PACKAGES:
        found = package(args.root / folder, tests=args.tests)
        print(f"{label:<16}{found.files:>6}{found.code:>8}{found.docstring:>11}{found.comment:>9}"
              f"{found.prose / max(found.code, 1):>12.2f}")  # fmt: skip
        if label in SHOP:
            shop.add(found)
        elif not label.startswith(" "):
            harness.add(found)
    for label, found in (("shop", shop), ("harness", harness)):
        print(f"{label:<16}{found.files:>6}{found.code:>8}{found.docstring:>11}{found.comment:>9}"
              f"{found.prose / max(found.code, 1):>12.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
