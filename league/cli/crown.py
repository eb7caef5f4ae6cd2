"""`league crown --tournament ID`: the title decided by a round robin (arena.crown)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from league.cli.common import ROW_ID, ConfigOpt, HomeOpt, handles_errors, open_league, out
from league.errors import LeagueError


@handles_errors
def crown_command(
    tournament: Annotated[int, typer.Option("--tournament", help="A finished round robin in which every pair of "
                                                                 "entrants met, the stage's champion among them.",
                                            **ROW_ID)],
    playoff: Annotated[bool, typer.Option("--playoff", help="When entrants' worst matchups lie within --margin of "
                                                            "the best, play their playoff first, then decide.")] = False,
    games: Annotated[Optional[int], typer.Option("--games", help="Games a pair of the playoff (default: "
                                                                 "panel.playoff_games).", show_default=False)] = None,
    margin: Annotated[Optional[float], typer.Option("--margin", help="How close to the best worst matchup a "
                                                                     "contender's must be (default: "
                                                                     "panel.playoff_margin).", show_default=False)] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Worker processes for the playoff (default: one "
                                                                     "per core).", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="The playoff's seed.", show_default=False)] = None,
    config: ConfigOpt = None,
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

    --playoff: entrants whose worst matchups lie within --margin of the best (40 games put about 7 points
    of noise on a score) play a second round robin with each one's two worst opponents, --games a pair,
    and only they can take the title there. Interrupted? Run the same command again.

    Example: league tournament --stage 1v1 --agents necto,element,run-v40,old-v96 --no-baselines --games 40

    Example: league crown --tournament 12 --playoff
    """
    from arena.crown import crown

    league_home, reg = open_league(home)
    if (games is not None or margin is not None or seed is not None or workers is not None) and not playoff:
        raise LeagueError("--games, --margin, --seed and --workers are the playoff's; add --playoff.")
    crowning = crown(reg, tournament)
    _print(crowning)
    if playoff:
        _playoff(league_home, reg, crowning, games, margin, workers, seed, config)


def _print(crowning) -> None:
    table = Table("#", "entrant", "worst matchup", "against", "score", "games",
                  title=crowning.round_robin.capitalize())
    for i, e in enumerate(crowning.entrants, 1):
        mark = " (champion)" if e.name == crowning.holder else "" if e.eligible else " (cannot hold the title)"
        table.add_row(str(i), f"{e.name}{mark}", f"{e.worst:.1%}", e.worst_against, f"{e.points:.1%}", str(e.games))
    out.print(table)
    out.print(crowning.summary(), highlight=False)


def _playoff(league_home, reg, crowning, games, margin, workers, seed, config) -> None:
    """Play the playoff of `crowning`'s round robin (when entrants contend) and decide the title from it."""
    from arena.crown import crown, open_playoff
    from arena.engine.cores import workers_or_default
    from arena.tournament import start_or_resume_tournament
    from league.cli.tournament import play_with_progress
    from league.config import load_config, stage_of

    t = reg.tournament_store.get(crowning.tournament_id)
    cfg = load_config(stage=stage_of(t.team_size), user_file=config, home_file=league_home.config_path,
                      overrides={"seed": seed, "game.game_seconds": t.config.get("game", {}).get("game_seconds"),
                                 "panel.playoff_games": games, "panel.playoff_margin": margin})
    if not cfg.panel.playoff_games:
        raise LeagueError("A playoff needs --games of at least 2.")
    playoff = open_playoff(reg, cfg, crowning)
    if playoff is None:
        out.print(f"No playoff: no other entrant's worst matchup is within {cfg.panel.playoff_margin:.0%} of the best.",
                  highlight=False)
        return
    run = start_or_resume_tournament(reg, league_home, cfg, resume=playoff.id, workers=workers_or_default(workers))
    others = [e for e in playoff.entrants if e not in playoff.contenders]
    out.print(f"Playoff of round robin {crowning.tournament_id} (round robin {playoff.id}): "
              f"{', '.join(playoff.contenders)} contend, with {', '.join(others) or 'no other entrant'}; "
              f"{cfg.panel.playoff_games} games a pair ({run.to_play} to play)", highlight=False)
    play_with_progress(run)
    _print(crown(reg, playoff.id))
