"""Game throughput (`league bench env`) of this runner against a ceiling and a reference, in one run.

Six measurements on the same cores, each after a warm-up (a fresh arena runs slowly until
its memory has been touched once):

  ceiling    bare RocketSim: W processes each stepping M arenas with random controls via
             `arena.step(tick_skip)`; no observations, rewards or resets. Nothing written in
             Python can beat it. With W > 1 a one-process ceiling is measured too: the ratio
             says how many cores' worth of work W processes really get here.
  reference  RLGym v2's standard env in one process (RocketSimEngine, DefaultObs,
             LookupTableAction + RepeatAction, KickoffMutator, GoalCondition, timeouts), scaled
             by the number of cores the runner uses, since one such env uses one core.
  runner     arena.engine.vector.VecGame with W workers x M arenas, uniformly random actions.
  runner+mlp the same runner with the project's MLP actor-critic (agents.networks, [256, 256,
             256] by default; one batched forward per step) choosing every action in the main
             process, with 1 torch thread or one per core, whichever runs the policy faster
             here (fastest_threads; reported as inference_threads): the `multiprocessing`
             training backend.
  rollout    W rollout worker processes, each stepping its M arenas in-process (no per-step
             hand-off between processes) with random actions, and
  rollout+mlp the same with each worker choosing its own cars' actions with the same MLP on
             one torch thread: the `processes` and `ray` training backends
             (training.rollout_worker).

These machines are noisy (shared hosts; throughput moves by tens of percent from one second
to the next), so the measurements are interleaved: `rounds` rounds, each running every
measurement once for seconds/rounds, with every process kept alive and idle in between.
Rates are medians over rounds, and the ratios are medians of per-round ratios, so a ratio
compares numbers taken seconds apart. Each is reported as env steps/s, agent steps/s (env
steps x cars) and physics ticks/s (env steps x tick skip).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np

from arena.engine.placement import Placement
from arena.engine.pool import open_pool
from arena.engine.cores import usable_cores, workers_or_default

WARMUP_SECONDS = 1.0
ROUND_SECONDS = 1.0


@dataclass(frozen=True)
class Rate:
    """One measured throughput: env steps/s, and the same as agent steps/s (x cars) and physics ticks/s (x tick skip)."""

    processes: int
    env_steps_per_second: float
    agent_steps_per_second: float
    ticks_per_second: float


@dataclass(frozen=True)
class EnvBench:
    """What `bench_env` measured. Rates are medians over rounds; the runner's ratios are medians of
    per-round ratios (numbers taken seconds apart), so they are measured, not derived from the rates."""

    team_size: int
    tick_skip: int
    workers: int
    envs_per_worker: int
    seconds: float
    rounds: int
    reference_scale: int  # the reference's one process is scaled by this many cores
    bare_rocketsim: Rate  # the ceiling: W processes of bare RocketSim
    bare_rocketsim_one_process: Rate | None  # None with one worker (the ceiling is then one process)
    reference: Rate  # RLGym v2's standard env, one process x reference_scale
    runner: Rate  # this runner, random actions
    runner_mlp: Rate | None  # this runner with an MLP policy; None unless measured
    parallel_scaling: float  # W-process ceiling / 1-process ceiling: cores' worth W processes really get
    runner_vs_ceiling: float
    runner_vs_reference: float
    mlp_runner_vs_ceiling: float | None
    mlp_runner_vs_reference: float | None
    inference_threads: int | None = None  # torch threads the MLP ran with (see fastest_threads); None without it
    rollout: Rate | None = None  # W rollout worker processes, each stepping its games in-process, random actions
    rollout_vs_ceiling: float | None = None
    rollout_vs_reference: float | None = None
    rollout_mlp: Rate | None = None  # the same with the MLP choosing in each worker; None unless measured
    rollout_mlp_vs_ceiling: float | None = None
    rollout_mlp_vs_reference: float | None = None

    @property
    def bare_rocketsim_ticks_per_second(self) -> float:
        return self.bare_rocketsim.ticks_per_second

    @property
    def reference_ticks_per_second(self) -> float:
        return self.reference.ticks_per_second


def _timed(step: Callable[[], int], duration: float) -> tuple[int, float]:
    """Call `step` (returns env steps done) until `duration` seconds passed; (env steps, seconds)."""
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < duration:
        done += step()
    return done, time.perf_counter() - start


# --------------------------------------------------------------------------- ceiling


class CeilingWorker:
    """Bare RocketSim in one worker: `n_arenas` arenas stepped with random actions, warmed up when built."""

    def __init__(self, team_size: int, n_arenas: int, tick_skip: int, warmup: float):
        from arena.engine.sim import apply_actions, controls_table, new_arena

        arenas, cars = [], []
        for i in range(n_arenas):
            arena, arena_cars = new_arena(team_size)
            arena.reset_kickoff(i)
            arenas.append(arena)
            cars.extend(arena_cars)
        table = controls_table()
        actions = np.random.default_rng(0).integers(0, len(table), (256, len(cars))).tolist()
        counter = iter(range(1 << 62))

        def step() -> int:
            apply_actions(cars, actions[next(counter) % 256], table)
            for arena in arenas:
                arena.step(tick_skip)
            return n_arenas

        self._step = step
        _timed(step, warmup)

    def run(self, duration: float) -> tuple[int, float]:
        """(env steps, seconds) of stepping for `duration` seconds."""
        return _timed(self._step, duration)


class ProcessMeter:
    """W idle workers of the worker pool (arena.engine.pool, worker processes of this machine), each
    hosting `service(*args_of(k))`, that all run together when asked. A worker that fails or dies ends
    the measurement with the pool's WorkerError naming it, never a hang or a figure short of a worker."""

    def __init__(self, workers: int, service: type, args_of: Callable[[int], tuple]):
        self.workers = workers
        self._stack = ExitStack()
        self.pool = self._stack.enter_context(open_pool(Placement.PROCESSES, service,
                                                        [args_of(k) for k in range(workers)], "Meter worker"))

    def run(self, duration: float) -> tuple[int, float]:
        """(env steps of all workers, the longest worker's seconds) of `duration` seconds stepped together."""
        for k in range(self.pool.size):
            self.pool.call(k, "run", duration)
        results = [self.pool.reply(k) for k in range(self.pool.size)]
        return sum(steps for steps, _ in results), max(elapsed for _, elapsed in results)

    def close(self) -> None:
        self._stack.close()


