"""Where the restore drill works, and what all its parts share: its directory under .run/
(RUN: emptied when a drill starts, deleted but for LOGS when it ends), its log lines and its error."""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.net import logger

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / ".run" / "restore-drill"
LOGS = RUN / "logs"

log = logger("restore-drill")


class DrillError(RuntimeError):
    """A step of the drill failed; the message says which and where its log is."""


def remove(path: Path) -> None:
    """Delete the file or the tree at `path`, if there is one."""
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
