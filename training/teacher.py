"""A run's teacher, built once and handed to the trainer (training.selfplay), which asks it each round:
who it is, its part in each update, what every snapshot records about it, and its share of the opponents.

    teacher = build_teacher(cfg, registry, home, Student(space, steps, existing), on_note)   # or None
    teacher.guide(steps)                   # training.guide.Guide for the next update
    teacher.after_held_out(agreement, steps)   # may end the distillation phase: the note saying so, or None
    teacher.picks(picks, record)           # the league envs' opponents, with the teacher's share
    teacher.provenance                     # what a distilling run's snapshots record (league.provenance)

The teacher is training.distill.teacher (distillation: training.distill.DistillPhase), else
training.kickstart.teacher while the network's steps are inside the kickstart's anneal; a teacher that
cannot teach is one sentence before anything is trained (or, for a kickstart a resumed or forked
network cannot hold, skipped with a note).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from agents.action_spaces import ActionSpace
from agents.teaching import can_teach, check_can_teach, teacher_space
from league.config import Config
from league.errors import LeagueError
from league.home import LeagueHome
from league.agent_facts import Distilled
from league.provenance import teacher_record
from league.registry import BASELINES, PayoffRecord, Registry
from training.distill import DistillPhase
from training.guide import Guide, GuideSchedule, Kickstart
from training.opponents import PolicySpec, agent_spec


@dataclass(frozen=True)
class Student:
    """What a teacher needs to know of the network it teaches."""

    space: ActionSpace  # what the network speaks
    steps: int  # agent steps it has trained (a resumed run's, or the agent --from starts from)
    existing: str | None  # the agent whose network it is (resumed or forked: it keeps its space), or None


@dataclass
class Teacher:
    """A teacher and its schedule: a Kickstart, or the DistillPhase (`distill`) with its settings."""

    name: str
    spec: PolicySpec
    schedule: GuideSchedule  # a Kickstart, or the DistillPhase
    provenance: Distilled | None = None  # recorded with every snapshot of a distilling run
    started: int = 0  # the network's agent steps when this call began (resumed, or the agent --from starts from)

    @property
    def distill(self) -> DistillPhase | None:
        """The distillation schedule, when this teacher is being copied (training.distill)."""
        return self.schedule if isinstance(self.schedule, DistillPhase) else None

    def guide(self, steps: int) -> Guide:
        """Its part in the update after `steps` of the network's training: the one answer to whether it teaches."""
        return self.schedule.guide(steps)

    def start_notes(self, cfg: Config, space: ActionSpace) -> list[str]:
        """What a run says when it starts with this teacher."""
        if self.distill is not None and not self.distill.active:  # resumed after its phase
            d, phase = self.distill.cfg, self.distill
            return [f"PPO at temperature {cfg.ppo.temperature:g} and {_learning_rate(cfg)} with a "
                    f"guide of {d.guide_weight:g} towards {self.name} (distillation ended at {phase.ended_at:,} "
                    "steps of the network's training)"]
        if self.distill is not None:
            d = self.distill.cfg
            ends = (f"held-out agreement ends the phase after {d.patience} updates without a new best"
                    if d.patience else "the phase runs to its budget")
            return [f"distilling {self.name} into {space.name} heads ({ends}), then PPO at temperature "
                    f"{cfg.ppo.temperature:g} and {_learning_rate(cfg)} with a guide of "
                    f"{d.guide_weight:g} towards it"]
        notes = [f"kickstarting from {self.name} until the network has trained {cfg.training.kickstart.steps:,} steps "
                 "(training.kickstart.teacher= to turn off)"]
        if self.spec.reads_game and not space.factorised:
            notes.append(f"{self.name} speaks its own heads: each step the mass of every joint action of its "
                         "distribution moves to the nearest row of the learner's 90-action table (squared distance "
                         "over throttle, steer, pitch, yaw, roll, jump, boost, handbrake), and the learner is pulled "
                         "towards that distribution")
        return notes

    def after_held_out(self, agreement: float, steps: int) -> str | None:
        """Count a batch's held-out agreement (distilling); the note that says the phase ended, when it did."""
        phase = self.distill
        if phase is None or not phase.active:
            return None
        phase.after_held_out(agreement, steps)
        if phase.active:
            return None
        d = phase.cfg
        # this call's steps, as its progress lines count them; a network trained before says its own too
        at, before = f"{phase.ended_at - self.started:,} steps", ""
        if self.started:
            at, before = at + " of this run", f"{phase.ended_at:,} of the network's training; "
        return (f"distillation ended at {at} ({before}{phase.reason}; best held-out agreement "
                f"{phase.best:.1%}); PPO from here, with a guide of {d.guide_weight:g} towards {self.name} and "
                f"{self.name} as {d.teacher_share:.0%} of the league envs until the student scores "
                f"{d.pass_score:.0%} against it")

    def picks(self, picks: list[str], record: PayoffRecord) -> list[str]:
        """After distillation: the teacher takes its share of the league envs (`record`: the student's results
        against it) until the student passes it."""
        if self.distill is None or self.distill.active:
            return picks
        k = round(self.distill.teacher_share(record.score, int(record.games)) * len(picks))
        return [self.name] * k + picks[k:]

    def stats(self) -> dict[str, float]:
        """What a checkpoint keeps of it so a resumed run goes on where it stopped (the learner's statistics)."""
        return self.distill.stats() if self.distill is not None else {}


