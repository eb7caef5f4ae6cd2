"""`league tournament`: the command function (registered by league/cli.py)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from league.cli_common import ConfigOpt, HomeOpt, handles_errors, out


@handles_errors
def tournament_command(
    games: Annotated[Optional[int], typer.Option("--games", help="Games per pairing (default from config).", show_default=False)] = None,
    stage: Annotated[str, typer.Option("--stage", help="1v1, 2v2 or 3v3.")] = "1v1",
    agents: Annotated[Optional[str], typer.Option("--agents", help="Comma-separated entrants (default: every active agent).", show_default=False)] = None,
    no_baselines: Annotated[bool, typer.Option("--no-baselines", help="Leave out rule and random.")] = False,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Worker processes (default: one per core).", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Tournament seed.", show_default=False)] = None,
    resume: Annotated[Optional[int], typer.Option("--resume", help="Finish an interrupted tournament by id.", show_default=False)] = None,
    game_seconds: Annotated[Optional[float], typer.Option("--game-seconds", help="Game clock per game.", show_default=False)] = None,
    backend: Annotated[str, typer.Option("--backend", help="local (worker processes) or ray.")] = "local",
    arenas: Annotated[int, typer.Option("--arenas", help="Most games a worker plays at once.")] = 64,
    address: Annotated[Optional[str], typer.Option("--address", help="Ray cluster address (default: a local Ray instance).", show_default=False)] = None,
    abandon: Annotated[Optional[int], typer.Option("--abandon", help="End an unfinished tournament for good (its finished games are kept).", show_default=False)] = None,
    config: ConfigOpt = None,
    home: HomeOpt = None,
) -> None:
    """Play a round robin among the league's agents, recording every game's replay and updating ratings.

    Every pairing plays N games in mirrored pairs (same seed, sides swapped). Interrupted
    (Ctrl-C, kill -9)? Run the same command again, or --resume ID, to finish it; --abandon ID
    ends one that should never be finished (its games and ratings stay recorded).

    Example: league tournament --games 25 --stage 1v1

    Example: league tournament --abandon 3
    """
    import json

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.table import Table

    from arena.tournament import (
        claim_tournament,
        open_tournament,
        pending_games,
        resolve_entrants,
        run_tournament,
        standings,
    )
    from arena.vector import default_workers
    from league.config import load_config
    from league.errors import LeagueError
    from league.home import resolve_home
    from league.registry import Registry

    if arenas < 1:
        raise LeagueError("--arenas must be at least 1.")
    league_home = resolve_home(home).require()
    if backend == "ray" and address:
        from arena.tournament_ray import check_address

        check_address(address)  # before a tournament is stored for a cluster that is not there
    if abandon is not None:
        registry = Registry.open(league_home.db_path)
        with claim_tournament(registry, league_home, abandon):  # never one that another process is playing
            t = registry.abandon_tournament(abandon, "abandoned with league tournament --abandon")
        out.print(f"Tournament {abandon} abandoned; its {t['finished_games']} finished games stay recorded.",
                  highlight=False)
        return
    cfg = load_config(stage=stage, user_file=config, home_file=league_home.config_path,
                      overrides={"seed": seed, "game.game_seconds": game_seconds})
    registry = Registry.open(league_home.db_path, cfg.ratings)
    team_size = cfg.game.team_size
    if resume is not None:
        t = registry.tournament(resume)
        tid, resumed = resume, True
        game_seconds_used = json.loads(t["config_json"])["game"]["game_seconds"]
    else:
        n = games if games is not None else 2
        entrants = resolve_entrants(registry, team_size, agents.split(",") if agents else None, not no_baselines)
        tid, resumed = open_tournament(registry, cfg, team_size, n, cfg.seed, entrants)
        game_seconds_used = json.loads(registry.tournament(tid)["config_json"])["game"]["game_seconds"]
    # Claims the tournament before anything is printed: one that another process plays is left alone.
    outcomes = run_tournament(registry, league_home, tid, workers or default_workers(), game_seconds_used,
                              cfg.game.tick_skip, backend=backend, address=address, max_arenas=arenas)
    t = registry.tournament(tid)
    todo = len(pending_games(registry, tid))
    verb = "Resuming" if resumed else "Starting"
    out.print(f"{verb} tournament {tid}: {len(json.loads(t['entrants_json']))} entrants, "
              f"{t['planned_games']} games ({todo} to play), {game_seconds_used:g} s each", highlight=False)
    with Progress(TextColumn("[bold]games[/]"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]:.2f} games/s"), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=out) as bar:
        task = bar.add_task("games", total=t["planned_games"], completed=t["planned_games"] - todo, rate=0.0)
        import time

        start = time.perf_counter()
        played = 0
        try:
            for _ in outcomes:
                played += 1
                bar.update(task, advance=1, rate=played / (time.perf_counter() - start))
        except KeyboardInterrupt:
            raise LeagueError(f"Interrupted; {played} games recorded. Run the same command "
                              f"(or --resume {tid}) to finish tournament {tid}.") from None
    table = Table(title=f"Tournament {tid} standings")
    for col in ("#", "agent", "games", "W-D-L", "points", "GD", "elo"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for rank, r in enumerate(standings(registry, tid), 1):
        table.add_row(str(rank), r["name"], str(r["games"]), f"{r['wins']}-{r['draws']}-{r['losses']}",
                      f"{r['points']:g}", f"{r['gf'] - r['ga']:+d}", f"{registry.rating(r['name'], team_size)['elo']:.0f}")
    out.print(table)
