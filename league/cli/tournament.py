"""`league tournament`: play (or resume, or abandon) a round robin, with a progress bar and the standings."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from league.cli.common import ROW_ID, ConfigOpt, HomeOpt, handles_errors, out
from league.config_tree import renamed_note
from league.errors import LeagueError


@handles_errors
def tournament_command(
    games: Annotated[Optional[int], typer.Option("--games", help="Games per pairing (default from config).", show_default=False)] = None,
    stage: Annotated[str, typer.Option("--stage", help="1v1, 2v2 or 3v3.")] = "1v1",
    agents: Annotated[Optional[str], typer.Option("--agents", help="Comma-separated entrants (default: every active agent).", show_default=False)] = None,
    teams: Annotated[Optional[str], typer.Option("--teams", help="Comma-separated teams instead of agents, in 2v2 or 3v3: each the members joined by '+' (one per car), or one agent playing every car.", show_default=False)] = None,
    no_baselines: Annotated[bool, typer.Option("--no-baselines", help="Leave out rule and random.")] = False,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Worker processes (default: one per core).", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Tournament seed.", show_default=False)] = None,
    resume: Annotated[Optional[int], typer.Option("--resume", help="Finish an interrupted tournament by id.", show_default=False, **ROW_ID)] = None,
    game_seconds: Annotated[Optional[float], typer.Option("--game-seconds", help="Game clock per game.", show_default=False)] = None,
    opening_jitter: Annotated[Optional[float], typer.Option("--opening-jitter", help="uu each car's kickoff spot may move as a game opens (default game.opening_jitter: 100; 0: the five standard spots). Kept by the tournament.", show_default=False)] = None,
    placement: Annotated[str, typer.Option("--placement", help="Where the game workers run: processes (worker processes on this machine) or ray (actors on a Ray cluster).")] = "processes",
    backend: Annotated[Optional[str], typer.Option("--backend", hidden=True, help="The old name of --placement.")] = None,
    arenas: Annotated[int, typer.Option("--arenas", help="Most games a worker plays at once.")] = 64,
    address: Annotated[Optional[str], typer.Option("--address", help="Ray cluster address (default: a local Ray instance).", show_default=False)] = None,
    abandon: Annotated[Optional[int], typer.Option("--abandon", help="End an unfinished tournament for good (its finished games are kept).", show_default=False, **ROW_ID)] = None,
    config: ConfigOpt = None,
    home: HomeOpt = None,
) -> None:
    """Play a round robin among the league's agents, recording every game's replay and updating ratings.

    Every pairing plays N games in mirrored pairs (same seed, sides swapped). Interrupted
    (Ctrl-C, kill -9)? Run the same command again, or --resume ID, to finish it; --abandon ID
    ends one that should never be finished (its games and ratings stay recorded). --teams plays
    a round robin of mixed teams instead: each member drives one car and is rated for every game
    its team plays; the standings list the members.

    Example: league tournament --games 25 --stage 1v1

    Example: league tournament --stage 2v2 --teams "ppo-2v2-v4+necto,rule+atba,rule-pro"

    Example: league tournament --abandon 3
    """
    from arena.tournament import abandon_tournament, start_or_resume_tournament
    from arena.engine.cores import workers_or_default
    from league.config import load_config, openings_text
    from league.home import resolve_home
    from league.registry import Registry

    if arenas < 1:
        raise LeagueError("--arenas must be at least 1.")
    if backend is not None:  # "backend" is training's word (runner.backend); a tournament's is where it plays
        if placement != "processes" and placement != backend:
            raise LeagueError("Give --placement alone (--backend is its old name).")
        renamed_note("--backend", "option", "--backend", "--placement")
        placement = backend
    if address is not None and placement != "ray":
        raise LeagueError("--address goes with --placement ray.")
    entrants = _entrants(agents)
    sides = _entrants(teams, "--teams", "team")
    league_home = resolve_home(home).require()
    if abandon is not None:
        t = abandon_tournament(Registry.open(league_home.db_path), league_home, abandon,
                               reason="abandoned with league tournament --abandon")
        out.print(f"Tournament {abandon} abandoned; its {t.finished_games} finished games stay recorded.",
                  highlight=False)
        return
    cfg = load_config(stage=stage, user_file=config, home_file=league_home.config_path,
                      overrides={"seed": seed, "game.game_seconds": game_seconds,
                                 "game.opening_jitter": opening_jitter})
    registry = Registry.open(league_home.db_path, cfg.ratings)
    # Claims the tournament before anything is printed: one that another process plays is left alone.
    run = start_or_resume_tournament(
        registry, league_home, cfg, resume=resume, games_per_pair=games if games is not None else 2,
        agents=entrants, baselines=not no_baselines, teams=sides, workers=workers_or_default(workers),
        placement=placement, address=address, max_arenas=arenas)
    out.print(f"{'Resuming' if run.resumed else 'Starting'} tournament {run.id}: {len(run.entrants)} entrants, "
              f"{run.planned_games} games ({run.to_play} to play), {run.game_seconds:g} s each, "
              f"{openings_text(run.opening_jitter)}", highlight=False)
    play_with_progress(run)
    _print_standings(registry, run.id)


def _entrants(agents: str | None, option: str = "--agents", what: str = "agent") -> list[str] | None:
    """The --agents (or --teams) list (None: every active agent); an empty list or an empty name is
    refused, never read as "all"."""
    if agents is None:
        return None
    names = [name.strip() for name in agents.split(",")]
    if not any(names):
        raise LeagueError(f"{option} lists no {what}; give names separated by commas, or leave {option} out to "
                          "enter every active agent.")
    if not all(names):
        raise LeagueError(f"{option} {agents!r} has an empty name between its commas.")
    return names


def play_with_progress(run) -> None:
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with Progress(TextColumn("[bold]games[/]"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]:.2f} games/s"), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=out) as bar:
        task = bar.add_task("games", total=run.planned_games, completed=run.planned_games - run.to_play, rate=0.0)
        start = time.perf_counter()
        played = 0
        try:
            for _ in run.games:
                played += 1
                bar.update(task, advance=1, rate=played / (time.perf_counter() - start))
        except KeyboardInterrupt:
            raise LeagueError(f"Interrupted; {played} games recorded. Run the same command "
                              f"(or --resume {run.id}) to finish tournament {run.id}.") from None


def _print_standings(registry, tid: int) -> None:
    from rich.table import Table

    from league.standings import read_tournament_standings

    rows = read_tournament_standings(registry.db, tid, registry.ratings_cfg).rows
    mixed = any(r.mixed for r in rows)  # a tournament of mixed teams lists their members, rated one by one
    table = Table(title=f"Tournament {tid} standings{' (members of mixed teams)' if mixed else ''}")
    for col in ("#", "agent", "games", "W-D-L", "points", "GD", "elo"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for r in rows:
        table.add_row(str(r.rank), r.name, str(r.games), f"{r.wins}-{r.draws}-{r.losses}", f"{r.points:g}",
                      f"{r.gd:+d}", f"{r.elo:.0f}")
    out.print(table)
