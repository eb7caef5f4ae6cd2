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

On one machine the roles take turns: each turn, the role furthest behind its share of the time
(its trained seconds over its share) trains one slice of `slice_minutes` with the self-play
trainer, resuming its run from its latest snapshot. With `--backend ray` every role is its own
learner, all training at once, each with its share of the rollout workers.

Every role's state lives in the registry (tables leagues, league_roles, role_checks) and in its
snapshots, so after an interruption (Ctrl-C, the time budget, kill -9) the same command resumes
every role where its last snapshot left it. The seconds a role trained are added every 30 s and
at the end of each slice.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.loading import load_policy
from league.config import Config, team_size_of
from league.errors import LeagueError
from league.home import LeagueHome
from league.locks import claim
from league.names import split_version
from league.registry import Registry, utc_now
from league.stores.roles import RoleCheck, RoleState
from training.budget import SECONDS_PER_MINUTE, Budget
from training.evaluation import Player, play_recorded
from training.progress import OnEvent, TrainerEvent, ignore
from training.roles_spec import DRIVER_KEYS, RoleSpec, RolesSpec, role_config
from training.seeds import derived_seed
from training.snapshots import run_versions

CHECK_GAME_SECONDS = 60.0
SECONDS_FLUSH = 30.0  # how often a training role's seconds are written (a kill -9 loses at most this much)
MIN_SLICE_SECONDS = 2.0  # less of the clock left than this: no slice is started
LEAGUE_EXPLOITER_TARGETS = 4  # a league exploiter's check plays the main agent and up to three other members


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


class _Interrupted(Exception):
    """The league stops here (Ctrl-C in a slice); everything written so far is kept."""


