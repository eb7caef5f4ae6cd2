"""`league curriculum status`, and the progress display of `league train --curriculum`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from rich.table import Table

from league.cli.common import HomeOpt, LineTicker, check_minutes, handles_errors, open_league, out

if TYPE_CHECKING:  # the command imports the registry only when it runs
    from league.registry import Curriculum, GateCheck

app = typer.Typer(help="Curricula: staged training (1v1 -> 2v2 -> 3v3) with promotion gates.", no_args_is_help=True,
                  rich_markup_mode=None)


def run_curriculum_with_progress(home, file: Path | None, *, name: str | None, config: Path | None,
                                 minutes: float | None, init_from: str | None, overrides: dict[str, Any],
                                 sets: list[str] | None) -> None:
    """Run (or resume) a curriculum with a progress bar per stage, then print where it ended."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from training.launch import run_curriculum

    check_minutes(minutes, leave_out="run the curriculum to its end")
    bar = Progress(TextColumn("[bold]{task.description}[/]"), BarColumn(), TextColumn("{task.fields[steps]}"),
                   TextColumn("{task.fields[note]}"), TimeElapsedColumn(), console=out, transient=False)
    try:  # the bar is drawn from the first stage on: every stage's config is validated before it
        result = run_curriculum(home, file, name=name, user_file=config, minutes=minutes, init_from=init_from,
                                overrides=overrides, sets=sets, on_event=_stage_bars(bar))
    finally:
        bar.stop()
    colour = {"finished": "green", "stopped": "red", "interrupted": "yellow"}[result.status]
    out.print(f"Curriculum {result.name} [{colour}]{result.status}[/]: {result.message}.", highlight=False)
    for s in result.stages:
        out.print(f"  {s.index + 1}. {s.name}: {s.status}, {s.steps:,} steps, final agent {s.final_agent or '-'}",
                  highlight=False)
    if result.status == "stopped":
        raise typer.Exit(1)


def _stage_bars(bar):
    """The curriculum's event callback: one bar per stage, gate verdicts and stage ends printed above them."""
    from training.progress import GateChecked, GateStarted, Note, StageEnded, StageProgress, StageStarted

    tasks: dict[int, Any] = {}
    started: dict[int, StageStarted] = {}
    ticker = LineTicker()

    def steps_text(steps: int, index: int) -> str:
        return f"{steps:,} steps (min {started[index].min_steps:,}, max {started[index].max_steps:,})"

    def on_event(event) -> None:
        i = getattr(event, "index", None)
        if isinstance(event, StageStarted):
            bar.start()
            started[i] = event
            tasks[i] = bar.add_task(f"{i + 1}. {event.name} ({event.stage})", total=event.max_steps,
                                    completed=event.steps, steps=steps_text(event.steps, i), note="")
        elif isinstance(event, StageProgress) and isinstance(event.event, Note):
            bar.console.print(event.event.text, highlight=False)
        elif isinstance(event, StageProgress) and i in tasks:
            reward = event.event.episode_reward
            note = f"reward {reward:.2f}" if reward is not None else ""
            bar.update(tasks[i], completed=event.stage_steps, steps=steps_text(event.stage_steps, i), note=note)
            if ticker.due():
                bar.console.print(f"{i + 1}. {started[i].name} ({started[i].stage}): "
                                  f"{steps_text(event.stage_steps, i)}, {note or 'no episode yet'}", highlight=False)
        elif isinstance(event, GateStarted) and i in tasks:
            bar.update(tasks[i], note=f"gate check of {event.agent} ...")
        elif isinstance(event, GateChecked):
            verdict = "[green]passed[/]" if event.passed else "[yellow]not yet[/]"
            bar.console.print(f"  gate {verdict} for {event.agent} at {event.steps:,} steps: {event.reason}",
                              highlight=False)
            if i in tasks:
                bar.update(tasks[i], note="")
        elif isinstance(event, StageEnded):
            bar.console.print(f"Stage {i + 1} ({event.name}) {event.status}; final agent {event.final_agent or '-'}",
                              highlight=False)
            if i in tasks:
                bar.update(tasks[i], completed=event.steps, steps=steps_text(event.steps, i), note="")
                bar.stop_task(tasks[i])

    return on_event


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
        every = reg.curriculum_store.all()
        if not every:
            out.print("No curriculum has run in this league yet; start one with `league train --curriculum`.")
            return
        name = every[0].name
    cur = reg.curriculum_store.get(name)
    checks = reg.curriculum_store.gate_checks(name)
    current = cur.stage_index
    out.print(f"Curriculum [bold]{name}[/] ({cur.source}): {cur.status}, stage {current + 1} of "
              f"{len(cur.stages)}" + (f" — {cur.message}" if cur.message else ""), highlight=False)
    out.print(_stages_table(cur, checks))
    if history and checks:
        out.print(_checks_table(cur, checks, history))


def _stages_table(cur: Curriculum, checks: list[GateCheck]) -> Table:
    """Each stage: status, steps against its budget, its gate and the last check of it."""
    current = cur.stage_index
    table = Table(title="Stages")
    for col in ("#", "stage", "team", "status", "steps", "gate", "last check", "final agent"):
        table.add_column(col, justify="right" if col in ("#",) else "left")
    for row, spec in zip(cur.stages, cur.spec["stages"]):
        i = row.stage_index
        mine = [c for c in checks if c.stage_index == i]
        gate = spec["gate"]
        wanted = [f"{k}={gate[k]:g}" for k in ("win_rate_vs_rule", "win_rate_vs_random", "min_elo", "min_trueskill")
                  if gate.get(k) is not None]
        if gate.get("not_worse_than_previous"):
            wanted.append("not worse than previous")
        if gate.get("sprt_vs_previous"):
            wanted.append(f"SPRT vs previous {gate['sprt_vs_previous']} (at most {gate['sprt_max_games']} games)")
        wanted_text = (", ".join(wanted) or "none") + f" ({gate['min_games']} games, z={gate['confidence']:g})"
        if mine:
            last = mine[-1]
            last_text = f"{'passed' if last.passed else 'not passed'} at {last.steps:,}: " + "; ".join(
                _criterion_text(c) for c in last.criteria) if last.criteria else "passed (no criteria)"
        else:
            last_text = "-"
        share = row.steps / spec["max_steps"] if spec["max_steps"] else 0.0
        table.add_row(str(i + 1) + (" ←" if i == current and cur.status != "finished" else ""), row.name,
                      f"{row.team_size}v{row.team_size}", row.status,
                      f"{row.steps:,} ({share:.0%} of max) / min {spec['min_steps']:,} / max {spec['max_steps']:,}",
                      wanted_text, last_text, row.final_agent or "-")
    return table


def _checks_table(cur: Curriculum, checks: list[GateCheck], history: int) -> Table:
    """The last `history` gate checks, oldest first."""
    hist = Table(title=f"Gate checks (last {min(history, len(checks))} of {len(checks)})")
    for col in ("checked", "stage", "agent", "steps", "result", "criteria"):
        hist.add_column(col, justify="right" if col == "steps" else "left")
    names = {row.stage_index: row.name for row in cur.stages}
    for c in checks[-history:]:
        hist.add_row(c.checked[:19].replace("T", " "), names[c.stage_index], c.agent, f"{c.steps:,}",
                     "passed" if c.passed else "not passed",
                     "; ".join(_criterion_text(x) for x in c.criteria) or "no criteria")
    return hist
