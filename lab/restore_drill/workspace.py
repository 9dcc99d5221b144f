"""Where the restore drill works, and what all its parts share: its directory (RUN: emptied when
a drill starts, deleted but for LOGS when it ends), its log lines and its error.

RUN is .run/restore-drill; as root, where PostgreSQL runs as `postgres`, it is a folder under
/var/tmp that that user can reach whatever the checkout's parents allow, and .run/restore-drill
a link to it (tools.reachable)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.net import logger
from tools.reachable import reachable

ROOT = Path(__file__).resolve().parents[2]
USUAL = ROOT / ".run" / "restore-drill"  # where to look: RUN or a link to it
RUN = reachable(USUAL)
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
