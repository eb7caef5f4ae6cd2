"""Where a training run's time went, phase by phase: the learner's and each collector's.

The learner's phases are timed around the self-play loop's calls (training.selfplay); each
collector's come with every segment it hands over (training.collector.round_phases, from the
phase clocks of arena.engine.phases). `league diagnose --test scale` prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.engine.phases import add_phases

LEARNER_PHASES = ("receiving", "batching", "updating", "sending")


@dataclass
class Profile:
    """Seconds per phase over a run, from the phase clocks (arena.engine.phases):

    learner: receiving (waiting for a round), batching (the segment onto the learner's device),
             updating (the PPO epochs), sending (weights and the next order out);
    workers: one {phase: seconds} per collector (rollout worker, or the one collector of the
             central and in-process backends), summed over the rounds trained on.
    """

    learner: dict[str, float] = field(default_factory=lambda: dict.fromkeys(LEARNER_PHASES, 0.0))
    workers: list[dict[str, float]] = field(default_factory=list)
    rounds: int = 0
    started: float | None = None  # time.perf_counter() when the first round was submitted (the workers built)
    ended: float | None = None  # ... when the last round was trained on

    def add_round(self, phases: list[dict[str, float]]) -> None:
        if len(phases) != len(self.workers):  # the first round (or a Ray worker lost): start the tally afresh
            self.workers = [{} for _ in phases]
        self.workers = [add_phases(total, more) for total, more in zip(self.workers, phases)]
        self.rounds += 1

    def seconds(self, phase: str) -> float:
        """A collector phase's seconds, summed over the collectors (the teacher's labels: "teacher")."""
        return sum(w.get(phase, 0.0) for w in self.workers)
