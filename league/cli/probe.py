"""`league probe NAME`: an exploitability probe (training.probe)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from league.cli.common import ConfigOpt, HomeOpt, check_minutes, handles_errors, out


@handles_errors
def probe_command(
    name: Annotated[str, typer.Argument(help="The agent to probe (it is frozen: only the probe trains).")],
    minutes: Annotated[float, typer.Option("--minutes", help="How long the probe trains.")] = 10.0,
    games: Annotated[int, typer.Option("--games", help="Games the probe then plays against NAME, half per side: an "
                                                       "even number.")] = 100,
    stage: Annotated[Optional[str], typer.Option("--stage", help="1v1, 2v2 or 3v3: for an agent that plays several "
                                                                 "(a baseline, a community bot).", show_default=False)] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the probe's training and games.")] = 0,
    from_: Annotated[Optional[str], typer.Option("--from", help="Start the probe from this league network's weights "
                                                                "(a copy of the teacher, a strong snapshot) instead of "
                                                                "a fresh network.", show_default=False)] = None,
    config: ConfigOpt = None,
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="Override any training config key.",
                                                      show_default=False)] = None,
    home: HomeOpt = None,
) -> None:
    """How exploitable NAME is: train a best response against it alone, then play it.

    The probe is kickstarted like any learner, or starts from AGENT's weights with --from AGENT (a
    probe must reach a strong target's level before its win rate says anything), and trains for
    --minutes with every game against NAME (frozen); its last snapshot then plays --games games
    against NAME (most likely actions). Its win rate, with a 95% interval, is a lower bound on NAME's
    exploitability; `league show NAME` lists it and `promotion.max_exploitability` can gate promotion
    on it. The probe's games are not rated and its snapshots are registered retired: no mix or
    tournament ever picks them up.

    Example: league probe mlp-1v1-v12 --minutes 10 --games 100
             league probe necto --stage 1v1 --from run-v21 --minutes 10
    """
    from league.cli.progress import budget_bar
    from league.home import resolve_home
    from league.registry import Registry
    from training.budget import Budget
    from training.probe import check_probe, run_probe

    check_minutes(minutes)  # the config's bound of a wall-clock budget; --games is check_probe's (GAMES_MAX)
    league_home = resolve_home(home).require()
    registry = Registry.open(league_home.db_path)
    check_probe(registry, name, games, stage, from_)  # before the progress bar: a bad request is one sentence
    bar, on_progress = budget_bar(Budget.from_limits(minutes=minutes))

    def playing() -> None:
        bar.stop()
        out.print(f"Playing {games} games against {name} ...", highlight=False)

    with bar:
        result = run_probe(league_home, registry, name, minutes, games, seed, stage, config, set_, on_progress,
                           on_games=playing, init_from=from_)
    low, high = result.interval
    start = f"from {result.start}, " if result.start else ""
    out.print(f"Probe {result.probe} ({start}{result.steps:,} steps in {minutes:g} min) against {result.target}: "
              f"{result.wins}-{result.draws}-{result.losses} (W-D-L) in {result.games} games; win rate "
              f"{result.win_rate:.0%} (95% interval {low:.0%}..{high:.0%}), a lower bound on how exploitable "
              f"{result.target} is.", highlight=False)
