"""What every `league` command shares: consoles, options, error handling, opening the league."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from league.errors import LeagueError

# Piped output gets a wide console so tables are not squeezed to 80 columns.
out = Console() if sys.stdout.isatty() else Console(width=160)
err = Console(stderr=True)

USAGE_ERROR = 2

HomeOpt = Annotated[
    Optional[Path],
    typer.Option("--home", help="League home folder (default: $LEAGUE_HOME, else ./league-home).", show_default=False),
]
StageOpt = Annotated[Optional[str], typer.Option("--stage", help="Team size: 1v1, 2v2 or 3v3.", show_default=False)]
ConfigOpt = Annotated[Optional[Path], typer.Option("--config", help="A YAML file layered over configs/.", show_default=False)]


def handles_errors(fn):
    """Turn a LeagueError into one line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LeagueError as exc:
            err.print(f"[bold red]Error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(USAGE_ERROR) from None

    return wrapper


def team_size_of(stage: str | None) -> int | None:
    from league.config import STAGES

    if stage is None:
        return None
    if stage not in STAGES:
        raise LeagueError(f"Unknown stage {stage!r}; expected one of {', '.join(STAGES)}.")
    return int(stage[0])


def open_league(home: Path | None, config: Path | None = None, readonly: bool = False):
    from league.config import load_config
    from league.home import resolve_home
    from league.registry import Registry

    league_home = resolve_home(home).require()
    cfg = load_config(user_file=config, home_file=league_home.config_path)
    return league_home, Registry.open(league_home.db_path, cfg.ratings, readonly=readonly)


