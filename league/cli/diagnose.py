"""`league diagnose`: performance diagnostics printed as tables, optionally against a baseline."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated

import typer

from league.cli.common import ConfigOpt, handles_errors, out
from league.errors import LeagueError

SECTIONS = {"env": "Environment speed", "inference": "Inference latency", "update": "PPO update",
            "train": "Short training run", "system": "CPU and memory", "gpu": "GPU",
            "scale": "Scale profile (share of the run's wall time)"}


@dataclass(frozen=True)
class Figure:
    """One row of the tables and one entry of the `--json` file: a typed report field under its key and label."""

    key: str  # "env.runner.env_steps_per_s": its first part is the section
    label: str
    value: float | None  # None: not measurable here (e.g. GPU figures on a CPU machine)
    unit: str
    better: str = "higher"  # higher | lower | "" (a setting or a count, not a figure of merit)


def figures(report) -> list[Figure]:
    """Every figure of a Diagnosis, in print order: the one place its typed fields meet their JSON keys and labels."""
    out: list[Figure] = []
    if (env := report.env) is not None:
        out += [Figure("env.ceiling.ticks_per_s", f"bare RocketSim ceiling, {env.workers} process(es)",
                       env.bare_rocketsim_ticks_per_second, "ticks/s"),
                Figure("env.reference.ticks_per_s", f"RLGym v2 standard env x{env.reference_scale} cores",
                       env.reference_ticks_per_second, "ticks/s")]
        for key, label, rate in (("runner", "runner, random actions", env.runner),
                                 ("runner_mlp", "runner, MLP policy", env.runner_mlp)):
            out += [Figure(f"env.{key}.env_steps_per_s", f"{label}: env steps/s", rate.env_steps_per_second, "steps/s"),
                    Figure(f"env.{key}.agent_steps_per_s", f"{label}: agent steps/s", rate.agent_steps_per_second,
                           "steps/s"),
                    Figure(f"env.{key}.ticks_per_s", f"{label}: physics ticks/s", rate.ticks_per_second, "ticks/s")]
        out += [Figure("env.runner_vs_ceiling", "runner / ceiling", env.runner_vs_ceiling, "x"),
                Figure("env.runner_mlp_vs_ceiling", "runner with MLP / ceiling", env.mlp_runner_vs_ceiling, "x"),
                Figure("env.runner_vs_reference", "runner / reference", env.runner_vs_reference, "x"),
                Figure("env.parallel_scaling", f"{env.workers} bare process(es) / 1 (cores' worth)",
                       env.parallel_scaling, "x")]
    if (inference := report.inference) is not None:
        for lat in inference.latencies:
            base, name = f"inference.{lat.device}.batch{lat.batch}", f"{lat.device}, batch {lat.batch}"
            out += [Figure(f"{base}.p50_ms", f"{name}: p50", lat.p50_ms, "ms", "lower"),
                    Figure(f"{base}.p95_ms", f"{name}: p95", lat.p95_ms, "ms", "lower"),
                    Figure(f"{base}.p99_ms", f"{name}: p99", lat.p99_ms, "ms", "lower"),
                    Figure(f"{base}.rows_per_s", f"{name}: rows/s at p50", lat.rows_per_second, "rows/s")]
        b = inference.batching
        out += [Figure("inference.batching.rows", "rows per training step (workers x arenas x cars)", b.rows, "rows", ""),
                Figure("inference.batching.batched_ms", "one batched forward over all rows", b.batched_ms, "ms",
                       "lower"),
                Figure("inference.batching.per_row_ms", "one forward per row (batch 1), all rows", b.per_row_ms, "ms",
                       "lower"),
                Figure("inference.batching.speedup", "batched speed-up over per-row forwards", b.speedup, "x")]
    if (update := report.update) is not None:
        out += [Figure("update.minibatch_rows", "rows per minibatch (ppo.minibatch_size)", update.minibatch_rows,
                       "rows", ""),
                Figure("update.ms_per_minibatch", "PPO update time per minibatch", update.ms_per_minibatch, "ms",
                       "lower"),
                Figure("update.rows_per_s", "PPO update rows/s", update.rows_per_second, "rows/s")]
    if (train := report.train) is not None:
        out += [Figure("train.batch", f"agent steps per iteration ({train.iterations} measured)", train.batch, "steps",
                       ""),
                Figure("train.agent_steps_per_s", "end to end, updates included", train.agent_steps_per_second,
                       "steps/s"),
                Figure("train.collection_steps_per_s", "collection only, same workers",
                       train.collection_only_steps_per_second, "steps/s"),
                Figure("train.vs_collection", "end to end / collection only", train.ratio, "x")]
        out += [Figure(f"train.share.{k}", f"time in {k}", v * 100, "%", "") for k, v in train.share.parts().items()]
    if (system := report.system) is not None:
        cores = report.machine.cpu_count
        out += [Figure("system.cpu.driver_percent", "driver process CPU (100 = one core)", system.driver_cpu_percent,
                       "%", "")]
        out += [Figure(f"system.cpu.worker{i}_percent", f"game worker {i} CPU", w, "%", "")
                for i, w in enumerate(system.worker_cpu_percent)]
        out += [Figure("system.cpu.total_percent", f"all processes CPU ({cores} cores = {100 * (cores or 1)}%)",
                       system.total_cpu_percent, "%", ""),
                Figure("system.memory.driver_peak_mib", "driver peak RSS", system.driver_peak_mib, "MiB", "lower"),
                Figure("system.memory.worker_peak_mib", "largest game worker peak RSS", system.worker_peak_mib, "MiB",
                       "lower"),
                Figure("system.memory.total_peak_mib", "all processes together, peak RSS", system.total_peak_mib,
                       "MiB", "lower")]
    if (gpu := report.gpu) is not None:
        out += [Figure("gpu.utilization_mean_percent", "GPU utilisation, mean (NVML)", gpu.utilization_mean_percent,
                       "%"),
                Figure("gpu.utilization_max_percent", "GPU utilisation, max (NVML)", gpu.utilization_max_percent, "%"),
                Figure("gpu.utilization_collection_percent", "GPU utilisation during collection, mean",
                       gpu.utilization_collection_percent, "%"),
                Figure("gpu.utilization_update_percent", "GPU utilisation during the PPO update, mean",
                       gpu.utilization_update_percent, "%"),
                Figure("gpu.memory_used_peak_mib", "GPU memory used, whole device, peak", gpu.memory_used_peak_mib,
                       "MiB", "lower"),
                Figure("gpu.torch_allocated_peak_mib", "GPU memory allocated by torch, peak",
                       gpu.torch_allocated_peak_mib, "MiB", "lower")]
    if (scale := report.scale) is not None:
        out += scale_figures(scale)
    out.append(Figure("system.memory.run_peak_mib", "peak RSS of all processes over the whole diagnosis",
                      report.run_peak_mib, "MiB", "lower"))
    return out


def scale_figures(scale) -> list[Figure]:
    """The scale profile's figures: rate, the collectors' mean and busiest share per phase, the learner's
    phases, each core's busy share and the GPU's (mean, and per tenth of the run)."""
    out = [Figure("scale.agent_steps_per_s", f"end to end ({scale.backend}, {scale.collectors} collector(s), "
                  f"{'pipelined' if scale.pipelined else 'not pipelined'}, {scale.device})",
                  scale.agent_steps_per_second, "steps/s")]
    for phase, mean in scale.worker_mean().items():
        key = phase.replace(" ", "_")
        out += [Figure(f"scale.collector.{key}_percent", f"collectors: {phase}, mean", mean, "%", ""),
                Figure(f"scale.collector.{key}_max_percent", f"collectors: {phase}, largest",
                       max(w.get(phase, 0.0) for w in scale.workers), "%", "")]
    out += [Figure(f"scale.learner.{p.split(' ')[0]}_percent", f"learner: {p}", v, "%", "")
            for p, v in scale.learner.items()]
    out += [Figure(f"scale.cpu.core{i}_percent", f"core {i} busy", v, "%", "")
            for i, v in enumerate(scale.core_busy_percent)]
    out.append(Figure("scale.gpu.busy_mean_percent", "GPU busy, mean (NVML)", scale.gpu_busy_mean, "%"))
    if scale.gpu_busy_mean is not None:  # no rows of dashes on a machine without a GPU
        out += [Figure(f"scale.gpu.window{i}_percent", f"GPU busy, tenth {i + 1} of the run", v, "%")
                for i, v in enumerate(scale.gpu_busy_windows)]
    return out


def _print_collectors(scale) -> None:
    """One row per collector, one column per phase (share of the run's wall time, %)."""
    from rich.table import Table

    from training.measure.scale import ordered

    phases = ordered({p for w in scale.workers for p in w})
    table = Table(title=f"Collectors: where each one's time went ({scale.seconds:.0f} s, % of wall time)")
    table.add_column("collector")
    for phase in phases:
        table.add_column(phase, justify="right")
    for i, w in enumerate(scale.workers):
        table.add_row(str(i), *(f"{w.get(p, 0.0):.1f}" for p in phases))
    if len(scale.workers) > 1:
        table.add_row("mean", *(f"{v:.1f}" for v in scale.worker_mean().values()))
    out.print(table)


def json_document(report) -> dict:
    """The `--json` file (docs/diagnose.md): format, settings, machine, notes and every figure by key."""
    from training.measure.diagnose import FORMAT, VERSION

    return {"format": FORMAT, "version": VERSION, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "tests": report.tests, "seconds": round(report.seconds, 1), "settings": asdict(report.settings),
            "machine": asdict(report.machine), "notes": report.notes,
            "figures": {f.key: {"value": f.value, "unit": f.unit, "label": f.label, "better": f.better}
                        for f in figures(report)}}


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "x":
        return f"{value:.2f}x"
    if unit in ("ms",):
        return f"{value:.3f}" if value < 10 else f"{value:,.1f}"
    if unit in ("%", "MiB"):
        return f"{value:,.1f}"
    return f"{value:,.0f}"


def _ratio(value: float | None, better: str) -> str:
    if value is None:
        return "-"
    text = f"{value:.2f}x"
    if better and abs(value - 1) >= 0.05:  # a change worth a colour: green when better
        good = value > 1 if better == "higher" else value < 1
        return f"[green]{text}[/]" if good else f"[red]{text}[/]"
    return text


@handles_errors
def diagnose_command(
    test: Annotated[str, typer.Option("--test", help="env, inference, train, gpu, scale, or all (all but scale: "
                                                     "`--test scale` is where a many-core run loses its time)."
                                      )] = "all",
    json_file: Annotated[Path | None, typer.Option(
        "--json", help="Also write the figures to this JSON file (atomically).", show_default=False)] = None,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", help="An earlier --json file: print each figure as a ratio to it.", show_default=False)] = None,
    stage: Annotated[str | None, typer.Option("--stage", help="1v1, 2v2 or 3v3.", show_default=False)] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Tiny budgets (about 20 s in all): a smoke check, "
                                                        "not figures to quote.")] = False,
    config: ConfigOpt = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Override any config key: --set training.amp=bf16.", show_default=False)] = None,
) -> None:
    """Performance diagnostics: environment speed, inference latency, PPO update time, CPU, memory and GPU use.

    Take it before and after every optimisation: write the first run with --json, then measure
    the change against it with --baseline (ratios; these machines are noisy, repeat a run
    before believing a change under 10%). The env and train figures come from the code of
    `league bench env` and `league bench train`.

    Example: league diagnose --json before.json; league diagnose --set training.amp=bf16 --baseline before.json
    """
    import os

    # As `league bench env` does: idle OpenMP threads must sleep, not spin, or the policy's threads
    # take the cores back from the game workers (read once, when torch is first imported).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from league.config import load_config, team_size_of
    from training.measure.diagnose import ALL_TESTS, TESTS, MeasureTimes, diagnose, read_baseline, write_json

    if test != "all" and test not in TESTS:
        raise LeagueError(f"Unknown test {test!r}; expected one of {', '.join(TESTS)} or all.")
    if stage is not None:
        team_size_of(stage)  # an unknown stage fails before any measuring
    before = read_baseline(baseline) if baseline is not None else None  # a bad file fails before any measuring
    cfg = load_config(stage=stage, user_file=config, sets=set_)
    tests = list(ALL_TESTS) if test == "all" else [test]
    with out.status("Diagnosing...") as status:
        report = diagnose(cfg, tests, MeasureTimes.quick() if quick else MeasureTimes(), sets=set_, user_file=config,
                          on_test=lambda name: status.update(f"Diagnosing: {name}..."))
    _print_report(report, before)
    if json_file is not None:
        write_json(json_document(report), json_file)
        out.print(f"Wrote {json_file}", highlight=False)
    out.print(f"Diagnosis took {report.seconds:.0f} s.", highlight=False)


