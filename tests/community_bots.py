"""Where the community bots' files are for tests (shared/bots, or LEAGUE_BOTS_DIR): skip if absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def bots_dir() -> Path:
    """The folder holding Element/ and Necto/ (LEAGUE_BOTS_DIR, else <repo>/../shared/bots); skips the test if absent."""
    configured = os.environ.get("LEAGUE_BOTS_DIR")
    folder = Path(configured) if configured else REPO.parent / "shared" / "bots"
    if not (folder / "Element").is_dir() or not (folder / "Necto").is_dir():
        pytest.skip(f"community bots folder {folder} is absent (set LEAGUE_BOTS_DIR to a folder holding Element/ and Necto/)")
    return folder
