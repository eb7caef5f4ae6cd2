"""`league import` and `league export`: move checkpoints in and out of a league home."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from league.cli.common import HomeOpt, StageOpt, handles_errors, open_league, out
from league.config import STAGES
from league.errors import LeagueError


@handles_errors
def import_agent(
    file: Annotated[Path, typer.Argument(help="A checkpoint (.safetensors with its .json metadata).")],
    name: Annotated[Optional[str], typer.Option("--name", help="Name in the league (default: the file's stem).")] = None,
    stage: StageOpt = None,
    home: HomeOpt = None,
) -> None:
    """Register an agent trained elsewhere: the checkpoint is verified, copied into the league home and recorded.

    Example: league import ./bots/striker.safetensors --name striker --stage 1v1
    """
    from agents.transfer import StageNotRecorded, import_checkpoint  # torch: only when the command runs
    from league.names import check_name

    if name is not None:
        check_name(name)
    league_home, reg = open_league(home)
    try:
        agent = import_checkpoint(league_home, reg, file, name=name, stage=stage)
    except StageNotRecorded as exc:
        raise LeagueError(f"{exc.file} does not record the stage it was trained for; "
                          f"pass --stage {', '.join(STAGES[:-1])} or {STAGES[-1]}.") from None
    out.print(f"Imported {agent.name} ({agent.kind}, {agent.stage}, {agent.steps_trained:,} steps), "
              f"sha256 {agent.checkpoint_sha256}, stored at {agent.checkpoint_path}", highlight=False)


@handles_errors
def export_agent(
    name: Annotated[str, typer.Argument(help="Agent name.")],
    directory: Annotated[Path, typer.Argument(help="Folder to write the checkpoint and its metadata into.")],
    home: HomeOpt = None,
) -> None:
    """Write an agent's checkpoint and metadata out of the league.

    Example: league export ppo-1v1-v12 ./exported
    """
    from agents.transfer import export_checkpoint  # torch: only for the commands that need it
    from league.names import check_name

    check_name(name)
    league_home, reg = open_league(home, readonly=True)
    weights, meta = export_checkpoint(league_home, reg, name, directory)
    out.print(f"Exported {name} to {weights} and {meta}", highlight=False)
