"""`league bot add` and `league bot list`: community bots (Necto, Element) as league members."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from league.cli.common import HomeOpt, handles_errors, open_league, out
from league.errors import LeagueError

app = typer.Typer(help="Community bots from the RLBot botpack, played headless as league members.",
                  no_args_is_help=True)


@app.command("add")
@handles_errors
def add(
    kind: Annotated[str, typer.Argument(help="The bot's kind: necto or element (league bot list).")],
    folder: Annotated[Path, typer.Argument(help="Your copy of the bot's folder from the RLBot botpack.")],
    name: Annotated[Optional[str], typer.Option("--name", help="Name in the league (default: the kind).")] = None,
    home: HomeOpt = None,
) -> None:
    """Register a community bot from its botpack folder: only its weights' tensors are read (nothing in the
    folder is run or unpickled), checked against the bot's network and saved in the league home.

    Example: league bot add necto ~/RLBotPack/RLBotPack/Necto
    """
    from agents.community.install import add_bot  # torch: only when the command runs

    league_home, reg = open_league(home)
    agent = add_bot(league_home, reg, kind, folder, name)
    m = agent.community
    out.print(f"Added {escape(agent.name)} ({m.title}; plays {agent.stage}), from {escape(m.source_file)} "
              f"(sha256 {m.source_sha256[:12]}...), licence: {m.licence}.", highlight=False)


@app.command("list")
@handles_errors
def list_bots(home: HomeOpt = None) -> None:
    """The kinds of community bot the league can add, what each needs, and those this league holds.

    Example: league bot list
    """
    from agents.community.bots import KINDS

    table = Table(title="Community bot kinds (league bot add KIND FOLDER)")
    for col in ("kind", "bot", "needs in its folder", "plays", "licence"):
        table.add_column(col)
    for k in KINDS.values():
        table.add_row(k.kind, k.title, k.weights_file, ", ".join(f"{n}v{n}" for n in k.team_sizes), k.licence)
    out.print(table)
    try:
        _, reg = open_league(home, readonly=True)
    except LeagueError:  # no league here: the kinds are the answer
        return
    added = [a for a in reg.agent_store.all(include_retired=True) if a.kind == "community"]
    if added:
        out.print("In this league: " + ", ".join(f"{escape(a.name)} ({a.stage}, {a.status})" for a in added))