def ceiling_meter(team_size: int, workers: int, envs_per_worker: int, tick_skip: int, warmup: float) -> ProcessMeter:
    """W idle processes of bare RocketSim that all run together when asked."""
    return ProcessMeter(workers, CeilingWorker, lambda k: (team_size, envs_per_worker, tick_skip, warmup))


# --------------------------------------------------------------------------- reference


def standard_rlgym_env(team_size: int, tick_skip: int):
    """RLGym v2's standard env: the setup its README and rlgym-ppo examples start from."""
    from rlgym.api import RLGym
    from rlgym.rocket_league.action_parsers import LookupTableAction, RepeatAction
    from rlgym.rocket_league.done_conditions import AnyCondition, GoalCondition, NoTouchTimeoutCondition, TimeoutCondition
    from rlgym.rocket_league.obs_builders import DefaultObs
    from rlgym.rocket_league.reward_functions import GoalReward
    from rlgym.rocket_league.sim import RocketSimEngine
    from rlgym.rocket_league.state_mutators import FixedTeamSizeMutator, KickoffMutator, MutatorSequence

    return RLGym(
        state_mutator=MutatorSequence(FixedTeamSizeMutator(team_size, team_size), KickoffMutator()),
        obs_builder=DefaultObs(zero_padding=3),
        action_parser=RepeatAction(LookupTableAction(), repeats=tick_skip),
        reward_fn=GoalReward(),
        termination_cond=GoalCondition(),
        truncation_cond=AnyCondition(NoTouchTimeoutCondition(30), TimeoutCondition(300)),
        transition_engine=RocketSimEngine(),
    )


