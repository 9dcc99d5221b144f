"""The README and docs/: the README stays a short front page, every reference page says what it
covers in at most REFERENCE_LINES lines, and no relative link, dated records' included, points
at a file or heading that is not there."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RECORDS = sorted((ROOT / "docs" / "records").glob("*.md"))
# Reference pages stay short enough to stay true; measurements go to dated records.
REFERENCE_LINES = 300
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but - and _ dropped, spaces to -."""
    found = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def links(page: Path) -> list[str]:
    return [target for target in LINK.findall(FENCE.sub("", page.read_text())) if "://" not in target]


@pytest.mark.parametrize("page", PAGES + RECORDS, ids=lambda page: page.name)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(target)
    assert not broken, f"{page.name}: {broken}"


def test_readme_is_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text().splitlines()
    assert len(readme) <= 200
    assert "make run" in readme[3] and "make test" in readme[4], "the first lines are the two commands"


@pytest.mark.parametrize("page", PAGES[1:], ids=lambda page: page.name)
def test_docs_page_says_what_it_covers(page: Path) -> None:
    lines = page.read_text().splitlines()
    title, blank, sentence = lines[:3]
    assert title.startswith("# ") and not blank and sentence, page.name
    assert len(lines) <= REFERENCE_LINES, f"{page.name}: {len(lines)} lines; move dated runs to docs/records/"


def test_readme_links_every_docs_page() -> None:
    linked = {Path(target.partition("#")[0]).name for target in links(ROOT / "README.md")}
    assert {page.name for page in PAGES[1:]} <= linked
