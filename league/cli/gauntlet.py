"""`league gauntlet NAME`: one agent against each strong agent, a fixed match each (arena.gauntlet)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from league.cli.common import ConfigOpt, HomeOpt, handles_errors, out
from league.errors import LeagueError


@handles_errors
def gauntlet_command(
    name: Annotated[str, typer.Argument(help="The agent that runs the gauntlet (side A of every match).")],
    against: Annotated[Optional[str], typer.Option("--against", help="Comma-separated opponents (default: the evaluation panel NAME would meet in its run: its teacher, the community bots, the champion and past champions with their nemeses, the best snapshots of its run and of others).", show_default=False)] = None,
    games: Annotated[int, typer.Option("--games", help="Games against each opponent: an even number.")] = 200,
    stage: Annotated[str, typer.Option("--stage", help="1v1, 2v2 or 3v3.")] = "1v1",
    game_seconds: Annotated[Optional[float], typer.Option("--game-seconds", help="Game clock per game.", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Match seed, the same for every opponent (default from config): one no training or selection used.", show_default=False)] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Worker processes (default: one per core).", show_default=False)] = None,
    config: ConfigOpt = None,
    home: HomeOpt = None,
) -> None:
    """Play NAME against each of several opponents, GAMES games each, and say whether it held.

    Every opponent is an ordinary match (mirrored pairs, argmax, each game from its own opening,
    recorded and rated, as `league match NAME OPPONENT --max-games GAMES` plays it): run the same
    command again to finish an interrupted gauntlet, and it shows the matches already played. It ends
    with a table (record, score, Elo with its 95% interval, clearly ahead, level or clearly behind) and
    one line: NAME held when it scored at least half against every opponent.

    Example: league gauntlet run-v104 --seed 9701

    Example: league gauntlet run-v104 --against necto,element,old-v152 --games 200 --seed 9702
    """
    from arena.engine.cores import workers_or_default
    from arena.gauntlet import GauntletVerdict, gauntlet_row
    from arena.match import check_agents, check_max_games, match_outcome, start_or_resume_match
    from league.cli.match import play_with_progress
    from league.config import load_config, openings_text
    from league.home import resolve_home
    from league.registry import Registry

    league_home = resolve_home(home).require()
    cfg = load_config(stage=stage, user_file=config, home_file=league_home.config_path,
                      overrides={"seed": seed, "game.game_seconds": game_seconds})
    registry = Registry.open(league_home.db_path, cfg.ratings)
    agent = registry.agent_store.get(name)
    opponents = _opponents(registry, cfg, agent, against)
    check_max_games(games)
    for opponent in opponents:  # every pairing checked before the first game: a bad name wastes no match
        check_agents(registry, name, opponent, cfg.game.team_size)
    n = len(opponents)
    out.print(f"Gauntlet of {name}: {n} opponent{'s' * (n != 1)} ({', '.join(opponents)}), {games} games each, seed "
              f"{cfg.seed}, {cfg.game.game_seconds:g} s games, {openings_text(cfg.game.opening_jitter)}",
              highlight=False, soft_wrap=True)
    rows, workers = [], workers_or_default(workers)
    for i, opponent in enumerate(opponents, 1):
        run = start_or_resume_match(registry, league_home, cfg, name, opponent, max_games=games, workers=workers)
        state = "played" if run.already_finished else "resuming" if run.resumed else "playing"
        out.print(f"{i}/{n}: {name} vs {opponent} ({state}, match {run.id})", highlight=False)
        play_with_progress(run, resume_hint="Run the same command again to finish the gauntlet.")
        rows.append(gauntlet_row(registry, match_outcome(registry, run.id)))
    verdict = GauntletVerdict.of(name, rows)
    table = Table("opponent", "W-D-L", "score", "Elo (95%)", "", "match", title=f"Gauntlet of {name}")
    for r in sorted(rows, key=lambda r: r.score):
        table.add_row(r.opponent, str(r.record), f"{r.score:.1%}", f"{r.elo:+.0f} ({r.elo_lo:+.0f}..{r.elo_hi:+.0f})",
                      r.clearly, str(r.match_id))
    out.print(table)
    out.print(verdict.text(), highlight=False, soft_wrap=True)


def _opponents(registry, cfg, agent, against: str | None) -> list[str]:
    """The opponents named (each once, never the agent), or the evaluation panel the agent meets in its run."""
    if against is not None:
        names = list(dict.fromkeys(n.strip() for n in against.split(",") if n.strip()))
        if not names:
            raise LeagueError("--against names no agent; give comma-separated names, or leave it out for the panel.")
        if agent.name in names:
            raise LeagueError(f"--against names {agent.name!r} itself; a gauntlet plays other agents.")
        return names
    from league.names import split_version
    from training.panel import panel_members

    version = split_version(agent.name)
    run = version[0] if version else agent.name  # a snapshot's run; an imported agent is a run of its own
    teacher = agent.distilled_from.teacher if agent.distilled_from else None
    return panel_members(registry, cfg.game.team_size, agent.name, run=run, teacher=teacher, cfg=cfg.panel)
