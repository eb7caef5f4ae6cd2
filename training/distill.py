"""Copy, then surpass: the schedule of a run that distils a league member first (training.distill).

The student plays (its own states, DAgger-style: Ross et al., 2011), the frozen teacher labels
every state it sees with its whole action distribution (agents.teaching), and the update fits
the student's policy to those labels with several epochs per batch while the critic learns the
returns of the states it visits (a distilling training.guide.Guide). Before each batch is trained on,
the student's agreement with the teacher on it is measured: those states are held out, so the
figure is the student's on its own play, unseen. The phase ends at its budget
(distill.steps, distill.minutes) or once held-out agreement has not passed its best for
`patience` updates. Then PPO takes over from the distilled weights with a guide term towards the
teacher (permanent and small, or decaying over guide_decay_steps) and the teacher as a share of
the opponents until the student's score against it reaches pass_score.

    phase = DistillPhase(cfg.training.distill, ended_at=None)   # or DistillPhase.resumed(cfg, stats, steps)
    guide = phase.guide(steps)                   # training.guide.Guide for the next update, as a Kickstart's
    phase.after_held_out(agreement, steps)       # may end the phase
    share = phase.teacher_share(score, games)    # the teacher's share of league envs
"""

from __future__ import annotations

import time

from league.config import DistillConfig
from training.budget import Budget
from training.guide import Guide

MIN_GAIN = 0.002  # held-out agreement must pass its best by this much to count as rising
MIN_TEACHER_GAMES = 20  # games against the teacher before its share may drop


class DistillPhase:
    """The distillation schedule (a training.guide.GuideSchedule, as a Kickstart is): the phase, then the guide."""


    def __init__(self, cfg: DistillConfig, ended_at: int | None, clock=time.perf_counter, *,
                 before: Budget = Budget(), best: float = -1.0):
        """`ended_at`: the agent steps at which an earlier call's phase ended (a resumed run), or None; `before`
        and `best`: what earlier calls' phase spent of its budget and its best held-out agreement (resumed
        in the phase, it goes on with the rest of its budget)."""
        self.cfg, self.ended_at, self.clock = cfg, ended_at, clock
        self.budget = Budget.from_limits(cfg.steps, cfg.minutes)
        self.before = before
        self.spent = before  # the whole phase's steps and seconds so far, earlier calls' included
        self.started_at: int | None = None
        self.started_time = 0.0
        self.best = best
        self.stale = 0
        self.reason = ""

    @classmethod
    def resumed(cls, cfg: DistillConfig, stats: dict[str, float], steps: int) -> DistillPhase:
        """The phase as a checkpoint's learner statistics (`stats`) left it, in a call that starts after `steps`
        of the network's training: ended where it ended; else with what it had spent of its budget, ended here
        when that was all of it. A resumed copy restarted its whole budget (run te: ten more minutes of copying
        after the ten its run had asked for)."""
        ended = stats.get("distill_ended_at")
        before = Budget(int(stats.get("distill_steps", 0)), float(stats.get("distill_seconds", 0.0)))
        phase = cls(cfg, None if ended is None else int(ended), before=before, best=stats.get("distill_best", -1.0))
        if phase.active and phase.budget.done(before.steps, before.seconds):
            phase._end(steps, "its budget was spent before this call")
        return phase

    def stats(self) -> dict[str, float]:
        """What a checkpoint keeps of the phase so a resumed call goes on where it stopped: where it ended, or
        what it has spent of its budget and its best held-out agreement."""
        if not self.active:
            return {"distill_ended_at": float(self.ended_at)}
        return {"distill_steps": float(self.spent.steps), "distill_seconds": self.spent.seconds,
                "distill_best": self.best}

    @property
    def active(self) -> bool:
        return self.ended_at is None

    def guide(self, steps: int) -> Guide:
        """The teacher's part in the update after `steps` agent steps of the network's training: in the phase,
        the policy fitted to the teacher alone at the phase's own learning rate and epochs; after it, a guide."""
        if self.active:
            if self.started_at is None:
                self.started_at, self.started_time = steps, self.clock()
            return Guide(self.cfg.weight, True, learning_rate=self.cfg.learning_rate, epochs=self.cfg.epochs)
        weight = self.cfg.guide_weight
        if self.cfg.guide_decay_steps:
            weight *= max(0.0, 1.0 - (steps - self.ended_at) / self.cfg.guide_decay_steps)
        return Guide(weight, False)

    def after_held_out(self, agreement: float, steps: int) -> None:
        """Count a batch's held-out agreement (measured before training on it, after `steps`), and end
        the phase at its budget or when agreement has stopped rising."""
        if not self.active:
            return
        if agreement > self.best + MIN_GAIN:
            self.best, self.stale = agreement, 0
        else:
            self.stale += 1
        start = self.started_at if self.started_at is not None else steps
        self.spent = Budget(self.before.steps + steps - start, self.before.seconds + self.clock() - self.started_time)
        if self.budget.done(self.spent.steps, self.spent.seconds):
            self._end(steps, "its budget is spent")
        elif self.cfg.patience and self.stale >= self.cfg.patience:
            self._end(steps, f"held-out agreement has not passed its best ({self.best:.1%}) for "
                             f"{self.cfg.patience} updates")

    def _end(self, steps: int, reason: str) -> None:
        self.ended_at, self.reason = steps, reason

    def teacher_share(self, score: float, games: int) -> float:
        """The teacher's share of league envs after the phase: distill.teacher_share until the
        student's score against it (`games` games) reaches pass_score, then 0."""
        if self.active:
            return 0.0
        passed = games >= MIN_TEACHER_GAMES and score >= self.cfg.pass_score
        return 0.0 if passed else self.cfg.teacher_share

