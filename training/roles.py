"""League roles: `league train --league FILE` (AlphaStar's league, Vinyals et al., 2019).

One main agent trains with today's learner and opponent mix; the snapshots of every exploiter,
every restart of it, join the candidates of its past and PFSP shares, so it must answer them. A
main exploiter trains against the main agent's latest snapshot alone (training.best_response_to,
the target taken again at each of its slices); a league exploiter trains by PFSP over every
active trained member of the stage. After each of its slices an exploiter's latest snapshot plays
`check_games` games against its targets (the probe's way: most likely actions, not rated); when
it wins `reset_win_rate` of them, or its restart has trained `max_steps`, the role restarts as a
new run `<league>-<role>-r<k+1>` (fresh weights, kickstarted, or the main agent's), and the old
run's snapshots stay in the pool.

What a role trains against, where a new run of it starts and whom it is checked against is its
kind's, one class each (training.role_kinds). Every role's config is loaded once, when the command
starts; a slice is one run of the self-play trainer (training.slices) with the slice's seed, budget
and opponents handed over as values. On one machine the roles take turns: each turn, the role
furthest behind its share of the time (its trained seconds over its share) trains one slice of
`slice_minutes`, resuming its run from its latest snapshot. With `--backend ray` every role is its
own learner in a process of its own (training.learner_process: torch's seed and thread count are
process-wide), all training at once, each with its share of the rollout workers.

Every role's state lives in the registry (tables leagues, league_roles, role_checks) and in its
snapshots, so after an interruption (Ctrl-C, the time budget, kill -9) the same command resumes
every role where its last snapshot left it. The seconds a role trained are added every 30 s and
at the end of each slice.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from league.config import Config, RatingsConfig, team_size_of
from league.errors import LeagueError
from league.home import LeagueHome
from league.locks import claim
from league.registry import Registry, utc_now
from league.results import Record
from league.stores.roles import RoleCheck, RoleState
from training.budget import SECONDS_PER_MINUTE, Budget, Clock
from training.evaluation import play_recorded, player
from training.progress import OnEvent, TrainerEvent, ignore
from training.role_kinds import League, kind_of
from training.roles_spec import DRIVER_KEYS, RoleSpec, RolesSpec, role_config
from training.seeds import derived_seed
from training.slice_spec import refuse_driver_sets
from training.slices import Interrupted, Slice, check_not_taken, train_slice

CHECK_GAME_SECONDS = 60.0
SECONDS_FLUSH = 30.0  # how often a training role's seconds are written (a kill -9 loses at most this much)
MIN_SLICE_SECONDS = 2.0  # less of the clock left than this: no slice is started


@dataclass(frozen=True)
class SliceStarted:
    """A role starts a slice: its run, from which snapshot, for how long, against whom (exploiters)."""

    role: str
    kind: str
    run: str
    resume: str | None
    minutes: float
    target: str | None = None


@dataclass(frozen=True)
class RoleProgress:
    """A role's trainer reported `event`."""

    role: str
    event: TrainerEvent


@dataclass(frozen=True)
class RoleChecked:
    check: RoleCheck
    threshold: float
    next_run: str | None  # the role's new run when the check reset it


@dataclass(frozen=True)
class LeagueEnded:
    status: str  # stopped (its time budget spent) | interrupted (Ctrl-C)
    message: str


@dataclass
class LeagueResult:
    name: str
    status: str
    message: str
    roles: list[RoleState] = field(default_factory=list)
    checks: list[RoleCheck] = field(default_factory=list)


