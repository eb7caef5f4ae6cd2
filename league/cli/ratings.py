"""`league ratings rebuild`: the stored ratings recomputed from the recorded games."""

from __future__ import annotations

import typer

from league.cli.common import ConfigOpt, HomeOpt, StageOpt, handles_errors, open_league, out

app = typer.Typer(help="The league's stored Elo and TrueSkill ratings.", no_args_is_help=True, rich_markup_mode=None)


@app.command("rebuild")
@handles_errors
def rebuild(home: HomeOpt = None, stage: StageOpt = None, config: ConfigOpt = None) -> None:
    """Recompute every agent's Elo, TrueSkill, record and rating history from the recorded games.

    Replays the games of the stage (every stage without --stage) in the order they were played,
    with the league's config (its config.yaml, and --config over it), and replaces the stored
    ratings in one transaction: a failure changes nothing. It repairs ratings an older rl-league
    stored out of range, and applies changed rating settings to the whole history.

    Example: league ratings rebuild --stage 1v1
    """
    from league.config import STAGES, team_size_of

    stages = [stage] if stage is not None else list(STAGES)
    team_sizes = [team_size_of(s) for s in stages]  # an unknown stage fails before anything is opened
    _, reg = open_league(home, config)
    try:
        for team_size in team_sizes:
            done = reg.game_store.rebuild(team_size)
            out.print(f"Rebuilt the {team_size}v{team_size} ratings of {done.agents} agents from {done.games} rated "
                      "games.", highlight=False)
    finally:
        reg.close()