def _print_report(report, before: dict[str, float] | None) -> None:
    """The notes, the settings measured with, then one table per section (with ratios to `before`)."""
    from rich.table import Table

    from training.measure.diagnose import ratio

    for note in report.notes:
        out.print(note, highlight=False)
    s = report.settings
    out.print(f"{s.stage}, tick skip {s.tick_skip}, {s.workers} workers x {s.envs_per_worker} arenas, "
              f"{s.policy} {s.actor_sizes}, AMP {s.amp}, compile {s.compile}, pin memory "
              f"{s.pin_memory}, {s.torch_threads} learner thread(s)" + (" (quick)" if s.quick else ""),
              highlight=False)
    by_section: dict[str, list] = {}
    for f in figures(report):
        by_section.setdefault(f.key.split(".")[0], []).append(f)
    for section, rows in by_section.items():
        if section == "scale":
            _print_collectors(report.scale)
            rows = [f for f in rows if not f.key.startswith("scale.collector.")]  # the table above shows them
        table = Table(title=SECTIONS.get(section, section))
        table.add_column("figure")
        table.add_column("value", justify="right")
        table.add_column("unit")
        if before is not None:
            table.add_column("baseline", justify="right")
            table.add_column("now / baseline", justify="right")
        for f in rows:
            row = [f.label, _number(f.value, f.unit), f.unit]
            if before is not None:
                row += [_number(before.get(f.key), f.unit), _ratio(ratio(f.value, before.get(f.key)), f.better)]
            table.add_row(*row)
        out.print(table)