class RolesTrainer:
    """Runs (or resumes) a league of roles in a league home."""

    def __init__(self, spec: RolesSpec, home: LeagueHome, registry: Registry, configs: dict[str, Config], *,
                 source: str = "", minutes: float = 0.0, on_event: OnEvent | None = None):
        """`configs`: every role's config, as role_configs loads them, once, before anything is trained (the
        trainer takes them as given). `minutes`: this command's clock (0: none)."""
        self.spec, self.home, self.registry, self.source = spec, home, registry, source
        self.budget = Budget.from_limits(minutes=minutes)  # a budget that cannot be is refused now
        self.on_event = on_event or ignore
        self.team_size = team_size_of(spec.stage)
        self.league = League(spec, self.team_size)
        self.configs = configs
        self.ray = self.configs[spec.main.name].runner.backend == "ray"
        self._check_stored()

    def _check_stored(self) -> None:
        """A league run again must have the roles it was started with (a share may change)."""
        store = self.registry.role_store
        if self.spec.name not in store.names():
            return
        stored = {r.role: r.kind for r in store.roles(self.spec.name)}
        given = {r.name: r.kind for r in self.spec.roles}
        if stored != given or store.get(self.spec.name).team_size != self.team_size:
            was = ", ".join(f"{r} ({k})" for r, k in stored.items())
            raise LeagueError(f"League {self.spec.name!r} was started with the roles {was} at "
                              f"{store.get(self.spec.name).team_size}v{store.get(self.spec.name).team_size}; run "
                              "it with the same roles and stage, or give this file another name (--name).")

    # ------------------------------------------------------------------ the run

    def run(self) -> LeagueResult:
        """Run (or resume) the league; a second command on the same league fails at once."""
        with claim(self.home.root, "league", self.spec.name, f"League {self.spec.name!r}"):
            store = self.registry.role_store
            if self.spec.name not in store.names():
                for role in self.spec.roles:
                    check_not_taken(self.registry, self.league.run_name(role), "league", " (--name)")
            store.start(self.spec.name, self.team_size, self.spec.to_dict(), self.source,
                        [(r.name, r.kind, self.league.run_name(r)) for r in self.spec.roles])
            clock = self.budget.start(time.monotonic)
            try:
                if self.ray:
                    self._run_together(clock)
                else:
                    self._run_in_turns(clock)
                status, message = "stopped", "its time budget is spent; run the same command again to go on"
            except (Interrupted, KeyboardInterrupt):
                status, message = "interrupted", "interrupted; run the same command again to continue"
            except BaseException as exc:  # a role's training failed: the league says so, the error goes on up
                store.finish(self.spec.name, "interrupted", f"stopped by an error: {exc}")
                raise
            store.finish(self.spec.name, status, message)
            self.on_event(LeagueEnded(status, message))
            return LeagueResult(self.spec.name, status, message, store.roles(self.spec.name),
                                store.checks(self.spec.name))

    def _run_in_turns(self, clock: Clock) -> None:
        """One machine: the role furthest behind its share trains one slice, until the clock is spent."""
        while (left := clock.remaining()) is not None and not 0 < left.seconds < MIN_SLICE_SECONDS:
            role = self.next_role()
            self.train_slice(role, self.registry, self.slice_seconds(role, left.seconds))

    def slice_seconds(self, role: RoleSpec, left: float) -> float:
        """`role`'s next slice: slice_minutes; with `left` seconds of the command's clock (0: no clock), at most
        what the role is owed of them, its share of all the time trained and left less what it has trained, so a
        command shorter than a turn of slices still gives every role its share."""
        seconds = self.spec.slice_minutes * SECONDS_PER_MINUTE
        if not left:
            return seconds
        trained = {s.role: s.seconds for s in self.registry.role_store.roles(self.spec.name)}
        owed = self.spec.share(role) * (sum(trained.values()) + left) - trained.get(role.name, 0.0)
        return min(seconds, left, max(owed, MIN_SLICE_SECONDS))

    def next_role(self) -> RoleSpec:
        """The role whose trained seconds are furthest behind its share (the file's order breaks ties);
        exploiters wait for the main agent's first snapshot."""
        states = {s.role: s for s in self.registry.role_store.roles(self.spec.name)}
        main_ready = self.league.main_latest(self.registry) is not None
        ready = [r for r in self.spec.roles if main_ready or not kind_of(r).waits_for_main]
        return min(ready, key=lambda r: states[r.name].seconds / self.spec.share(r))

    def _run_together(self, clock: Clock) -> None:
        """--backend ray: every role its own learner in a process of its own (training.learner_process), each
        training slices until the clock is spent; an error in one stops them all. Ray is started (or joined)
        once here, and every learner joins it, so none shuts it down under the others."""
        from arena.engine.ray_cluster import ray_session
        from arena.engine.cores import workers_or_default
        from training.learner_process import run_apart

        runner = self.configs[self.spec.main.name].runner
        local = self.role_workers(workers_or_default(runner.rollout_workers))  # a local instance has room for all
        with ray_session(sum(local.values()), runner.address or None) as ray:
            total = runner.rollout_workers or int(ray.cluster_resources().get("CPU", 1))
            address = runner.address or ray.get_runtime_context().gcs_address  # where each learner joins it
            workers = self.role_workers(total)
            jobs = {role.name: functools.partial(_role_learner, _RoleJob(
                        self.spec, self.home, self.source, self.registry.ratings_cfg, self.configs, role.name,
                        workers[role.name], address, clock)) for role in self.spec.roles}
            if run_apart(jobs, self.on_event):
                raise Interrupted("interrupted")

    def role_workers(self, total: int) -> dict[str, int]:
        """Each role's share of `total` rollout workers, at least one."""
        return {r.name: max(1, int(total * self.spec.share(r))) for r in self.spec.roles}

    def learn(self, role: RoleSpec, registry: Registry, clock: Clock, stop: Any, workers: int) -> None:
        """One role's learner (in its own process): slices until the clock is spent or `stop` is set."""
        kind = kind_of(role)
        while not stop.is_set() and (left := clock.remaining()) is not None and not (
                0 < left.seconds < MIN_SLICE_SECONDS):
            if kind.waits_for_main and not self.league.main_latest(registry):
                time.sleep(1.0)  # the main agent's first snapshot is the exploiters' first target
                continue
            seconds = self.spec.slice_minutes * SECONDS_PER_MINUTE
            self.train_slice(role, registry, min(seconds, left.seconds) if left.seconds else seconds, workers=workers)

    # ------------------------------------------------------------------ one slice

    def main_latest(self, registry: Registry) -> str | None:
        return self.league.main_latest(registry)

    def train_slice(self, role: RoleSpec, registry: Registry, seconds: float, workers: int | None = None) -> None:
        """Train `role` for `seconds` (resuming its run), then check it if its kind has targets."""
        state = registry.role_store.role(self.spec.name, role.name)
        latest = registry.agent_store.latest_version(state.run)
        kind, cfg = kind_of(role), self.configs[role.name]
        n_versions = 0 if latest is None else len(registry.agent_store.run_versions(state.run))
        cfg = dataclasses.replace(cfg, seed=derived_seed(cfg.seed, "role", role.name, state.restart, n_versions))
        if workers is not None:  # the role's share of the Ray workers, over any --set of the total
            cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, rollout_workers=workers))
        against = kind.opponents(self.league, registry, role)
        init_from = kind.start_from(self.league, registry, role) if latest is None else None
        piece = Slice(state.run, cfg, Budget(seconds=seconds), init_from=init_from, target=against.target,
                      pool=against.pool, mix=against.mix)
        self.on_event(SliceStarted(role.name, role.kind, state.run, latest, seconds / SECONDS_PER_MINUTE,
                                   against.target))
        flushed = [time.monotonic()]

        def progress(event: TrainerEvent) -> None:
            now = time.monotonic()
            if now - flushed[0] >= SECONDS_FLUSH:
                registry.role_store.add_seconds(self.spec.name, role.name, now - flushed[0])
                flushed[0] = now
            self.on_event(RoleProgress(role.name, event))

        def record() -> None:
            registry.role_store.add_seconds(self.spec.name, role.name, time.monotonic() - flushed[0])

        train_slice(self.home, registry, piece, progress, on_end=record)
        self.check(role, registry)

    # ------------------------------------------------------------------ an exploiter's check

    def check(self, role: RoleSpec, registry: Registry) -> RoleChecked | None:
        """The role's latest snapshot plays its kind's targets (none: no check); a reset moves it to a new run."""
        targets = kind_of(role).check_targets(self.league, registry, role)
        if not targets:
            return None
        state = registry.role_store.role(self.spec.name, role.name)
        versions = registry.agent_store.run_versions(state.run)
        agent = registry.agent_store.get(versions[-1])
        per_target = max(2, role.check_games // len(targets))
        seed = derived_seed(self.configs[role.name].seed, "role-check", role.name, state.restart, len(versions))
        me = player(registry, agent.name, self.home.root)
        matchups = [(me, player(registry, t, self.home.root)) for t in targets]
        played = play_recorded(None, matchups, per_target, self.team_size, CHECK_GAME_SECONDS, seed,
                               self.configs[role.name].game.tick_skip, deterministic=True)
        record = Record.from_goals(g for per in played for g in per)
        steps = agent.steps_trained - self._start_steps(registry, versions[0])
        reset = ("won" if record.win_rate >= role.reset_win_rate else
                 "steps" if steps >= role.max_steps else "")
        check = RoleCheck(**record.counts(), league=self.spec.name, role=role.name,
                          restart=state.restart, agent=agent.name, steps=steps, targets=tuple(targets), reset=reset,
                          created=utc_now())
        next_run = self._next_run(registry, role, state.restart) if reset else None
        registry.role_store.record_check(check, next_run)
        event = RoleChecked(check, role.reset_win_rate, next_run[1] if next_run else None)
        self.on_event(event)
        return event

    @staticmethod
    def _start_steps(registry: Registry, first_version: str) -> int:
        """The steps a run started from: its first version's parent's (a restart from the main agent), else 0."""
        first = registry.agent_store.get(first_version)
        return 0 if first.parent_id is None else registry.agent_store.by_id(first.parent_id).steps_trained

    def _next_run(self, registry: Registry, role: RoleSpec, restart: int) -> tuple[int, str]:
        """The restart after `restart` and its run (past any run that already has versions)."""
        k = restart + 1
        while registry.agent_store.latest_version(self.league.run_name(role, k)) is not None:
            k += 1
        return k, self.league.run_name(role, k)


def role_configs(spec: RolesSpec, home: LeagueHome, *, user_file: Path | None = None,
                 overrides: dict[str, Any] | None = None, sets: list[str] | None = None) -> dict[str, Config]:
    """Every role's config, each loaded once (roles_spec.role_config); a --set of a key the driver sets for each
    slice is refused in one sentence."""
    refuse_driver_sets(sets, DRIVER_KEYS, "--league", "--minutes is the league's budget, each role's kind its "
                                                      "opponents")
    return {role.name: role_config(spec, role, user_file=user_file, home_file=home.config_path,
                                   overrides=overrides, sets=sets) for role in spec.roles}


@dataclass(frozen=True)
class _RoleJob:
    """What a role's learner process needs (picklable): the league, the role, its share of the workers, the
    Ray cluster to join and the command's clock (time.monotonic is one clock for every process of a machine)."""

    spec: RolesSpec
    home: LeagueHome
    source: str
    ratings: RatingsConfig
    configs: dict[str, Config]
    role: str
    workers: int
    address: str
    clock: Clock


def _role_learner(job: _RoleJob, emit: Any, stop: Any) -> bool:
    """A role's learner, in a process of its own: its own registry connection, Ray joined for all its slices;
    its events go back to the driver. True when Ctrl-C ended a slice (its final snapshot saved)."""
    from arena.engine.ray_cluster import ray_session

    configs = {name: dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, address=job.address))
               for name, cfg in job.configs.items()}
    registry = Registry.open(job.home.db_path, job.ratings)
    try:
        league = RolesTrainer(job.spec, job.home, registry, configs, source=job.source, on_event=emit)
        role = next(r for r in job.spec.roles if r.name == job.role)
        with ray_session(0, job.address):
            league.learn(role, registry, job.clock, stop, job.workers)
        return False
    except Interrupted:
        return True
    finally:
        registry.close()
