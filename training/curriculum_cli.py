"""`league train --curriculum` (the runner behind it) and `league curriculum status`.

Light at import time: torch and RocketSim are imported inside the functions that train.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from league.cli_common import HomeOpt, handles_errors, open_league, out
from league.home import LeagueHome

app = typer.Typer(help="Curricula: staged training (1v1 -> 2v2 -> 3v3) with promotion gates.", no_args_is_help=True,
                  rich_markup_mode=None)


def run_curriculum(home: LeagueHome, file: Path | None, *, name: str | None, config: Path | None, minutes: float | None,
                   init_from: str | None, overrides: dict[str, Any], sets: list[str] | None) -> None:
    """Run (or resume) a curriculum with a progress bar per stage, then print where it ended."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from league.config import load_config
    from league.errors import LeagueError
    from league.registry import Registry
    from training.curriculum import CurriculumTrainer
    from training.curriculum_spec import load_curriculum

    if minutes is not None and minutes <= 0:
        raise LeagueError("--minutes must be above 0 (leave it out to run the curriculum to its end).")
    spec, source = load_curriculum(file, name=name)
    registry = Registry.open(home.db_path, load_config(user_file=config, home_file=home.config_path).ratings)
    bar = Progress(TextColumn("[bold]{task.description}[/]"), BarColumn(), TextColumn("{task.fields[steps]}"),
                   TextColumn("{task.fields[note]}"), TimeElapsedColumn(), console=out, transient=False)
    tasks: dict[int, Any] = {}
    stage_info: dict[int, dict] = {}

    def event(info: dict) -> None:
        kind, i = info["event"], info.get("index")
        if kind == "stage":
            stage_info[i] = info
            tasks[i] = bar.add_task(f"{i + 1}. {info['name']} ({info['stage']})", total=info["max_steps"],
                                    completed=info["steps"], steps=_steps(info["steps"], info), note="")
        elif kind == "train" and "note" in info:
            bar.console.print(info["note"], highlight=False)
        elif kind == "train" and "stage_steps" in info and i in tasks:
            reward = info.get("charts/episode_reward")
            bar.update(tasks[i], completed=info["stage_steps"], steps=_steps(info["stage_steps"], stage_info[i]),
                       note=f"reward {reward:.2f}" if reward is not None else "")
        elif kind == "gate_start" and i in tasks:
            bar.update(tasks[i], note=f"gate check of {info['agent']} ...")
        elif kind == "gate":
            verdict = "[green]passed[/]" if info["passed"] else "[yellow]not yet[/]"
            bar.console.print(f"  gate {verdict} for {info['agent']} at {info['steps']:,} steps: {info['reason']}",
                              highlight=False)
            if i in tasks:
                bar.update(tasks[i], note="")
        elif kind == "stage_end":
            bar.console.print(f"Stage {i + 1} ({info['name']}) {info['status']}; final agent "
                              f"{info['final_agent'] or '-'}", highlight=False)
            if i in tasks:
                bar.update(tasks[i], completed=info["steps"], steps=_steps(info["steps"], stage_info[i]), note="")
                bar.stop_task(tasks[i])

    # Built (and every stage's config validated) before the first progress bar is drawn.
    trainer = CurriculumTrainer(spec, home, registry, source=source, user_file=config, overrides=overrides,
                                sets=sets, minutes=minutes or 0.0, init_from=init_from, on_event=event)
    with bar:
        result = trainer.run()
    colour = {"finished": "green", "stopped": "red", "interrupted": "yellow"}[result.status]
    out.print(f"Curriculum {result.name} [{colour}]{result.status}[/]: {result.message}.", highlight=False)
    for s in result.stages:
        out.print(f"  {s.index + 1}. {s.name}: {s.status}, {s.steps:,} steps, final agent {s.final_agent or '-'}",
                  highlight=False)
    if result.status == "stopped":
        raise typer.Exit(1)


def _steps(steps: int, info: dict) -> str:
    return f"{steps:,} steps (min {info['min_steps']:,}, max {info['max_steps']:,})"


def _criterion_text(c: dict[str, Any]) -> str:
    mark = "✓" if c["passed"] else "✗"
    return f"{mark} {c['reason']}"


@app.command("status")
@handles_errors
def status(
    name: Annotated[Optional[str], typer.Argument(help="Curriculum name (default: the most recently updated).",
                                                  show_default=False)] = None,
    history: Annotated[int, typer.Option("--history", help="Gate checks to list (most recent last).", min=0)] = 10,
    home: HomeOpt = None,
) -> None:
    """Show a curriculum's stages, each one's progress against its step budget and gate, and the gate checks.

    Example: league curriculum status --history 20
    """
    _, reg = open_league(home, readonly=True)
    if name is None:
        every = reg.curricula()
        if not every:
            out.print("No curriculum has run in this league yet; start one with `league train --curriculum`.")
            return
        name = every[0]["name"]
    cur = reg.curriculum(name)
    spec_stages = cur["spec"]["stages"]
    checks = reg.gate_checks(name)
    current = cur["stage_index"]
    out.print(f"Curriculum [bold]{name}[/] ({cur['source']}): {cur['status']}, stage {current + 1} of "
              f"{len(cur['stages'])}" + (f" — {cur['message']}" if cur["message"] else ""), highlight=False)
    table = Table(title="Stages")
    for col in ("#", "stage", "team", "status", "steps", "gate", "last check", "final agent"):
        table.add_column(col, justify="right" if col in ("#",) else "left")
    for row, spec in zip(cur["stages"], spec_stages):
        i = row["stage_index"]
        mine = [c for c in checks if c["stage_index"] == i]
        gate = spec["gate"]
        wanted = [f"{k}={gate[k]:g}" for k in ("win_rate_vs_rule", "win_rate_vs_random", "min_elo", "min_trueskill")
                  if gate.get(k) is not None]
        if gate.get("not_worse_than_previous"):
            wanted.append("not worse than previous")
        wanted_text = (", ".join(wanted) or "none") + f" ({gate['min_games']} games, z={gate['confidence']:g})"
        if mine:
            last = mine[-1]
            last_text = f"{'passed' if last['passed'] else 'not passed'} at {last['steps']:,}: " + "; ".join(
                _criterion_text(c) for c in last["criteria"]) if last["criteria"] else "passed (no criteria)"
        else:
            last_text = "-"
        share = row["steps"] / spec["max_steps"] if spec["max_steps"] else 0.0
        table.add_row(str(i + 1) + (" ←" if i == current and cur["status"] != "finished" else ""), row["name"],
                      f"{row['team_size']}v{row['team_size']}", row["status"],
                      f"{row['steps']:,} ({share:.0%} of max) / min {spec['min_steps']:,} / max {spec['max_steps']:,}",
                      wanted_text, last_text, row["final_agent"] or "-")
    out.print(table)
    if history and checks:
        hist = Table(title=f"Gate checks (last {min(history, len(checks))} of {len(checks)})")
        for col in ("checked", "stage", "agent", "steps", "result", "criteria"):
            hist.add_column(col, justify="right" if col == "steps" else "left")
        names = {row["stage_index"]: row["name"] for row in cur["stages"]}
        for c in checks[-history:]:
            hist.add_row(c["checked"][:19].replace("T", " "), names[c["stage_index"]], c["agent"], f"{c['steps']:,}",
                         "passed" if c["passed"] else "not passed",
                         "; ".join(_criterion_text(x) for x in c["criteria"]) or "no criteria")
        out.print(hist)
