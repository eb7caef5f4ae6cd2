"""The progress display of a training call over its budget (`league train`, `league probe`)."""

from __future__ import annotations

from league.cli.common import LineTicker, out


def budget_bar(budget):
    """A progress bar over the run's budget (the share spent of its steps or its clock, whichever is further on)
    and the trainer's callback that moves it."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from training.progress import Note, TrainerEvent

    bar = Progress(TextColumn("[bold]training[/]"), BarColumn(), TextColumn("{task.fields[steps]:,.0f} steps"),
                   TextColumn("{task.fields[sps]:,.0f} steps/s"), TextColumn("reward {task.fields[reward]}"),
                   TextColumn("{task.fields[agreement]}"), TimeElapsedColumn(), TimeRemainingColumn(), console=out,
                   transient=False)
    task = bar.add_task("train", total=1.0, steps=0, sps=0.0, reward="-", agreement="")
    best: list[float] = []  # the best held-out agreement so far, while distilling
    ticker = LineTicker()

    def on_progress(event: TrainerEvent) -> None:
        if isinstance(event, Note):  # kickstarting, or a fallback taken (no CUDA for AMP, compile failed, ...)
            bar.console.print(event.text, highlight=False)
            return
        reward = event.episode_reward
        shown = f"{reward:.2f}" if reward is not None else "-"
        agreement = agreement_text(event.metrics, best)
        bar.update(task, completed=budget.spent(event.steps, event.elapsed), steps=event.steps,
                   sps=event.steps_per_second, reward=shown, agreement=agreement)
        if ticker.due():
            out.print(f"training: {event.steps:,} steps, {event.steps_per_second:,.0f} steps/s, reward {shown}"
                      f"{', ' + agreement if agreement else ''}, {event.elapsed:.0f} s", highlight=False)

    return bar, on_progress


def agreement_text(row, best: list[float]) -> str:
    """While distilling: the held-out agreement of the update (the student's on its own unseen play, as the phase's
    end message says it) and the best so far, kept in `best`; "" otherwise."""
    agreement = row.get("distill/held_out_agreement") if row else None
    if agreement is None:
        return ""
    best[:] = [max([agreement, *best])]
    return f"held-out agreement {agreement:.1%} (best {best[0]:.1%})"
