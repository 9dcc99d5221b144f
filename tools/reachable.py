"""Directories that a system user must reach: the data of a PostgreSQL run as `postgres`.

PostgreSQL refuses to run as root, so a root process runs it as the `postgres` user
(lab/restore_drill, lab/cluster's Patroni). That user must traverse every directory above its
data, and a checkout may sit below one it cannot: a root user's clone under /root (mode 0700), a
`mktemp -d` folder. There initdb stopped with "could not access directory ...: Permission
denied". So, as root, such a directory lives outside the checkout, under
/var/tmp/seckill-<hash of the checkout's path>/ (one folder per checkout, root's, mode 0755),
and its usual place in the checkout's .run/ becomes a symbolic link to it: logs are still found
where the docs say. An ordinary user runs PostgreSQL as itself and keeps the usual place.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / ".run"
OUTSIDE = Path("/var/tmp")


class UnsafeDirectory(RuntimeError):
    """The folder under /var/tmp exists but is not root's alone: someone else could change it."""


def checkout_folder() -> Path:
    """This checkout's folder under /var/tmp, named from a hash of the checkout's path."""
    digest = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    return OUTSIDE / f"seckill-{digest}"


def reachable(usual: Path) -> Path:
    """Where the directory whose usual place is `usual` (under the checkout's .run/) is: `usual`
    for an ordinary user; as root, the same path below checkout_folder(). Creates nothing."""
    if os.geteuid() != 0:
        return usual
    return checkout_folder() / usual.relative_to(RUN)


def reachable_made(usual: Path, *, empty: bool = False) -> Path:
    """reachable(usual), created (emptied first when `empty`) and, as root, linked from `usual`.
    Raises UnsafeDirectory when the checkout's folder under /var/tmp, which anyone could have
    created first, is not a directory of root's that only root may write."""
    place = reachable(usual)
    if place != usual:
        _checkout_folder_made()
    if empty:
        shutil.rmtree(place, ignore_errors=True)
    place.mkdir(parents=True, exist_ok=True)
    if place != usual:
        _link(usual, place)
    return place


def _checkout_folder_made() -> None:
    folder = checkout_folder()
    try:
        folder.mkdir(mode=0o755)
    except FileExistsError:
        pass
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != 0 or found.st_mode & 0o022:
        raise UnsafeDirectory(
            f"{folder} is not a directory that only root may write: remove it (rm -rf {folder}) and run again"
        )


def _link(usual: Path, place: Path) -> None:
    """`usual` a symbolic link to `place`, replacing what an earlier run left there (a link, or
    the directory itself from before the data moved out of the checkout)."""
    if usual.is_symlink():
        if usual.readlink() == place:
            return
        usual.unlink()
    elif usual.is_dir():
        shutil.rmtree(usual)
    else:
        usual.unlink(missing_ok=True)
    usual.parent.mkdir(parents=True, exist_ok=True)
    usual.symlink_to(place, target_is_directory=True)
