"""What the trainers report while they run: typed events, handed to one callback.

The self-play trainer (training.selfplay) reports `Note`s and an `UpdateDone` after every PPO
update; the curriculum (training.curriculum) reports its own events and wraps each of its
trainer's in a `StageProgress`. Consumers (the `league train` progress bars, the benchmarks,
tests) dispatch on the type, so a field renamed here is an error where it is read, not a key
silently missing from a dict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

# ---------------------------------------------------------------- the self-play trainer


@dataclass(frozen=True)
class Note:
    """Something a person should read once: kickstarting, or a fallback taken (no CUDA for AMP, ...)."""

    text: str


@dataclass(frozen=True)
class UpdateDone:
    """A PPO update finished; `metrics` is the row written to the run's metrics log."""

    steps: int  # agent steps trained by this trainer so far (a resumed run's earlier steps excluded)
    budget: int | None  # the step budget of this trainer (None: a time budget or Ctrl-C ends it)
    elapsed: float  # seconds since training started
    metrics: Mapping[str, float]  # namespaced as CleanRL's: charts/..., losses/...

    @property
    def episode_reward(self) -> float | None:
        """The mean return of the episodes that ended since the last update, if any did."""
        return self.metrics.get("charts/episode_reward")

    @property
    def steps_per_second(self) -> float:
        return self.metrics.get("charts/steps_per_second", 0.0)


TrainerEvent = Note | UpdateDone


# ---------------------------------------------------------------- the curriculum


@dataclass(frozen=True)
class StageStarted:
    """A stage starts, or resumes with `steps` already trained."""

    index: int
    name: str
    stage: str  # 1v1, 2v2 or 3v3
    run: str  # its self-play run, `<curriculum>-<stage name>`
    steps: int
    min_steps: int
    max_steps: int


@dataclass(frozen=True)
class StageProgress:
    """What the stage's self-play trainer reported; `stage_steps`: agent steps the stage has trained so far."""

    index: int
    stage_steps: int
    event: TrainerEvent


@dataclass(frozen=True)
class GateStarted:
    """The stage's gate games start for `agent`, its latest snapshot, at `steps` into the stage."""

    index: int
    agent: str
    steps: int


@dataclass(frozen=True)
class GateChecked:
    index: int
    agent: str
    steps: int
    passed: bool
    reason: str  # one line: each criterion's verdict
    min_steps: int  # a passed gate ends the stage only past these


@dataclass(frozen=True)
class StageEnded:
    index: int
    name: str
    status: str  # passed, failed or advanced
    final_agent: str | None
    steps: int


@dataclass(frozen=True)
class Finished:
    """The curriculum run ended: finished, stopped (a gate failed at max_steps) or interrupted."""

    status: str
    message: str


CurriculumEvent = StageStarted | StageProgress | GateStarted | GateChecked | StageEnded | Finished
Event = TrainerEvent | CurriculumEvent

OnProgress = Callable[[TrainerEvent], None]
OnEvent = Callable[[CurriculumEvent], None]


def ignore(event: Event) -> None:
    """The callback of a trainer nobody watches."""
