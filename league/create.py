"""Creating a league home: its folders, its database with the baseline agents, its own config layer."""

from __future__ import annotations

from pathlib import Path

from league.config import load_config
from league.errors import LeagueError
from league.config_tree import MAX_CONFIG_BYTES
from league.files import read_regular, write_file_atomic
from league.home import LeagueHome
from league.registry import Registry


def create_league(home: LeagueHome, config: Path | None = None) -> bool:
    """Create (or complete, or upgrade) the league at `home`; return whether one was there already.

    `config`, when given, is validated as a home layer (which may not pin the stage) and kept as
    the league's own config (<home>/config.yaml), used by every later command on this league.
    The database comes first: a read-only home or another application's database is refused
    before anything else is written into the folder.
    """
    if config is not None:
        load_config(home_file=config)  # validate it as a home layer
    cfg = load_config(user_file=config, home_file=home.config_path)
    home.create_root()
    registry = Registry.create(home.db_path, cfg.ratings)
    existed = registry.found_version > 0  # an empty file, or one holding only an empty migrations table, had no league
    try:
        home.create_dirs()
        if config is not None:
            _copy_config(config, home.config_path)
    finally:
        registry.close()
    return existed


def _copy_config(config: Path, dest: Path) -> None:
    """Atomically: a copy cut short (a full disk) never replaces the league's config."""
    try:
        write_file_atomic(dest, read_regular(config, MAX_CONFIG_BYTES, "config file"))  # validated: a megabyte at most
    except OSError as exc:
        raise LeagueError(f"Cannot write {dest}: {exc.strerror}; the league's config is unchanged.") from None