class RolesTrainer:
    """Runs (or resumes) a league of roles in a league home."""

    def __init__(self, spec: RolesSpec, home: LeagueHome, registry: Registry, *, source: str = "",
                 user_file: Path | None = None, overrides: dict[str, Any] | None = None,
                 sets: list[str] | None = None, minutes: float = 0.0, on_event: OnEvent | None = None):
        self.spec, self.home, self.registry, self.source = spec, home, registry, source
        self.user_file, self.sets = user_file, list(sets or [])
        self.overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        self.budget = Budget(seconds=minutes * SECONDS_PER_MINUTE)  # a budget that cannot be is refused now
        for item in self.sets:
            key = tuple(item.split("=", 1)[0].strip().split("."))
            if key in DRIVER_KEYS:
                raise LeagueError(f"--set {'.'.join(key)} does not go with --league: the driver sets it for each "
                                  "slice (--minutes is the league's budget, each role's kind its opponents).")
        self.on_event = on_event or ignore
        self.team_size = team_size_of(spec.stage)
        # Every role's config is built (and so validated) before anything is trained.
        self.configs = {role.name: self.config(role, Budget(steps=1)) for role in spec.roles}
        self.ray = self.configs[spec.main.name].runner.backend == "ray"
        self._check_stored()

    def config(self, role: RoleSpec, budget: Budget, **extra: Any) -> Config:
        """`role`'s config with the driver's budget (and seed, target) for one slice."""
        overrides = {**self.overrides, **budget.overrides(), **extra}
        return role_config(self.spec, role, user_file=self.user_file, home_file=self.home.config_path,
                           overrides=overrides, sets=self.sets)

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
            for role in self.spec.roles:
                existing = run_versions(self.registry, self.spec.run_name(role))
                if existing and self.spec.name not in store.names():
                    raise LeagueError(f"Run {self.spec.run_name(role)!r} already has versions (latest "
                                      f"{existing[-1]!r}) that this league did not train; give the league another "
                                      "name (--name).")
            store.start(self.spec.name, self.team_size, self.spec.to_dict(), self.source,
                        [(r.name, r.kind, self.spec.run_name(r)) for r in self.spec.roles])
            clock = self.budget.start(time.monotonic)
            try:
                if self.ray:
                    self._run_together(clock)
                else:
                    self._run_in_turns(clock)
                status, message = "stopped", "its time budget is spent; run the same command again to go on"
            except (_Interrupted, KeyboardInterrupt):
                status, message = "interrupted", "interrupted; run the same command again to continue"
            except BaseException as exc:  # a role's training failed: the league says so, the error goes on up
                store.finish(self.spec.name, "interrupted", f"stopped by an error: {exc}")
                raise
            store.finish(self.spec.name, status, message)
            self.on_event(LeagueEnded(status, message))
            return LeagueResult(self.spec.name, status, message, store.roles(self.spec.name),
                                store.checks(self.spec.name))

    def _run_in_turns(self, clock) -> None:
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
        ready = [r for r in self.spec.roles if r.kind == "main" or self.main_latest(self.registry)]
        return min(ready, key=lambda r: states[r.name].seconds / self.spec.share(r))

    def _run_together(self, clock) -> None:
        """--backend ray: every role its own learner, in its own thread with its own database connection,
        each training slices until the clock is spent; an error in one stops them all. Ray is started (or
        joined) once here, so every slice's trainer finds it and none shuts it down under the others."""
        from arena.engine.ray_cluster import ray_session
        from arena.engine.vector import default_workers

        runner = self.configs[self.spec.main.name].runner
        local = self.role_workers(runner.rollout_workers or default_workers())  # a local instance has room for all
        with ray_session(sum(local.values()), runner.address or None) as ray:
            total = runner.rollout_workers or int(ray.cluster_resources().get("CPU", 1))
            self._run_threads(clock, self.role_workers(total))

    def role_workers(self, total: int) -> dict[str, int]:
        """Each role's share of `total` rollout workers, at least one."""
        return {r.name: max(1, int(total * self.spec.share(r))) for r in self.spec.roles}

    def _run_threads(self, clock, workers: dict[str, int]) -> None:
        stop = threading.Event()
        errors: list[BaseException] = []

        def loop(role: RoleSpec) -> None:
            registry = Registry.open(self.home.db_path, self.registry.ratings_cfg)
            try:
                while not stop.is_set() and (left := clock.remaining()) is not None and not (
                        0 < left.seconds < MIN_SLICE_SECONDS):
                    if role.kind != "main" and not self.main_latest(registry):
                        time.sleep(1.0)  # the main agent's first snapshot is the exploiters' first target
                        continue
                    seconds = self.spec.slice_minutes * SECONDS_PER_MINUTE
                    self.train_slice(role, registry, min(seconds, left.seconds) if left.seconds else seconds,
                                     workers=workers[role.name])
            except BaseException as exc:  # noqa: BLE001 - handed to the driver thread below
                errors.append(exc)
                stop.set()
            finally:
                registry.close()

        threads = [threading.Thread(target=loop, args=(r,), name=f"role-{r.name}", daemon=True)
                   for r in self.spec.roles]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.5)
        except KeyboardInterrupt:
            stop.set()
            raise
        if errors:
            raise errors[0]

    # ------------------------------------------------------------------ one slice

    def main_latest(self, registry: Registry) -> str | None:
        versions = run_versions(registry, self.spec.run_name(self.spec.main))
        return versions[-1] if versions else None

    def exploiter_pool(self, registry: Registry) -> list[str]:
        """Every snapshot of every exploiter run, each restart's (the main agent's extra pool)."""
        prefixes = [f"{self.spec.name}-{r.name}-r" for r in self.spec.roles if r.kind != "main"]
        return [a.name for a in registry.agent_store.all(self.team_size)
                if (split := split_version(a.name)) and any(split[0].startswith(p) for p in prefixes)]

    def members(self, registry: Registry, role: RoleSpec) -> list[str]:
        """The stage's active trained members but the role's own runs, newest first (a league exploiter's pool)."""
        own = f"{self.spec.name}-{role.name}-r"
        return [a.name for a in reversed(registry.agent_store.all(self.team_size))
                if a.kind in ("mlp", "lstm") and a.team_size == self.team_size and not a.name.startswith(own)
                and a.status != "retired" and not a.name.startswith("probe-")]

    def train_slice(self, role: RoleSpec, registry: Registry, seconds: float, workers: int | None = None) -> None:
        """Train `role` for `seconds` (resuming its run), then check it if it is an exploiter."""
        from training.selfplay import (
            SelfPlayTrainer,  # torch: only when a league trains
        )

        state = registry.role_store.role(self.spec.name, role.name)
        versions = run_versions(registry, state.run)
        latest = versions[-1] if versions else None
        extra: dict[str, Any] = {"seed": derived_seed(self.configs[role.name].seed, "role", role.name, state.restart,
                                                      len(versions))}
        target, pool, init_from = None, None, None
        if role.kind == "main":
            pool = lambda: self.exploiter_pool(registry)
        elif role.kind == "main_exploiter":
            target = self.main_latest(registry)
            extra["training.best_response_to"] = target
        else:  # league exploiter: PFSP over every active trained member
            extra["training.opponents"] = {"latest": 0.0, "past": 0.0, "pfsp": 1.0, "rule": 0.0, "random": 0.0,
                                           "community": 0.0}
            pool = lambda: self.members(registry, role)
        if role.kind != "main" and latest is None and role.restart_from == "main":
            init_from = self.main_latest(registry)
        cfg = self.config(role, Budget(seconds=seconds), **extra)
        if workers is not None:  # the role's share of the Ray workers, over any --set of the total
            cfg = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, rollout_workers=workers))
        self.on_event(SliceStarted(role.name, role.kind, state.run, latest, seconds / SECONDS_PER_MINUTE, target))
        flushed = [time.monotonic()]

        def progress(event: TrainerEvent) -> None:
            now = time.monotonic()
            if now - flushed[0] >= SECONDS_FLUSH:
                registry.role_store.add_seconds(self.spec.name, role.name, now - flushed[0])
                flushed[0] = now
            self.on_event(RoleProgress(role.name, event))

        try:
            trainer = SelfPlayTrainer(cfg, self.home, registry, name=None if latest else state.run, resume=latest,
                                      init_from=init_from, on_progress=progress, pool=pool)
            result = trainer.run()
        finally:
            registry.role_store.add_seconds(self.spec.name, role.name, time.monotonic() - flushed[0])
        if result.interrupted:
            raise _Interrupted
        if role.kind != "main":
            self.check(role, registry)

    # ------------------------------------------------------------------ an exploiter's check

    def check_targets(self, role: RoleSpec, registry: Registry) -> list[str]:
        main = self.main_latest(registry)
        if role.kind == "main_exploiter":
            return [main]
        others = [m for m in self.members(registry, role) if not m.startswith(f"{self.spec.run_name(self.spec.main)}-v")]
        return [main, *others[: LEAGUE_EXPLOITER_TARGETS - 1]]

    def check(self, role: RoleSpec, registry: Registry) -> RoleChecked:
        """The exploiter's latest snapshot plays its targets; a reset moves the role to a new run."""
        state = registry.role_store.role(self.spec.name, role.name)
        versions = run_versions(registry, state.run)
        agent = registry.agent_store.get(versions[-1])
        targets = self.check_targets(role, registry)
        per_target = max(2, role.check_games // len(targets))
        seed = derived_seed(self.configs[role.name].seed, "role-check", role.name, state.restart, len(versions))
        me = Player(agent.name, load_policy(agent, home_root=self.home.root))
        matchups = [(me, Player(t, load_policy(registry.agent_store.get(t), home_root=self.home.root)))
                    for t in targets]
        played = play_recorded(None, matchups, per_target, self.team_size, CHECK_GAME_SECONDS, seed,
                               self.configs[role.name].game.tick_skip, deterministic=True)
        goals = [g for per in played for g in per]
        wins, draws = sum(a > b for a, b in goals), sum(a == b for a, b in goals)
        steps = agent.steps_trained - self._start_steps(registry, versions[0])
        reset = ("won" if wins / len(goals) >= role.reset_win_rate else
                 "steps" if steps >= role.max_steps else "")
        check = RoleCheck(self.spec.name, role.name, state.restart, agent.name, steps, tuple(targets), len(goals),
                          wins, draws, len(goals) - wins - draws, reset, utc_now())
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
        while run_versions(registry, self.spec.run_name(role, k)):
            k += 1
        return k, self.spec.run_name(role, k)
