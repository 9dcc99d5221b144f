"""The README's table of make targets, made from the Makefile's `## description` comments.

`make help` prints those comments and this script writes them into README.md between the
markers, so a target is described in one place, its line in the Makefile:

    python -m tools.readme_commands           rewrite the table in README.md
    python -m tools.readme_commands --check   exit 1 if README.md's table is not the Makefile's

A `docs/...` path in a description becomes a link in the README. Standard library only.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START = "<!-- make-help:start -->"
END = "<!-- make-help:end -->"
NOTE = (
    "<!-- Made from the Makefile's `## ` comments by `python -m tools.readme_commands`: edit those, not this table. -->"
)
# The pattern of the Makefile's help target (grep -E, then awk splits on ":.*?## "), so the two
# list the same targets. A description must not contain "## " itself.
TARGET = re.compile(r"^([a-zA-Z0-9_-]+):.*?## (.*)$")
DOC_PATH = re.compile(r"\bdocs/[\w./-]+\.[a-z]+(?:#[\w-]+)?")


class ReadmeError(Exception):
    """README.md has no table to rewrite: a marker is missing or out of order."""


def targets(makefile: str) -> list[tuple[str, str]]:
    """(target, description) of every described target, in the Makefile's order."""
    return [(match[1], match[2].strip()) for line in makefile.splitlines() if (match := TARGET.match(line))]


def cell(description: str) -> str:
    """A description as a Markdown table cell: `|` escaped, docs/ paths as links (named without
    their #anchor)."""
    text = description.replace("|", "\\|")
    return DOC_PATH.sub(lambda match: f"[{match[0].partition('#')[0]}]({match[0]})", text)


def table(makefile: str) -> str:
    rows = [f"| `make {name}` | {cell(description)} |" for name, description in targets(makefile)]
    return "\n".join([NOTE, "", "| target | what |", "| --- | --- |", *rows])


def render(readme: str, makefile: str) -> str:
    """README.md with the text between the markers replaced by the Makefile's table."""
    start, end = readme.find(START), readme.find(END)
    if start < 0 or end < start:
        raise ReadmeError(f"README.md needs {START} and then {END} around the table of make targets")
    return f"{readme[: start + len(START)]}\n{table(makefile)}\n{readme[end:]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The README's table of make targets, from the Makefile's ## comments.")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if README.md is out of date")
    parser.add_argument("--makefile", type=Path, default=ROOT / "Makefile")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    args = parser.parse_args(argv)

    current = args.readme.read_text()
    try:
        wanted = render(current, args.makefile.read_text())
    except ReadmeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if wanted == current:
        print(f"{args.readme.name}: the table of make targets is up to date")
        return 0
    if args.check:
        diff = difflib.unified_diff(
            current.splitlines(), wanted.splitlines(), str(args.readme), "from the Makefile", lineterm=""
        )
        print("\n".join(diff), file=sys.stderr)
        print(
            f"error: {args.readme.name}'s table of make targets differs from the Makefile's ## comments:"
            " run `python -m tools.readme_commands`",
            file=sys.stderr,
        )
        return 1
    args.readme.write_text(wanted)
    print(f"{args.readme.name}: table of make targets rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
