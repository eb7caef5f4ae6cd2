"""`league diagnose`: performance diagnostics printed as tables, optionally against a baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from league.cli.common import ConfigOpt, handles_errors, out
from league.errors import LeagueError

SECTIONS = {"env": "Environment speed", "inference": "Inference latency", "update": "PPO update",
            "train": "Short training run", "system": "CPU and memory", "gpu": "GPU"}


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
    test: Annotated[str, typer.Option("--test", help="env, inference, train, gpu or all.")] = "all",
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
    from training.diagnose import TESTS, Budget, diagnose, read_baseline, write_json

    if test != "all" and test not in TESTS:
        raise LeagueError(f"Unknown test {test!r}; expected one of {', '.join(TESTS)} or all.")
    if stage is not None:
        team_size_of(stage)  # an unknown stage fails before any measuring
    before = read_baseline(baseline) if baseline is not None else None  # a bad file fails before any measuring
    cfg = load_config(stage=stage, user_file=config, sets=set_)
    tests = list(TESTS) if test == "all" else [test]
    with out.status("Diagnosing...") as status:
        report = diagnose(cfg, tests, Budget.quick() if quick else Budget(), sets=set_, user_file=config,
                          on_test=lambda name: status.update(f"Diagnosing: {name}..."))
    _print_report(report, before)
    if json_file is not None:
        write_json(report, json_file)
        out.print(f"Wrote {json_file}", highlight=False)
    out.print(f"Diagnosis took {report.seconds:.0f} s.", highlight=False)


def _print_report(report, before: dict[str, float] | None) -> None:
    """The notes, the settings measured with, then one table per section (with ratios to `before`)."""
    from rich.table import Table

    from training.diagnose import ratio

    for note in report.notes:
        out.print(note, highlight=False)
    s = report.settings
    out.print(f"{s['stage']}, tick skip {s['tick_skip']}, {s['workers']} workers x {s['envs_per_worker']} arenas, "
              f"{s['policy']} {s['actor_sizes']}, AMP {s['amp']}, compile {s['compile']}, pin memory "
              f"{s['pin_memory']}, {s['torch_threads']} learner thread(s)" + (" (quick)" if s["quick"] else ""),
              highlight=False)
    by_section: dict[str, list] = {}
    for f in report.figures:
        by_section.setdefault(f.key.split(".")[0], []).append(f)
    for section, figures in by_section.items():
        table = Table(title=SECTIONS.get(section, section))
        table.add_column("figure")
        table.add_column("value", justify="right")
        table.add_column("unit")
        if before is not None:
            table.add_column("baseline", justify="right")
            table.add_column("now / baseline", justify="right")
        for f in figures:
            row = [f.label, _number(f.value, f.unit), f.unit]
            if before is not None:
                row += [_number(before.get(f.key), f.unit), _ratio(ratio(f.value, before.get(f.key)), f.better)]
            table.add_row(*row)
        out.print(table)
