"""A tier that cannot run for want of a Debian package skips on a newcomer's machine, naming the
package, and fails a CI run (conftest.py, tools/missing.py): a green CI run ran every tier."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.missing import missing, packages_named

ROOT = Path(__file__).resolve().parents[2]
# One browser test, with Chromium looked for where it is not.
BROWSER_TEST = ["e2e/test_item_page.py", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-x"]


def run_browser_tier(ci: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CHROMIUM="/nonexistent/chromium", CI=ci)
    return subprocess.run([sys.executable, "-m", "pytest", *BROWSER_TEST], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.mark.slow
def test_without_chromium_a_ci_run_fails_naming_the_package():
    result = run_browser_tier("true")
    assert result.returncode != 0, result.stdout[-3000:]
    assert "install chromium" in result.stdout, result.stdout[-3000:]


@pytest.mark.slow
def test_without_chromium_a_run_outside_ci_skips_naming_the_package():
    result = run_browser_tier("")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "skipped" in result.stdout and "Debian package chromium" in result.stdout, result.stdout[-3000:]


def test_a_reason_names_its_packages_and_other_reasons_none():
    assert packages_named(missing("varnishd is not installed", "varnish", "varnish-modules")) == [
        "varnish",
        "varnish-modules",
    ]
    assert packages_named(missing("no node", "nodejs")) == ["nodejs"]
    assert packages_named("this run already uses AMQP") == []
