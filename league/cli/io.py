"""`league import`, `league export` and `league average`: checkpoints into and out of a league home, and one made
from several agents' weights."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from league.cli.common import HomeOpt, StageOpt, handles_errors, open_league, out
from league.config import STAGES
from league.errors import LeagueError
from league.files import printable


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
def average_agents(
    names: Annotated[list[str], typer.Argument(help="Two or more trained agents of one network and stage.")],
    name: Annotated[str, typer.Option("--name", help="Name of the new, averaged agent.")],
    home: HomeOpt = None,
) -> None:
    """Register a new agent whose weights are the mean of several agents' (a model soup: docs/distill.md).

    Snapshots of one run minutes apart average into a network of their own; play it against them to see
    whether it is better (the title round robin at the end of a run does so with panel.title_average).

    Example: league average xa-v60 xa-v64 xa-v68 --name xa-avg
    """
    from agents.averaged import average_agents as average  # torch: only when the command runs

    league_home, reg = open_league(home)
    agent = average(league_home, reg, names, name)
    parent = reg.agent_store.by_id(agent.parent_id).name
    out.print(f"Averaged {', '.join(names)} into {agent.name} ({agent.kind}, {agent.stage}, {agent.steps_trained:,} "
              f"steps; its parent {parent}, the most trained), sha256 {agent.checkpoint_sha256}. Play it against "
              f"them: league match {agent.name} {parent}", highlight=False)


@handles_errors
def export_agent(
    name: Annotated[str, typer.Argument(help="Agent name.")],
    directory: Annotated[Optional[Path], typer.Argument(
        help="Folder to write the checkpoint and its metadata into (not with --rlbot).")] = None,
    rlbot: Annotated[Optional[Path], typer.Option(
        "--rlbot", help="Write a runnable RLBot v5 bot folder here instead (docs/rlbot.md).")] = None,
    make_zip: Annotated[bool, typer.Option("--zip", help="With --rlbot: also write DIR.zip for sharing.")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="With --rlbot: replace an earlier export at DIR (and DIR.zip); never other files.")] = False,
    sampled: Annotated[bool, typer.Option(
        "--sampled", help="With --rlbot: the bot samples its actions (default: the most likely action).")] = False,
    home: HomeOpt = None,
) -> None:
    """Write an agent's checkpoint and metadata out of the league, or a runnable RLBot v5 bot.

    Example: league export ppo-1v1-v12 ./exported
    Example: league export ppo-1v1-v12 --rlbot ./bots/ppo-1v1-v12 --zip

    --force replaces only what an earlier export wrote there; the league home, the current folder,
    your home folder and folders of other files are never replaced.
    """
    from league.names import check_name

    check_name(name)
    if rlbot is None:
        if directory is None:
            raise LeagueError("Give a folder for the checkpoint, or --rlbot DIR for an RLBot bot.")
        if make_zip or force or sampled:
            raise LeagueError("--zip, --force and --sampled go with --rlbot DIR.")
        from agents.transfer import export_checkpoint  # torch: only for the commands that need it

        league_home, reg = open_league(home, readonly=True)
        weights, meta = export_checkpoint(league_home, reg, name, directory)
        out.print(f"Exported {name} to {printable(str(weights))} and {printable(str(meta))}", highlight=False)
        _print_licence(reg, name)
        return
    if directory is not None:
        raise LeagueError("Give either a folder for the checkpoint or --rlbot DIR, not both.")
    from agents.transfer import export_rlbot

    league_home, reg = open_league(home)
    made = export_rlbot(league_home, reg, name, rlbot, force=force, make_zip=make_zip, deterministic=not sampled)
    out.print(f"Wrote the RLBot bot {name} to {printable(str(made.folder))} ({made.size_bytes / 1e6:.1f} MB"
              + (f"; {printable(str(made.zip_path))}" if made.zip_path else "") + "). "
              f"In RLBot v5, add {printable(str(made.folder / 'bot.toml'))}; its README.md says how.", highlight=False)
    _print_licence(reg, name)


def _print_licence(reg, name: str) -> None:
    """The licence notice of an agent derived from community bots' weights (league.provenance)."""
    from league.provenance import community_sources, licence_notice

    sources = community_sources(reg, reg.agent_store.get(name))
    if sources:
        out.print(licence_notice(sources), highlight=False)
