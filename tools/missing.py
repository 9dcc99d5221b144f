"""A test tier that skips because this machine lacks a program says which Debian package brings
it, in one form, so that a CI run can refuse the skip.

`make test` installs these packages as root (TEST_PACKAGES in the Makefile); anywhere else the
tier skips with `missing(...)` as its reason. Under CI=true conftest.py turns a skip whose reason
names packages this way into a failure: a green CI run has run every tier.
"""

from __future__ import annotations

import os
import re

_NAMED = re.compile(r"\(Debian packages? ([a-z0-9.+\- ]+)\)")


def missing(what: str, *packages: str) -> str:
    """A skip reason: `what` did not run for want of the Debian `packages`."""
    noun = "package" if len(packages) == 1 else "packages"
    return f"{what} (Debian {noun} {' '.join(packages)})"


def packages_named(reason: str) -> list[str]:
    """The packages a reason made by `missing` names; [] for any other reason."""
    found = _NAMED.search(reason)
    return found.group(1).split() if found else []


def on_ci() -> bool:
    """Whether this run is CI's (CI=true, as CI services and .ci/run's callers set it)."""
    return os.environ.get("CI", "").strip().lower() == "true"