class ReferenceMeter:
    """RLGym's standard env stepped with random actions in this process."""

    def __init__(self, team_size: int, tick_skip: int, warmup: float, seed: int = 0):
        self._env = standard_rlgym_env(team_size, tick_skip)
        self._rng = np.random.default_rng(seed)
        self._env.reset()
        self._agents = list(self._env.agents)
        _timed(self._step, warmup)

    def _step(self) -> int:
        picks = self._rng.integers(0, 90, len(self._agents))
        _, _, terminated, truncated = self._env.step({a: np.array([p]) for a, p in zip(self._agents, picks)})
        if any(terminated.values()) or any(truncated.values()):
            self._env.reset()
        return 1

    def run(self, duration: float) -> tuple[int, float]:
        return _timed(self._step, duration)

    def close(self) -> None:
        self._env.close()


# --------------------------------------------------------------------------- runner


def mlp_chooser(policy_config=None, seed: int = 0) -> Callable[[np.ndarray], np.ndarray]:
    """The project's MLP actor-critic (agents.networks) behind its batched Policy (agents.nn_policy).

    Default sizes: league.config.PolicyConfig's ([256, 256, 256] actor and critic). Each call is
    the car-frame features and the actor's forward, as playing runs them (NetworkPolicy.act needs
    no value), and samples the actions; a training rollout also runs the critic on its learner rows.
    """
    import torch

    from agents.networks import build_network
    from agents.nn_policy import NetworkPolicy
    from league.config import PolicyConfig

    torch.manual_seed(seed)
    policy = NetworkPolicy(build_network(policy_config or PolicyConfig(kind="mlp")), name="bench-mlp")
    policy.seed(seed)
    return lambda obs: policy.act(obs)[0]


