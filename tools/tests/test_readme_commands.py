"""The README's table of make targets and `make help` come from one source, the Makefile's
`## description` comments (tools/readme_commands.py): the README must say what the Makefile says."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import readme_commands
from tools.missing import missing

ROOT = Path(__file__).resolve().parents[2]


def test_readme_table_is_the_makefiles() -> None:
    assert readme_commands.main(["--check"]) == 0, "run `python -m tools.readme_commands`"


def test_every_phony_target_but_venv_has_a_description() -> None:
    makefile = (ROOT / "Makefile").read_text()
    phony = set(re.search(r"^\.PHONY:(.*)$", makefile, re.M)[1].split())
    described = {name for name, _ in readme_commands.targets(makefile)}
    assert phony - {"venv"} == described


def test_check_fails_when_a_description_changes_without_the_readme(tmp_path: Path) -> None:
    makefile, readme = tmp_path / "Makefile", tmp_path / "README.md"
    text = (ROOT / "Makefile").read_text()
    assert "\ndev: venv ## " in text
    makefile.write_text(re.sub(r"(?m)^(dev: venv ## ).*$", r"\1a new description of make dev", text))
    shutil.copy(ROOT / "README.md", readme)
    paths = ["--makefile", str(makefile), "--readme", str(readme)]

    check = subprocess.run(
        [sys.executable, "-m", "tools.readme_commands", "--check", *paths], cwd=ROOT, capture_output=True, text=True
    )
    assert check.returncode == 1, check.stdout + check.stderr
    assert "a new description of make dev" in check.stderr
    assert readme.read_text() == (ROOT / "README.md").read_text(), "--check changes nothing"

    assert readme_commands.main(paths) == 0
    assert "| `make dev` | a new description of make dev |" in readme.read_text()
    assert readme_commands.main(["--check", *paths]) == 0
    lines = readme.read_text().splitlines()
    assert "make run" in lines[3] and "make test" in lines[4], "the README still opens with the two commands"


def test_check_fails_without_the_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# A README with no table\n")
    assert readme_commands.main(["--check", "--readme", str(readme)]) == 2


@pytest.mark.skipif(shutil.which("make") is None, reason=missing("make is not installed", "make"))
def test_make_help_prints_the_same_descriptions() -> None:
    out = subprocess.run(
        ["make", "-s", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    printed = [tuple(line.removeprefix("make ").split(None, 1)) for line in out.splitlines()]
    assert printed == readme_commands.targets((ROOT / "Makefile").read_text())