def _learning_rate(cfg: Config) -> str:
    """PPO's learning rate as a start note says it: the rate, and its fall when it falls."""
    rate = f"learning rate {cfg.ppo.learning_rate:g}"
    return rate + " falling linearly to 0 over the run's budget" if cfg.ppo.lr_schedule == "linear" else rate


def build_teacher(cfg: Config, registry: Registry, home: LeagueHome, student: Student,
                  learner_stats: dict[str, float], on_note: Callable[[str], None]) -> Teacher | None:
    """The run's teacher, or None; one sentence when it cannot teach `student` at the stage's team size.
    `learner_stats`: a resumed checkpoint's (where an earlier call's distillation phase ended, or what it spent)."""
    distill = cfg.training.distill
    name = distill.teacher or cfg.training.kickstart.teacher
    kickstart = Kickstart.from_config(cfg.training.kickstart)
    if not distill.teacher and (not name or not kickstart.guide(student.steps).teaches):
        return None  # off, or the network has trained past the anneal (resumed, or --from a trained agent)
    key = "training.distill.teacher" if distill.teacher else "training.kickstart.teacher"
    try:
        agent = registry.agent_store.get(name)
    except LeagueError:
        if name not in BASELINES:
            raise
        raise LeagueError(f"Kickstart teacher {name!r} is a baseline this league home does not have yet (it was "
                          "made before it existed); run `league init` on it to add the missing baselines, or choose "
                          "another teacher: --set training.kickstart.teacher=rule") from None
    if agent.status == "retired":
        what = "Teacher" if distill.teacher else "Kickstart teacher"
        raise LeagueError(f"{what} {name!r} is retired; choose an active agent, or train without one: --set {key}=")
    team_size = cfg.game.team_size
    if not agent.plays(team_size):
        raise LeagueError(f"Teacher {name!r} does not play {team_size}v{team_size}; choose a teacher that plays the "
                          f"stage ({key}).")
    spec = agent_spec(registry, name, home.root)
    policy = spec.policy()
    if not distill.teacher and student.existing is not None and not can_teach(policy, student.space):
        on_note(f"no kickstart: {student.existing}'s network speaks {student.space.doc}, which cannot hold "
                f"{name}'s actions ({teacher_space(policy).doc})")
        return None
    check_can_teach(policy, name, student.space, student.existing)
    if not distill.teacher:
        return Teacher(name, spec, kickstart)
    phase = DistillPhase.resumed(distill, learner_stats, student.steps)
    return Teacher(name, spec, phase, provenance=teacher_record(registry, name), started=student.steps)
