"""Shared fixtures: real league homes in temporary folders."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from league.home import LeagueHome
from league.registry import GameRecord, Registry


@pytest.fixture
def home(tmp_path) -> LeagueHome:
    h = LeagueHome(tmp_path / "league")
    h.create_dirs()
    Registry.create(h.db_path).close()
    return h


@pytest.fixture
def registry(home):
    reg = Registry.open(home.db_path)
    yield reg
    reg.close()


def play(reg: Registry, blue: str, orange: str, blue_goals: int, orange_goals: int, team_size: int = 1, **kw) -> int:
    """Record one game between two registered agents."""
    return reg.record_game(GameRecord(blue=blue, orange=orange, team_size=team_size, seed=kw.pop("seed", 0),
                                      blue_goals=blue_goals, orange_goals=orange_goals,
                                      length_seconds=kw.pop("length_seconds", 300.0), **kw))


@contextmanager
def full_disk_at(folder: Path, size_bytes: int) -> Iterator[None]:
    """A real, tiny filesystem (tmpfs) mounted at `folder` for the block: writes past `size_bytes`
    fail with ENOSPC, as on a full disk. Skips the test where mounting is not permitted."""
    folder.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_bytes}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
