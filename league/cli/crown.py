"""`league crown --tournament ID`: the title decided by a round robin (arena.crown)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from league.cli.common import ROW_ID, HomeOpt, handles_errors, open_league, out


@handles_errors
def crown_command(
    tournament: Annotated[int, typer.Option("--tournament", help="A finished round robin in which every pair of "
                                                                 "entrants met, the stage's champion among them.",
                                            **ROW_ID)],
    home: HomeOpt = None,
) -> None:
    """Give the title to the entrant of a round robin whose worst matchup is best.

    Strength among strong agents is not a ladder: a champion that passed its panel and beat the title
    holder of its day may lose clearly to agents it never met. Here every entrant met every other on
    the same games; the title goes to the one that loses least to anyone (its worst matchup's score;
    ties: its score over all its games, then the title holder). Only an agent of the stage may hold
    it (a community bot or a baseline can play and judge, not take it). The change is recorded as a
    'round-robin' promotion naming the tournament. A run that promotes during training ends with such
    a round robin of its panel and its best snapshots (panel.title_games).

    Example: league tournament --stage 1v1 --agents necto,element,run-v40,old-v96 --no-baselines --games 40

    Example: league crown --tournament 12
    """
    from arena.crown import crown

    _, reg = open_league(home)
    crowning = crown(reg, tournament)
    table = Table("#", "entrant", "worst matchup", "against", "score", "games", title=crowning.round_robin.capitalize())
    for i, e in enumerate(crowning.entrants, 1):
        mark = " (champion)" if e.name == crowning.holder else "" if e.eligible else " (cannot hold the title)"
        table.add_row(str(i), f"{e.name}{mark}", f"{e.worst:.1%}", e.worst_against, f"{e.points:.1%}", str(e.games))
    out.print(table)
    out.print(crowning.summary(), highlight=False)
