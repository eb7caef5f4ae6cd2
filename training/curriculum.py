"""The curriculum driver: `league train --curriculum [FILE]`.

Stages run in order. Each stage's config is loaded once, when the command starts. A stage trains in
chunks of `eval_every_steps` agent steps, each a slice of the self-play trainer (training.slices:
the chunk's steps and what is left of the command's clock handed over as one Budget, its seed by
`dataclasses.replace`; its run `<curriculum>-<stage>` resumes from its latest snapshot; the first
chunk of a later stage starts from the previous stage's final agent, which becomes the parent
of its first version, so the lineage runs through every stage). After each chunk the gate is
checked: the latest snapshot plays the gate's evaluation games (recorded and rated like any
evaluation game) and, with `sprt_vs_previous`, an SPRT match against the previous stage's final
agent; the evidence goes through training.gates.check_gate, and the check is kept in the
registry. A stage ends when it has trained `min_steps` and its gate passes, or when
`max_steps` is spent: then the curriculum stops with a report, or advances if the stage says
`on_gate_fail: advance`.

All progress lives in the registry (tables curricula, curriculum_stages, gate_checks) and in
the snapshots themselves, so an interrupted run (Ctrl-C, a time budget, kill -9) continues at
the same stage from its latest snapshot when the same command is run again.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.match import run_sprt_match
from arena.engine.cores import workers_or_default
from league.config import Config, team_size_of
from league.home import LeagueHome
from league.locks import claim
from league.ratings import conservative
from league.registry import CurriculumStage, GateCheck, Registry, utc_now
from league.results import Record
from league.sprt import SprtParams
from training.budget import Budget
from training.curriculum_spec import DRIVER_KEYS, CurriculumSpec, stage_config
from training.launch import student_of
from training.evaluation import play_recorded, player
from training.gates import Criterion, Evidence, GateResult, SprtOutcome, check_gate
from training.progress import (
    Finished,
    GateChecked,
    GateStarted,
    OnEvent,
    StageEnded,
    StageProgress,
    StageStarted,
    TrainerEvent,
    UpdateDone,
    ignore,
)
from training.seeds import derived_seed
from training.slice_spec import refuse_driver_sets
from training.slices import Interrupted, Slice, check_not_taken, train_slice


@dataclass
class StageOutcome:
    index: int
    name: str
    status: str  # passed | failed | advanced | training (interrupted in it) | pending
    run: str
    steps: int
    final_agent: str | None = None
    gate: GateResult | None = None


@dataclass
class CurriculumResult:
    name: str
    status: str  # finished | stopped | interrupted
    message: str
    stages: list[StageOutcome] = field(default_factory=list)


class CurriculumTrainer:
    """Runs (or resumes) a curriculum in a league home."""

    def __init__(self, spec: CurriculumSpec, home: LeagueHome, registry: Registry, configs: list[Config], *,
                 source: str = "", minutes: float = 0.0, init_from: str | None = None,
                 on_event: OnEvent | None = None):
        """`configs`: every stage's config, as stage_configs loads them, once, before anything is trained (the
        trainer takes them as given). `minutes`: this command's clock, over all stages (0: none)."""
        self.spec, self.home, self.registry, self.source = spec, home, registry, source
        self.clock = Budget.from_limits(minutes=minutes).start(time.monotonic)  # this run's, all stages'
        self.init_from = init_from
        self.on_event = on_event or ignore
        if init_from:
            registry.agent_store.get(init_from)  # an unknown name fails now, with suggestions
        self.configs = configs

    # ------------------------------------------------------------------ progress

    def _stage_row(self, index: int) -> CurriculumStage:
        return self.registry.curriculum_store.get(self.spec.name).stages[index]

    def _progress(self, index: int) -> tuple[int, str | None]:
        """(agent steps trained in the stage, its latest snapshot)."""
        versions = self.registry.agent_store.run_versions(self.spec.run_name(index))
        if not versions:
            return 0, None
        start = self._stage_row(index).start_steps
        return self.registry.agent_store.get(versions[-1]).steps_trained - start, versions[-1]

    # ------------------------------------------------------------------ the run

    def run(self) -> CurriculumResult:
        """Run (or resume) the curriculum; a second command on the same curriculum fails at once."""
        with claim(self.home.root, "curriculum", self.spec.name, f"Curriculum {self.spec.name!r}"):
            return self._run()

    def _run(self) -> CurriculumResult:
        spec, reg = self.spec, self.registry
        reg.curriculum_store.start(spec.name, spec.to_dict(), self.source,
                                   [(s.name, team_size_of(s.stage), spec.run_name(i)) for i, s in enumerate(spec.stages)])
        reg.curriculum_store.update(spec.name, status="running", message="")
        try:
            for index in range(len(spec.stages)):
                outcome = self._run_stage(index)
                if outcome == "failed":
                    return self._finish("stopped", self._stop_message(index))
            return self._finish("finished", f"all {len(spec.stages)} stages done")
        except (Interrupted, KeyboardInterrupt) as exc:
            why = str(exc) if isinstance(exc, Interrupted) else "interrupted"
            return self._finish("interrupted", f"{why}; run the same command again to continue")

    def _finish(self, status: str, message: str) -> CurriculumResult:
        self.registry.curriculum_store.update(self.spec.name, status=status, message=message)
        self.on_event(Finished(status, message))
        return CurriculumResult(self.spec.name, status, message, self.outcomes())

    def outcomes(self) -> list[StageOutcome]:
        cur = self.registry.curriculum_store.get(self.spec.name)
        checks = self.registry.curriculum_store.gate_checks(self.spec.name)
        result = []
        for row in cur.stages:
            last = [c for c in checks if c.stage_index == row.stage_index]
            gate = _gate_result(last[-1]) if last else None
            result.append(StageOutcome(row.stage_index, row.name, row.status, row.run, row.steps,
                                       row.final_agent, gate))
        return result

    def _stop_message(self, index: int) -> str:
        stage = self.spec.stages[index]
        checks = self.registry.curriculum_store.gate_checks(self.spec.name, index)
        last = _gate_result(checks[-1]).reason if checks else "never checked"
        return (f"stage {index + 1} ({stage.name}) spent its maximum of {stage.max_steps:,} steps without passing "
                f"its gate ({last}); raise its max_steps and run again to continue, or set on_gate_fail: advance")

    def _run_stage(self, index: int) -> str:
        """Train stage `index` until it ends; returns its final status (passed, failed or advanced)."""
        spec, reg, stage = self.spec, self.registry, self.spec.stages[index]
        row = self._stage_row(index)
        if row.status in ("passed", "advanced"):
            return row.status
        if row.status == "failed":  # stopped at its maximum before; a raised max_steps continues it
            reg.curriculum_store.update_stage(spec.name, index, status="training", finished=None)
        if row.status == "pending":
            check_not_taken(reg, spec.run_name(index), "curriculum")
            start = self._start_agent(index)
            reg.curriculum_store.update_stage(spec.name, index, status="training", started=utc_now(),
                                              start_agent=start,
                                              start_steps=reg.agent_store.get(start).steps_trained if start else 0)
        reg.curriculum_store.update(spec.name, stage_index=index)
        steps, latest = self._progress(index)
        self.on_event(StageStarted(index, stage.name, stage.stage, spec.run_name(index), steps, stage.min_steps,
                                   stage.max_steps))
        every = stage.eval_every_steps
        while True:
            steps, latest = self._progress(index)
            reg.curriculum_store.update_stage(spec.name, index, steps=steps)
            checks = reg.curriculum_store.gate_checks(spec.name, index)
            checked = checks[-1].steps if checks else 0
            if checks and checks[-1].passed and checks[-1].agent == latest and steps >= stage.min_steps:
                return self._end_stage(index, "passed", latest)  # passed, then stopped before it was noted
            if latest is not None and (not checks or checked < steps) and (
                    steps // every > checked // every or steps >= stage.max_steps):
                gate = self._check_gate(index, latest, steps)
                if gate.passed and steps >= stage.min_steps:
                    return self._end_stage(index, "passed", latest)
                continue
            if steps >= stage.max_steps:
                status = "advanced" if stage.on_gate_fail == "advance" else "failed"
                return self._end_stage(index, status, latest)
            target = min((steps // every + 1) * every, stage.max_steps)
            self._train_chunk(index, target - steps, latest)

    def _start_agent(self, index: int) -> str | None:
        if index == 0:
            return self.init_from
        return self._stage_row(index - 1).final_agent

    def _end_stage(self, index: int, status: str, final: str | None) -> str:
        self.registry.curriculum_store.update_stage(self.spec.name, index, status=status, final_agent=final,
                                                    finished=utc_now())
        self.on_event(StageEnded(index, self.spec.stages[index].name, status, final, self._progress(index)[0]))
        return status

    def _train_chunk(self, index: int, steps: int, latest: str | None) -> None:
        """Train `steps` more of stage `index` (resuming its run from `latest`), within what is left of the clock."""
        left = self.clock.remaining()  # what is left of this run's clock (no limit: none) is the chunk's
        if left is None:
            raise Interrupted("its time budget is spent")
        n_versions = len(self.registry.agent_store.run_versions(self.spec.run_name(index)))
        # A different seed per chunk, so chunks do not replay the same start states.
        cfg = dataclasses.replace(self.configs[index], seed=derived_seed(self.configs[index].seed, "chunk", index,
                                                                         n_versions))
        chunk = Slice(self.spec.run_name(index), cfg, dataclasses.replace(left, steps=steps),
                      init_from=self._stage_row(index).start_agent)
        base_steps, _ = self._progress(index)

        def progress(event: TrainerEvent) -> None:
            done = event.steps if isinstance(event, UpdateDone) else 0
            self.on_event(StageProgress(index, base_steps + done, event))

        def record() -> None:
            self.registry.curriculum_store.update_stage(self.spec.name, index, steps=self._progress(index)[0])

        train_slice(self.home, self.registry, chunk, progress, on_end=record)
        if self.clock.done():
            raise Interrupted("its time budget is spent")

    # ------------------------------------------------------------------ the gate

    def _check_gate(self, index: int, agent: str, steps: int) -> GateResult:
        """Play the gate's games with `agent` (recorded and rated), check the gate, keep the check."""
        spec, reg, stage = self.spec, self.registry, self.spec.stages[index]
        gate, cfg = stage.gate, self.configs[index]
        team_size = team_size_of(stage.stage)
        n_checks = len(reg.curriculum_store.gate_checks(spec.name))
        workers = cfg.runner.workers or None
        self.on_event(GateStarted(index, agent, steps))

        opponents: dict[str, str] = {}  # evidence key -> the agent it is played against
        if gate.plays_rule():
            opponents["rule"] = "rule"
        if gate.win_rate_vs_random is not None:
            opponents["random"] = "random"
        previous = self._start_agent(index) if index > 0 else None
        if gate.not_worse_than_previous and previous:
            opponents["previous"] = previous
        me = player(reg, agent, self.home.root)
        matchups = [(me, player(reg, o, self.home.root)) for o in opponents.values()]
        ev: dict[str, Any] = {}
        if matchups:  # all the gate's games at once, seeded by the check
            played = play_recorded(reg, matchups, gate.min_games, team_size, gate.game_seconds,
                                   derived_seed(cfg.seed, "gate", n_checks), cfg.game.tick_skip, workers,
                                   opening_jitter=cfg.game.opening_jitter)
            for key, goals in zip(opponents, played):
                ev.update({f"{key}_score": Record.from_goals(goals).points, f"{key}_games": len(goals)})
        if gate.sprt_vs_previous is not None and previous:
            ev["previous_sprt"] = self._gate_sprt(index, agent, previous, n_checks)
        rating = reg.game_store.rating(agent, team_size)
        result = check_gate(gate, Evidence(elo=rating.elo if rating.games else None,
                                           trueskill=conservative(rating.mu, rating.sigma) if rating.games
                                           else None,
                                           has_previous=previous is not None, **ev))
        reg.curriculum_store.record_gate_check(spec.name, index, agent, steps, result.passed, result.to_json())
        self.on_event(GateChecked(index, agent, steps, result.passed, result.reason, stage.min_steps))
        return result


    def _gate_sprt(self, index: int, agent: str, previous: str, n_checks: int) -> SprtOutcome:
        """The gate's sprt_vs_previous: an SPRT match (arena/match.py: recorded, rated, resumable) of
        `agent` against the previous stage's final agent, at this stage's team size and the gate's
        game clock, seeded by the check (a check interrupted in its match resumes it)."""
        gate, cfg = self.spec.stages[index].gate, self.configs[index]
        params = SprtParams.parse(gate.sprt_vs_previous)
        match_cfg = dataclasses.replace(cfg, seed=derived_seed(cfg.seed, "gate-sprt", n_checks),
                                        game=dataclasses.replace(cfg.game, game_seconds=gate.game_seconds))
        m = run_sprt_match(self.home, self.registry, match_cfg, agent, previous, params, gate.sprt_max_games,
                           workers=workers_or_default(cfg.runner.workers), b_any_stage=True)
        return SprtOutcome(m.decision or "inconclusive", m.stats.llr or 0.0, m.stats.elo, m.stats.games, m.id)


def _gate_result(check: GateCheck) -> GateResult:
    """A kept gate check read back as the GateResult it recorded."""
    return GateResult(check.passed, tuple(Criterion(**c) for c in check.criteria))


def stage_configs(spec: CurriculumSpec, home: LeagueHome, *, user_file: Path | None = None,
                  overrides: dict[str, Any] | None = None, sets: list[str] | None = None,
                  init_from: str | None = None) -> list[Config]:
    """Every stage's config, each loaded once (curriculum_spec.stage_config); a --set of a key the driver sets
    for each chunk is refused in one sentence. The first stage builds a new network unless `init_from`: one
    with a teacher speaks its actions, as --distill's does (training.launch.student_of)."""
    refuse_driver_sets(sets, DRIVER_KEYS, "--curriculum", "the curriculum file sets each stage's team size and "
                                                          "budget, and --minutes the whole run's clock")
    return [stage_config(spec, i, user_file=user_file, home_file=home.config_path, overrides=overrides, sets=sets,
                         student_of=student_of(home) if i == 0 and not init_from else None)
            for i in range(len(spec.stages))]