def fastest_threads(choose: Callable[[np.ndarray], np.ndarray], obs: np.ndarray, candidates: tuple[int, ...],
                    seconds: float = 0.2) -> int:
    """The torch thread count, of `candidates`, that runs `choose(obs)` fastest here (best of a few tries each).

    More threads are not always faster: with OMP_WAIT_POLICY=PASSIVE every parallel region
    wakes its sleeping threads, which on 2 cores made a 2-thread forward of the [256, 256, 256]
    MLP slower than a 1-thread one (1.30 against 1.15 ms for 128 rows), and a busy core stalls
    every region that needs it. Training's driver uses one thread beside two workers
    (training.accel.learner_threads); this picks what is fastest on the machine at hand.
    """
    import torch

    before, best, best_time = torch.get_num_threads(), candidates[0], float("inf")
    try:
        for n in dict.fromkeys(candidates):  # in order, without repeats
            torch.set_num_threads(n)
            choose(obs)  # the first call at a thread count pays for starting its threads
            calls = max(3, int(seconds / 0.002) // 5)
            per_call = min(_timed_calls(choose, obs, calls) for _ in range(5))
            if per_call < best_time:
                best, best_time = n, per_call
    finally:
        torch.set_num_threads(before)
    return best


def _timed_calls(choose: Callable[[np.ndarray], np.ndarray], obs: np.ndarray, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        choose(obs)
    return (time.perf_counter() - start) / calls


class RunnerMeter:
    """The VecGame stepped by a chooser function (random actions, or a policy)."""

    def __init__(self, team_size: int, workers: int, envs_per_worker: int, tick_skip: int, seed: int = 0):
        from arena.engine.game import GameSpec
        from arena.engine.vector import VecGame

        self.games = VecGame(GameSpec(team_size=team_size, tick_skip=tick_skip), workers=workers,
                             envs_per_worker=envs_per_worker, placement=Placement.PROCESSES, seed=seed)
        self._obs = self.games.reset()
        rng = np.random.default_rng(seed)
        self.random_actions = lambda obs: rng.integers(0, 90, self.games.num_agents)
        self.choose = self.random_actions

    def _step(self) -> int:
        self._obs, *_ = self.games.step(self.choose(self._obs))
        return self.games.num_envs

    @property
    def observations(self) -> np.ndarray:
        """The latest observations (a view of the runner's shared memory)."""
        return self._obs

    def warm_up(self, seconds: float) -> None:
        _timed(self._step, seconds)

    def run(self, duration: float) -> tuple[int, float]:
        return _timed(self._step, duration)

    def close(self) -> None:
        self.games.close()


# --------------------------------------------------------------------------- rollout workers


class RolloutMeterWorker:
    """One rollout worker as the `rollout` and `ray` backends run it: its arenas stepped in its own process
    (Placement.IN_PROCESS), with random actions or the MLP's forward for its own cars on one torch thread."""

    def __init__(self, team_size: int, n_arenas: int, tick_skip: int, warmup: float, seed: int, mlp: bool,
                 policy_config):
        import torch

        from arena.engine.game import GameSpec
        from arena.engine.vector import VecGame

        torch.set_num_threads(1)
        self.games = VecGame(GameSpec(team_size=team_size, tick_skip=tick_skip), workers=1, envs_per_worker=n_arenas,
                             placement=Placement.IN_PROCESS, seed=seed)
        rng = np.random.default_rng(seed)
        choose = mlp_chooser(policy_config, seed) if mlp else lambda obs: rng.integers(0, 90, len(obs))
        obs = [self.games.reset()]

        def step() -> int:
            obs[0], *_ = self.games.step(choose(obs[0]))
            return n_arenas

        self._step = step
        _timed(step, warmup)

    def run(self, duration: float) -> tuple[int, float]:
        """(env steps, seconds) of stepping for `duration` seconds."""
        return _timed(self._step, duration)

    def close(self) -> None:
        self.games.close()


def rollout_meter(team_size: int, workers: int, envs_per_worker: int, tick_skip: int, warmup: float,
                  seed: int = 0, mlp: bool = True, policy_config=None) -> ProcessMeter:
    """W idle rollout worker processes (games, and the MLP when `mlp`, in each) that all run together when asked."""
    return ProcessMeter(workers, RolloutMeterWorker,
                        lambda k: (team_size, envs_per_worker, tick_skip, warmup, seed + k, mlp, policy_config))


# --------------------------------------------------------------------------- all of it


def _rates(samples: list[tuple[int, float]]) -> float:
    return statistics.median(steps / elapsed for steps, elapsed in samples)


def _ratio(a: list[tuple[int, float]], b: list[tuple[int, float]], scale: float = 1.0) -> float:
    return statistics.median((sa / ea) / (sb / eb * scale) for (sa, ea), (sb, eb) in zip(a, b))


def bench_env(team_size: int, workers: int = 0, envs_per_worker: int = 32, tick_skip: int = 8,
              seconds: float = 5.0, include_mlp: bool = True, seed: int = 0,
              warmup_seconds: float = WARMUP_SECONDS, policy_config=None) -> EnvBench:
    """Measure ceiling, reference, runner (and runner with an MLP), interleaved in rounds.

    With several workers a one-process ceiling is measured too: its ratio to the W-process
    ceiling is how many cores' worth of work W processes really get on this machine.
    """
    workers = workers_or_default(workers)
    scale = min(workers, usable_cores())
    rounds = max(1, round(seconds / ROUND_SECONDS))
    duration = seconds / rounds
    meters: list = []
    threads = inference_threads = None
    try:
        ceiling = ceiling_meter(team_size, workers, envs_per_worker, tick_skip, warmup_seconds)
        meters.append(ceiling)
        single = ceiling_meter(team_size, 1, envs_per_worker, tick_skip, warmup_seconds) if workers > 1 else None
        meters.append(single)
        reference = ReferenceMeter(team_size, tick_skip, warmup_seconds, seed)
        meters.append(reference)
        runner = RunnerMeter(team_size, workers, envs_per_worker, tick_skip, seed)
        meters.append(runner)
        runner.warm_up(warmup_seconds)
        rollout = rollout_meter(team_size, workers, envs_per_worker, tick_skip, warmup_seconds, seed, mlp=False)
        meters.append(rollout)
        mlp = rollout_mlp = None
        if include_mlp:
            rollout_mlp = rollout_meter(team_size, workers, envs_per_worker, tick_skip, warmup_seconds, seed,
                                        mlp=True, policy_config=policy_config)
            meters.append(rollout_mlp)
            # Stepping is lockstep: while the main process runs the policy every worker waits,
            # so inference may use every core. Idle OpenMP threads must sleep, not spin, or they
            # would take those cores back from the workers (set before torch starts its pool).
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            import torch

            threads = torch.get_num_threads()
            mlp = mlp_chooser(policy_config, seed)
            inference_threads = fastest_threads(mlp, runner.observations, (1, usable_cores()))
            torch.set_num_threads(inference_threads)
        samples: dict[str, list[tuple[int, float]]] = {k: [] for k in ("ceiling", "single", "reference", "runner", "mlp", "rollout", "rollout_mlp")}
        for _ in range(rounds):
            samples["ceiling"].append(ceiling.run(duration))
            if single is not None:
                samples["single"].append(single.run(duration))
            samples["reference"].append(reference.run(duration))
            runner.choose = runner.random_actions
            samples["runner"].append(runner.run(duration))
            samples["rollout"].append(rollout.run(duration))
            if mlp is not None:
                runner.choose = mlp
                samples["mlp"].append(runner.run(duration))
                samples["rollout_mlp"].append(rollout_mlp.run(duration))
    finally:
        if threads is not None:
            import torch

            torch.set_num_threads(threads)
        for meter in reversed(meters):
            if meter is not None:
                meter.close()

    cars = 2 * team_size

    def rate(key: str, processes: int, factor: float = 1.0) -> Rate:
        env_steps = _rates(samples[key]) * factor
        return Rate(processes, env_steps, env_steps * cars, env_steps * tick_skip)

    return EnvBench(
        team_size=team_size, tick_skip=tick_skip, workers=workers, envs_per_worker=envs_per_worker,
        seconds=seconds, rounds=rounds, reference_scale=scale,
        bare_rocketsim=rate("ceiling", workers),
        bare_rocketsim_one_process=rate("single", 1) if single is not None else None,
        reference=rate("reference", 1, factor=scale),
        runner=rate("runner", workers),
        runner_mlp=rate("mlp", workers) if include_mlp else None,
        parallel_scaling=_ratio(samples["ceiling"], samples["single"]) if single is not None else 1.0,
        runner_vs_ceiling=_ratio(samples["runner"], samples["ceiling"]),
        runner_vs_reference=_ratio(samples["runner"], samples["reference"], scale),
        mlp_runner_vs_ceiling=_ratio(samples["mlp"], samples["ceiling"]) if include_mlp else None,
        mlp_runner_vs_reference=_ratio(samples["mlp"], samples["reference"], scale) if include_mlp else None,
        inference_threads=inference_threads,
        rollout=rate("rollout", workers),
        rollout_vs_ceiling=_ratio(samples["rollout"], samples["ceiling"]),
        rollout_vs_reference=_ratio(samples["rollout"], samples["reference"], scale),
        rollout_mlp=rate("rollout_mlp", workers) if include_mlp else None,
        rollout_mlp_vs_ceiling=_ratio(samples["rollout_mlp"], samples["ceiling"]) if include_mlp else None,
        rollout_mlp_vs_reference=_ratio(samples["rollout_mlp"], samples["reference"], scale) if include_mlp else None,
    )
