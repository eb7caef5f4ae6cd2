"""`league match A B`: a head-to-head in mirrored pairs, stopped by an SPRT, with its statistics."""

from __future__ import annotations

import time
from typing import Annotated, Optional

import typer

from league.cli.common import ROW_ID, ConfigOpt, HomeOpt, handles_errors, out
from league.errors import LeagueError
from league.sprt_verdict import match_verdict

PAIR_LABELS = "LL LD WL+DD WD WW"


@handles_errors
def match_command(
    a: Annotated[Optional[str], typer.Argument(help="Agent A (the one tested for being better); in 2v2 and 3v3 also a mixed team, members joined by '+'.", show_default=False)] = None,
    b: Annotated[Optional[str], typer.Argument(help="Agent B, or a mixed team.", show_default=False)] = None,
    sprt: Annotated[Optional[str], typer.Option("--sprt", help="Stop at an SPRT decision: elo0=0,elo1=30,alpha=0.05,beta=0.05[,model=normalized|logistic]; keys left out keep these defaults.", show_default=False)] = None,
    max_games: Annotated[int, typer.Option("--max-games", help="The cap (with --sprt) or the games to play (without): an even number.")] = 400,
    stage: Annotated[str, typer.Option("--stage", help="1v1, 2v2 or 3v3.")] = "1v1",
    batch_pairs: Annotated[Optional[int], typer.Option("--batch-pairs", help="Pairs per batch, the SPRT checked after each (default: 4 per worker).", show_default=False)] = None,
    game_seconds: Annotated[Optional[float], typer.Option("--game-seconds", help="Game clock per game.", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Match seed (default from config).", show_default=False)] = None,
    opening_jitter: Annotated[Optional[float], typer.Option("--opening-jitter", help="uu each car's kickoff spot may move as a game opens, so every game opens its own line (default game.opening_jitter: 100; 0: the five standard spots, where two agents that play their most likely action replay one line from each). Kept by the match.", show_default=False)] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Worker processes (default: one per core).", show_default=False)] = None,
    arenas: Annotated[int, typer.Option("--arenas", help="Most games a worker plays at once.")] = 64,
    sampled: Annotated[bool, typer.Option("--sampled", help="Network agents draw each action from their policy (at the temperature they trained at) instead of playing the most likely one (argmax, the default, as tournaments and the RLBot export play); community and scripted bots play as always. Kept by the match: --resume plays it the same way.")] = False,
    resume: Annotated[Optional[int], typer.Option("--resume", help="Finish an interrupted match by id.", show_default=False, **ROW_ID)] = None,
    abandon: Annotated[Optional[int], typer.Option("--abandon", help="End an unfinished match for good (its games are kept).", show_default=False, **ROW_ID)] = None,
    config: ConfigOpt = None,
    home: HomeOpt = None,
) -> None:
    """Play agent A against agent B in mirrored pairs (same seed, sides swapped), recording and rating every game.

    With --sprt it stops as soon as the sequential probability ratio test accepts H1 (A is at
    least elo1 better) or H0 (A is no better than elo0), or at --max-games (inconclusive);
    without it, it plays --max-games games. Prints the pentanomial pair counts, the Elo
    difference with its 95% interval, LOS and the LLR. Interrupted (Ctrl-C, kill -9)? Run the
    same command again, or --resume ID; the same command after the match finished shows its
    result (give another --seed for a new match). In 2v2 and 3v3 a side may be a mixed team:
    one member per car joined by "+", each rated for the team's games. Network agents play their
    most likely action; with --sampled they draw it from their policy, as in training, at the
    temperature they trained at (a distilled student's 0.5): a match of its own, since the same
    command without --sampled is another match.

    Example: league match ppo-1v1-v13 ppo-1v1-v12 --sprt elo0=0,elo1=30 --max-games 400

    Example: league match "ppo-2v2-v4+necto" "rule+atba" --stage 2v2 --max-games 20

    Example: league match rule random --max-games 20 --game-seconds 60

    Example: league match ppo-1v1-v13 necto --max-games 100 --sampled
    """
    from arena.match import abandon_match, start_or_resume_match
    from arena.engine.cores import workers_or_default
    from league.config import load_config, openings_text
    from league.home import resolve_home
    from league.registry import Registry
    from league.sprt import SprtParams

    if arenas < 1:
        raise LeagueError("--arenas must be at least 1.")
    params = SprtParams.parse(sprt) if sprt is not None else None
    league_home = resolve_home(home).require()
    if abandon is not None:
        m = abandon_match(Registry.open(league_home.db_path), league_home, abandon,
                          reason="abandoned with league match --abandon")
        recorded = len(Registry.open(league_home.db_path).game_store.games(tournament_id=m.tournament_id))
        out.print(f"Match {abandon} abandoned; its {recorded} recorded games stay recorded and rated.", highlight=False)
        return
    cfg = load_config(stage=stage, user_file=config, home_file=league_home.config_path,
                      overrides={"seed": seed, "game.game_seconds": game_seconds,
                                 "game.opening_jitter": opening_jitter})
    registry = Registry.open(league_home.db_path, cfg.ratings)
    started = time.perf_counter()
    run = start_or_resume_match(registry, league_home, cfg, a, b, params=params, max_games=max_games,
                                batch_pairs=batch_pairs, workers=workers_or_default(workers), resume=resume,
                                max_arenas=arenas, deterministic=not sampled)
    m = run.match
    if run.already_finished:
        out.print(f"Match {m.id} ({m.a} vs {m.b}, {match_settings_text(m)}) already finished "
                  f"{m.finished[:19].replace('T', ' ')} UTC; give another --seed to play a new one.", highlight=False,
                  soft_wrap=True)
        print_match_result(m, None, 0)
        return
    recorded = f", {run.recorded} games recorded" if run.resumed else ""
    out.print(f"{'Resuming' if run.resumed else 'Starting'} match {m.id} (tournament {m.tournament_id}): {m.a} vs "
              f"{m.b}, {m.team_size}v{m.team_size}, {match_settings_text(m)}, batches of {m.batch_pairs} pairs, "
              f"{m.game_seconds:g} s games, {openings_text(m.opening_jitter)}{recorded}", highlight=False, soft_wrap=True)
    played = play_with_progress(run)
    from arena.match import match_outcome

    print_match_result(match_outcome(registry, m.id), time.perf_counter() - started, played)


def match_settings_text(m) -> str:
    """What a match plays: "SPRT elo0=0 elo1=30 ... at most 400 games, argmax" or "fixed 20 games,
    sampled" (how its network agents choose their actions)."""
    play = "argmax" if m.deterministic else "sampled"
    if m.params is None:
        return f"fixed {m.max_games} games, {play}"
    p = m.params
    return (f"SPRT elo0={p.elo0:g} elo1={p.elo1:g} alpha={p.alpha:g} beta={p.beta:g} ({p.model}), "
            f"at most {m.max_games} games, {play}")


def progress_line(p, max_games: int) -> str:
    """One batch of a match (arena.match.MatchProgress) as a line."""
    s = p.stats
    llr = "" if s.llr is None else f", LLR {s.llr:+.2f}"
    return (f"batch {p.batch}/{p.batches}: {s.games}/{max_games} games, pairs {list(s.counts)}{llr}, "
            f"Elo {s.elo:+.0f} [{s.elo_lo:+.0f}, {s.elo_hi:+.0f}], {p.elapsed_seconds:.0f} s")


def play_with_progress(run, resume_hint: str | None = None) -> int:
    """Plays the match's batches (arena.match.MatchRun), a progress bar on a terminal, a line per batch
    otherwise; the games played. Ctrl-C: one sentence saying how to finish the match (`resume_hint`:
    how, by default the same command or --resume ID)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    m = run.match
    played = 0
    try:
        if not out.is_terminal:
            for p in run.batches:
                played += p.played
                out.print(progress_line(p, m.max_games), highlight=False, soft_wrap=True)
            return played
        with Progress(TextColumn("[bold]match[/]"), BarColumn(), TextColumn("{task.completed}/{task.total} games"),
                      TextColumn("{task.fields[status]}"), TimeElapsedColumn(), console=out) as bar:
            task = bar.add_task("match", total=m.max_games, completed=0, status="")
            for p in run.batches:
                played += p.played
                llr = "" if p.stats.llr is None else f"LLR {p.stats.llr:+.2f} "
                bar.update(task, completed=p.stats.games, status=f"{llr}Elo {p.stats.elo:+.0f} {list(p.stats.counts)}")
        return played
    except KeyboardInterrupt:
        hint = resume_hint or f"Run the same command (or --resume {m.id}) to finish match {m.id}."
        raise LeagueError(f"Interrupted; {played} games recorded in this run. {hint}") from None


def print_match_result(m, wall_seconds: float | None, played: int) -> None:
    """A finished match (arena.match.MatchOutcome): its verdict and statistics (also `league promote --sprt`)."""
    s = m.stats
    rows = [("pairs " + PAIR_LABELS, " ".join(str(c) for c in s.counts)),
            ("Elo (logistic)", f"{s.elo:+.1f}  95% [{s.elo_lo:+.1f}, {s.elo_hi:+.1f}]"),
            ("normalized Elo", f"{s.nelo:+.1f}  95% [{s.nelo_lo:+.1f}, {s.nelo_hi:+.1f}]"),
            ("LOS", f"{100 * s.los:.1f}%"),
            ("games", f"{s.games} ({s.games // 2} pairs)" + (f", {played} played now" if wall_seconds else ""))]
    if m.params is not None:
        lower, upper = m.bounds
        rows.append(("LLR", f"{s.llr:+.3f}  bounds [{lower:+.3f}, {upper:+.3f}]"))
    if wall_seconds is not None:
        rows.append(("wall time", f"{wall_seconds:.1f} s"))
    verdict = match_verdict(m.mode, m.status, m.decision, m.params, m.a, m.b, s.games, m.max_games)
    out.print(f"{verdict}  (match {m.id})", highlight=False, soft_wrap=True)
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        out.print(f"  {key:<{width}}  {value}", highlight=False)
