"""As root, PostgreSQL runs as `postgres`, which must reach its data directory even when the
checkout sits in a folder only root may enter (pytest's own tmp_path is one: mode 0700)."""

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

from tools import reachable as module
from tools.reachable import UnsafeDirectory, reachable, reachable_made

PG_BIN = Path("/usr/lib/postgresql/15/bin")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="PostgreSQL runs as another user only under root")


@pytest.fixture
def private_checkout(tmp_path, monkeypatch):
    """A checkout whose parent only root may enter; its folder under /var/tmp is removed after."""
    parent = tmp_path / "private"
    parent.mkdir(mode=0o700)
    checkout = parent / "seckill"
    checkout.mkdir()
    monkeypatch.setattr(module, "ROOT", checkout)
    monkeypatch.setattr(module, "RUN", checkout / ".run")
    yield checkout
    shutil.rmtree(module.checkout_folder(), ignore_errors=True)


def as_postgres(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", "postgres", "--", *command], capture_output=True, text=True)


def owned_by_postgres(path: Path) -> Path:
    path.mkdir(mode=0o700)
    user = pwd.getpwnam("postgres")
    os.chown(path, user.pw_uid, user.pw_gid)
    return path


@as_root
@pytest.mark.skipif(not (PG_BIN / "initdb").exists(), reason="no PostgreSQL 15 binaries")
def test_initdb_as_postgres_succeeds_from_a_checkout_it_cannot_enter(private_checkout):
    usual = private_checkout / ".run" / "restore-drill"
    place = reachable_made(usual)
    assert usual.is_symlink() and usual.resolve() == place
    data = owned_by_postgres(place / "original")
    result = as_postgres(str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust")
    assert result.returncode == 0, result.stdout + result.stderr
    assert as_postgres("test", "-x", str(usual)).returncode != 0  # where it was: out of reach


@as_root
def test_a_new_start_empties_it_and_relinks_a_directory_left_in_the_checkout(private_checkout):
    usual = private_checkout / ".run" / "cluster" / "postgres"
    usual.mkdir(parents=True)  # from before the data moved out of the checkout
    place = reachable_made(usual)
    (place / "old").write_text("an earlier run's")
    assert reachable_made(usual, empty=True) == place
    assert usual.is_symlink() and not (usual / "old").exists()


@as_root
def test_a_folder_someone_else_created_first_is_refused(private_checkout):
    folder = module.checkout_folder()
    folder.mkdir(mode=0o777)
    os.chown(folder, pwd.getpwnam("nobody").pw_uid, -1)
    with pytest.raises(UnsafeDirectory, match="rm -rf"):
        reachable_made(private_checkout / ".run" / "restore-drill")


def test_an_ordinary_user_keeps_the_usual_place(private_checkout, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    usual = private_checkout / ".run" / "restore-drill"
    assert reachable(usual) == usual


@as_root
def test_the_restore_drill_works_where_postgres_reaches():
    from lab.restore_drill.workspace import RUN, USUAL

    assert RUN == reachable(USUAL) and RUN.is_relative_to(Path("/var/tmp"))
