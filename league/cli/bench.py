"""`league bench env|tournament|train`: benchmarks that print figures (one run, ratios against references)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Optional

import typer

from league.cli.common import ConfigOpt, handles_errors, out
from league.errors import LeagueError

app = typer.Typer(help="Benchmarks that print figures from one run on this machine.", no_args_is_help=True,
                  rich_markup_mode=None)


def _rate(value: float) -> str:
    return f"{value:,.0f}"


def _times(value: float | None) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.2f}x"


def _env_rows(report) -> list[tuple[str, str, object, tuple[float | None, float | None] | None]]:
    """(label, note, Rate, runner ratios or None) per measurement, in table order: the one place the labels live."""
    scale = report.reference_scale
    rows = [("bare RocketSim (ceiling)", "arena.step(tick_skip), random controls, no game logic",
             report.bare_rocketsim, None)]
    if report.bare_rocketsim_one_process is not None:
        rows.append(("bare RocketSim, 1 process", "how much of the ceiling one core gives",
                     report.bare_rocketsim_one_process, None))
    rows.append((f"RLGym v2 standard env (reference) x{scale}", f"one process measured, scaled by {scale} cores",
                 report.reference, None))
    rows.append(("this runner, random actions", "VecGame, game worker processes", report.runner,
                 (report.runner_vs_ceiling, report.runner_vs_reference)))
    if report.runner_mlp is not None:
        rows.append(("this runner, MLP policy", "agents MLP actor-critic in the main process, one forward per step",
                     report.runner_mlp, (report.mlp_runner_vs_ceiling, report.mlp_runner_vs_reference)))
    if report.rollout is not None:
        rows.append(("rollout workers, random actions", "each worker process steps its arenas in-process, no "
                     "per-step hand-off", report.rollout, (report.rollout_vs_ceiling, report.rollout_vs_reference)))
    if report.rollout_mlp is not None:
        rows.append(("rollout workers, MLP policy", "each worker process steps its arenas and runs the MLP itself "
                     "(the rollout and ray backends)", report.rollout_mlp,
                     (report.rollout_mlp_vs_ceiling, report.rollout_mlp_vs_reference)))
    return rows


def _env_json(stage: str, report) -> dict:
    """The `--json` document of `league bench env` (its keys are the documented output)."""
    nan = float("nan")
    return {
        "stage": stage, "team_size": report.team_size, "tick_skip": report.tick_skip, "workers": report.workers,
        "envs_per_worker": report.envs_per_worker, "seconds": report.seconds, "rounds": report.rounds,
        "reference_scale": report.reference_scale,
        "measurements": [{"name": name, "processes": rate.processes, "env_steps_per_s": rate.env_steps_per_second,
                          "agent_steps_per_s": rate.agent_steps_per_second, "ticks_per_s": rate.ticks_per_second,
                          "note": note} for name, note, rate, _ in _env_rows(report)],
        "parallel_scaling": report.parallel_scaling,
        "runner_vs_ceiling": report.runner_vs_ceiling, "runner_vs_reference": report.runner_vs_reference,
        "mlp_runner_vs_ceiling": nan if report.mlp_runner_vs_ceiling is None else report.mlp_runner_vs_ceiling,
        "mlp_runner_vs_reference": nan if report.mlp_runner_vs_reference is None else report.mlp_runner_vs_reference,
        "inference_threads": report.inference_threads,  # torch threads of the MLP row; null without it
        "rollout_vs_ceiling": nan if report.rollout_vs_ceiling is None else report.rollout_vs_ceiling,
        "rollout_vs_reference": nan if report.rollout_vs_reference is None else report.rollout_vs_reference,
        "rollout_mlp_vs_ceiling": nan if report.rollout_mlp_vs_ceiling is None else report.rollout_mlp_vs_ceiling,
        "rollout_mlp_vs_reference": nan if report.rollout_mlp_vs_reference is None else report.rollout_mlp_vs_reference,
    }


@app.command("env")
@handles_errors
def env(
    stage: Annotated[str, typer.Option("--stage", help="Team size: 1v1, 2v2 or 3v3.")] = "1v1",
    workers: Annotated[Optional[int], typer.Option(
        "--workers", help="Game worker processes (default: runner.workers; 0 = one per core).", show_default=False)] = None,
    envs_per_worker: Annotated[Optional[int], typer.Option(
        "--envs-per-worker", help="Arenas per worker (default: runner.envs_per_worker).", show_default=False)] = None,
    seconds: Annotated[float, typer.Option("--seconds", help="Measured seconds per measurement.")] = 5.0,
    warmup: Annotated[float, typer.Option("--warmup", help="Warm-up seconds before measuring each.")] = 1.0,
    mlp: Annotated[bool, typer.Option("--mlp/--no-mlp", help="Also measure the runner with an MLP policy.")] = True,
    json_file: Annotated[Optional[Path], typer.Option(
        "--json", help="Also write the figures to this JSON file.", show_default=False)] = None,
    config: ConfigOpt = None,
) -> None:
    """Game throughput: bare RocketSim (the ceiling), RLGym's standard env (the reference), this runner.

    Everything runs in one go on the same cores, interleaved in one-second rounds; quote the
    ratios, not the absolute rates (these machines are noisy).

    Example: league bench env --stage 3v3 --workers 2 --envs-per-worker 32 --json bench.json
    """
    from league.config import load_config, team_size_of

    team_size_of(stage)  # an unknown stage fails before any other check
    if not seconds > 0 or warmup < 0:
        raise LeagueError(f"--seconds must be positive and --warmup not negative, got {seconds:g} and {warmup:g}.")
    if (workers is not None and workers < 0) or (envs_per_worker is not None and envs_per_worker < 1):
        raise LeagueError("--workers must be 0 or more and --envs-per-worker at least 1.")
    cfg = load_config(stage=stage, user_file=config)

    from arena.engine.vector import envs_per_worker_of
    from training.measure.env import bench_env

    with out.status(f"Measuring {stage} game throughput (about {6 * (seconds + warmup) + 5:.0f} s)..."):
        report = bench_env(
            team_size=cfg.game.team_size,
            workers=cfg.runner.workers if workers is None else workers,
            envs_per_worker=envs_per_worker or envs_per_worker_of(cfg.runner),
            tick_skip=cfg.game.tick_skip,
            seconds=seconds,
            include_mlp=mlp,
            seed=cfg.seed,
            warmup_seconds=warmup,
            policy_config=cfg.policy if cfg.policy.kind == "mlp" else None,
        )
    _print_report(stage, report)
    if json_file is not None:
        try:
            json_file.write_text(json.dumps(_env_json(stage, report), indent=2) + "\n")
        except OSError as exc:
            raise LeagueError(f"Cannot write {json_file}: {exc.strerror}.") from None
        out.print(f"Wrote {json_file}", highlight=False)


def _print_report(stage: str, report) -> None:
    from rich.table import Table

    ceiling, reference = report.bare_rocketsim_ticks_per_second, report.reference_ticks_per_second
    table = Table(title=f"Game throughput, {stage}, tick skip {report.tick_skip}, {report.workers} workers x "
                        f"{report.envs_per_worker} arenas, {report.rounds} rounds")
    for col in ("measurement", "procs", "env steps/s", "agent steps/s", "physics ticks/s", "vs ceiling", "vs reference"):
        table.add_column(col, justify="left" if col == "measurement" else "right")
    for name, _, m, ratios in _env_rows(report):
        vs_ceiling, vs_reference = ratios or (m.ticks_per_second / ceiling, m.ticks_per_second / reference)
        table.add_row(name, str(m.processes), _rate(m.env_steps_per_second), _rate(m.agent_steps_per_second),
                      _rate(m.ticks_per_second), _times(vs_ceiling), _times(vs_reference))
    out.print(table)
    out.print(
        f"Reference = one RLGym process x {report.reference_scale} (linear scaling to the runner's cores assumed). "
        f"Measured here, {report.workers} bare-RocketSim processes together did {report.parallel_scaling:.2f}x "
        "the work of one. Runner ratios are medians of per-round ratios; other rows are ratios of medians."
        + (f" The MLP ran with {report.inference_threads} torch thread(s), the faster here."
           if report.inference_threads else ""),
        highlight=False,
    )


@app.command("tournament")
@handles_errors
def tournament(
    games: Annotated[int, typer.Option("--games", help="Games per pairing of the 4 entrants.")] = 2,
    game_seconds: Annotated[float, typer.Option("--game-seconds", help="Game clock per game.")] = 60.0,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Worker processes (default: one per core).",
                                                   show_default=False)] = None,
    json_file: Annotated[Optional[Path], typer.Option("--json", help="Also write the figures to this JSON file.",
                                                      show_default=False)] = None,
    bots: Annotated[Optional[Path], typer.Option(
        "--bots", help="A folder holding Necto/ and Element/ from the RLBot botpack: also time the round robin "
                       "with them in the MLPs' places.", show_default=False)] = None,
) -> None:
    """A 4-agent 1v1 round robin (rule, random, two MLPs) timed against bare RocketSim on the same cores.

    Example: league bench tournament --games 25 --game-seconds 300

    Example: league bench tournament --bots ~/RLBotPack/RLBotPack
    """
    from rich.table import Table

    from arena.engine.cores import workers_or_default
    from training.measure.tournament import bench_tournament

    if games < 1 or game_seconds <= 0:
        raise LeagueError("--games must be at least 1 and --game-seconds positive.")
    r = bench_tournament(games, game_seconds, workers_or_default(workers), bots=bots)
    table = Table(title=f"Tournament: {r.games} games of {r.game_seconds:g} s, {r.workers} workers")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("wall seconds", f"{r.wall_seconds:.1f}")
    table.add_row("games/s", f"{r.games_per_second:.2f}")
    table.add_row("simulated game-seconds per wall-second", f"{r.sim_seconds_per_wall_second:,.0f}")
    table.add_row("bare RocketSim ticks/s, same processes", _rate(r.ceiling_ticks_per_second))
    table.add_row("bare physics seconds for the same game time", f"{r.bare_physics_seconds:.1f}")
    table.add_row("tournament time / bare physics time", f"{r.times_bare_physics:.2f}x")
    if r.community_wall_seconds is not None:
        table.add_row("with Necto and Element for the MLPs: games/s", f"{r.games / r.community_wall_seconds:.2f}")
        table.add_row("games/s with them / without", f"{r.community_over_plain:.2f}x")
    out.print(table)
    if json_file is not None:
        json_file.write_text(json.dumps({
            "games": r.games, "game_seconds": r.game_seconds, "workers": r.workers, "wall_seconds": r.wall_seconds,
            "games_per_second": r.games_per_second, "sim_seconds_per_wall_second": r.sim_seconds_per_wall_second,
            "ceiling_ticks_per_second": r.ceiling_ticks_per_second, "bare_physics_seconds": r.bare_physics_seconds,
            "times_bare_physics": r.times_bare_physics, "community_wall_seconds": r.community_wall_seconds,
            "community_over_plain": r.community_over_plain}, indent=2))


@app.command("train")
@handles_errors
def bench_train_command(
    stage: Annotated[str, typer.Option("--stage", help="1v1, 2v2 or 3v3.")] = "1v1",
    iterations: Annotated[int, typer.Option("--iterations", help="Measured PPO iterations (after one warm-up).")] = 4,
    batch: Annotated[int, typer.Option("--batch", help="Agent steps per iteration (one minibatch).")] = 50_000,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Game worker processes.", show_default=False)] = None,
    envs_per_worker: Annotated[Optional[int], typer.Option("--envs-per-worker", help="Arenas per worker.", show_default=False)] = None,
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="Override any config key.", show_default=False)] = None,
    backends: Annotated[str, typer.Option(
        "--backends", help="Collection backends to compare, in order (the first is the reference of the ratios): "
                           "central, central-pipelined, rollout, ray (runner.backend's choices).")] = "central,central-pipelined,rollout,ray",
) -> None:
    """End-to-end training throughput (updates included) of each collection backend, and the split between
    collection, inference and update.

    Example: league bench train --stage 1v1 --iterations 4

    Example: league bench train --backends rollout,ray
    """
    from rich.table import Table

    from league.config import team_size_of
    from training.measure.train import bench_train

    team_size_of(stage)  # an unknown stage fails before any other check
    if iterations < 1 or batch < 1:
        raise LeagueError("--iterations and --batch must be at least 1.")
    chosen = tuple(b.strip() for b in backends.split(",") if b.strip())
    r = bench_train(stage, iterations, batch, workers, envs_per_worker, set_, chosen)
    table = Table(title=f"Training throughput, {stage}, {r.batch:,} agent steps per iteration")
    table.add_column("measure")
    table.add_column("value", justify="right")
    first = chosen[0]
    for backend, (rate, share) in (r.backends or {}).items():
        table.add_row(f"{backend}: end to end (agent steps/s, updates included)", f"{rate:,.0f}")
        if backend != first:
            table.add_row(f"{backend} / {first}", f"{r.against(backend, first):.2f}x")
        table.add_row(f"{backend}: time in collection / inference / update",
                      " / ".join(f"{v:.0%}" for v in share.parts().values()))
    table.add_row("collection only, same workers (agent steps/s)", f"{r.collection_only_steps_per_second:,.0f}")
    if r.update_rows_per_second:
        table.add_row(f"the PPO update alone (samples/s, one epoch of {r.batch:,})", f"{r.update_rows_per_second:,.0f}")
        table.add_row(f"{first}: limit (collection, its inference and {r.epochs} epoch(s) of update in sequence)",
                      f"{r.limit_steps_per_second:,.0f}")
        table.add_row(f"{first} / its limit", f"{r.ratio_to_limit:.2f}x")
    for backend, (rate, _) in (r.backends or {}).items():
        table.add_row(f"{backend} / collection only", f"{rate / r.collection_only_steps_per_second:.2f}x")
    out.print(table)
