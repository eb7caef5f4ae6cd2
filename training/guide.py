"""What the teacher does in an update: schedules as values, beside training.budget.Budget.

A run with a teacher has one schedule, asked once per round and once per update for the network's
steps so far; it answers a `Guide`, and nothing else decides whether the teacher still teaches:

    schedule = Kickstart.from_config(cfg.training.kickstart)   # or a training.distill.DistillPhase
    guide = schedule.guide(steps)                               # Guide(weight=0.62, distilling=False)
    guide.teaches                                               # whether the teacher's labels are still wanted
    learner.update(next_obs, next_starts, UpdatePlan(clock.spent(steps), guide))

Kickstarting (Schmitt et al., 2018) pulls the learner towards its teacher with a weight that falls
linearly to 0 over the network's first `training.kickstart.steps`; distillation (training.distill)
fits the policy to the teacher alone for a phase, then guides PPO with a small weight.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from league.config import KickstartConfig


@dataclass(frozen=True)
class Guide:
    """The teacher's part in one update: the weight of the cross-entropy to its labels, whether the
    policy is fitted to them alone (distilling: no policy loss, no entropy bonus), and the update's own
    learning rate (constant) and epochs while distilling (None: the PPO config's)."""

    weight: float = 0.0
    distilling: bool = False
    learning_rate: float | None = None
    epochs: int | None = None

    @property
    def teaches(self) -> bool:
        """Whether the teacher's labels are wanted (collected with the round)."""
        return self.distilling or self.weight > 0


NO_GUIDE = Guide()  # no teacher, or one that has stopped teaching


class GuideSchedule(Protocol):
    def guide(self, steps: int) -> Guide:
        """The teacher's part in the update after `steps` agent steps of the network's training."""


@dataclass(frozen=True)
class Kickstart:
    """Kickstarting's schedule: `weight` falling linearly to 0 over the network's first `steps` (a resumed
    run goes on where it stopped, a run --from a trained agent counts that agent's steps)."""

    weight: float
    steps: int

    def __post_init__(self) -> None:
        if self.weight < 0 or self.steps < 1:
            raise ValueError(f"a kickstart is a weight >= 0 over steps >= 1, not {self.weight!r} over {self.steps!r}")

    @classmethod
    def from_config(cls, kickstart: KickstartConfig) -> Kickstart:
        return cls(kickstart.weight, kickstart.steps)

    def guide(self, steps: int) -> Guide:
        return Guide(self.weight * max(0.0, 1.0 - steps / self.steps))


@dataclass(frozen=True)
class UpdatePlan:
    """What the run's schedules say for one PPO update (ppo.PpoLearner.update)."""

    progress: float = 0.0  # the share of the run's budget spent: a linear learning-rate schedule decays over it
    guide: Guide = NO_GUIDE
