"""rlgym-learn 1.0.5 + rlgym-learn-algos 0.2.6 PPO on the league's 1v1 game: agent steps/s end to end.

The reference the league's `league bench train --stage 1v1 --backends rollout --set ppo.epochs=1` is quoted
against (scripts/bench_vs_rlgym_learn.sh runs both, one after the other). It needs its own venv (rlgym-learn,
rlgym-learn-algos, torch, rlgym[rl-sim], pyyaml; the script says so); it imports only the league's plain RLGym v2
pieces from this checkout (arena.engine.game, arena.engine.rlgym_obs, training.rewards, league.config: no torch,
no stores), never the league's runner or learner.

What runs, with the settings `league bench train` uses (training/measure/train.py's BENCH_SETTINGS):
  - 1v1, RLGym v2 `RLGym` on `RocketSimEngine`, one arena per env process, `--n-proc` env processes (2);
  - `--env league` (default): the league's own game, from `league.config.load_config(stage="1v1")` and
    arena.engine.game.make_rlgym_env: the league observation (arena.engine.rlgym_obs.LeagueObsBuilder, 196
    floats, bit for bit the runner's layout), RLGym's 90-row LookupTableAction repeated tick_skip=8 ticks, the
    training reward (training.rewards.build_reward: the configured dense terms, each a plain RLGym
    RewardFunction), the league's start states (kickoff or randomised, random_start_share 0.5), no-touch
    (10 s) and episode (300 s) timeouts, and a goal restarting play with a kickoff inside the episode
    (goal_ends_episode false; done as arena.engine.game.RLGymGame does it);
  - `--env stock`: RLGym's stock pieces instead (DefaultObs, LookupTableAction x8, GoalReward*30 + TouchReward,
    KickoffMutator, GoalCondition, NoTouchTimeoutCondition(10 s), TimeoutCondition(300 s)), to see what the
    league's plain-RLGym components cost here;
  - PPO (rlgym_learn_algos.ppo.PPOAgentController): actor DiscreteFF and critic BasicCritic, [256, 256, 256],
    ReLU; 50,000 agent steps an iteration (`--batch`), the experience buffer the same size (so each update
    sees that iteration's steps only, as ours does), one epoch (`--epochs`) of one minibatch of the whole batch
    (`--minibatch`, default the batch: rlgym-learn's learner batch_size, i.e. one optimizer step an epoch, as
    `league bench train` sets ppo.minibatch_size to the round), lr 5e-4, clip 0.2, entropy 0.001, gamma 0.995,
    GAE lambda 0.95, returns standardised, advantages normalised (the league's ppo defaults); CPU, float32;
    every car is the learner (pure self-play), so every agent step is training data on both sides.

The rate: agent steps collected (rlgym-learn's own count, one per car per step) from the end of the first
iteration (the warm-up: process start, first allocations) to the end of the last, over that wall time, updates
included: what `league bench train` calls end to end. The last stdout line is `rlgym-learn: N agent steps/s`.

What differs from `league bench train`, by design of the two libraries (say it with the figure):
  - arenas: rlgym-learn steps one arena per env process (2 arenas, 4 cars on 2 processes), the league 32 arenas
    per worker (64 arenas, 128 cars); rlgym-learn users often run more processes than cores to batch the
    forwards (`--n-proc`);
  - the league's update runs under bf16 autocast on a CPU with AVX-512 BF16 or AMX (training.amp auto) unless
    `--set training.amp=off`; rlgym-learn's is float32;
  - the league's actor and critic add car-frame input features (policy.car_frame: a few rotations computed in
    the input layer) to the same 196 floats; rlgym-learn's DiscreteFF and BasicCritic read the 196 floats (both
    clip gradients at 0.5, both normalise advantages);
  - the league's runner computes rewards and observations batched over its arenas; here they are the same
    terms computed per arena through RLGym's per-agent interface, as any RLGym env does;
  - the learner's torch threads are torch's default here (printed; `--torch-threads`), the league's its own
    (training.torch_threads and training.update_threads: the cores the workers leave while they play, every
    core for the update);
  - rlgym-learn steps its env processes in lockstep with the learner (a message each way per step), the league's
    rollout workers run their own forwards and talk to the learner once per round: on a busy machine (other
    work on the cores, or `nice`) each of rlgym-learn's per-step wake-ups waits for a core, and its figure
    falls far more than ours. Measure on a quiet machine.

Example (from the rlgym-learn venv; RLGL_VENV in scripts/bench_vs_rlgym_learn.sh):
    python scripts/bench_rlgym_learn.py --iterations 6
    python scripts/bench_rlgym_learn.py --batch 2000 --iterations 2   # a smoke run of a few seconds
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

# The env processes (forkserver) import this file again and unpickle the env builder by name: the checkout must
# be importable there too, so both the path and PYTHONPATH are set before anything is started.
ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p)
# As rlgym-learn's quick start says: one BLAS thread per env process, or they throttle each other.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

STAGE = "1v1"


def league_config():
    from league.config import load_config

    return load_config(stage=STAGE)


def build_league_env():
    """The league's 1v1 training game as a plain RLGym v2 env (the `--env league` builder)."""
    from rlgym.api import RLGym

    from arena.engine.game import KICKOFF_RESTART_KEY, GameSpec, kickoff_mutator, make_rlgym_env
    from arena.engine.rlgym_state import base_state
    from training.rewards import build_reward

    cfg = league_config()
    spec = GameSpec.from_config(cfg.game, "training")

    class LeagueTrainingEnv(RLGym):
        """make_rlgym_env's env, restarting with a kickoff after a goal that does not end the episode
        (arena.engine.game.RLGymGame's rule, inside the env, since rlgym-learn drives the env itself)."""

        def __init__(self, env: RLGym):
            self.__dict__.update(env.__dict__)
            self.kickoff = kickoff_mutator(spec)

        def step(self, actions):
            obs, rewards, terminated, truncated = super().step(actions)
            ended = any(terminated.values()) or any(truncated.values())
            if spec.kickoff_after_goal and self.state.goal_scored and not ended:
                self.shared_info[KICKOFF_RESTART_KEY] = True
                state = base_state()
                self.kickoff.apply(state, self.shared_info)
                obs = self.set_state(state)
            return obs, rewards, terminated, truncated

    return LeagueTrainingEnv(make_rlgym_env(spec, reward_fn=build_reward(cfg.rewards)))


def build_stock_env():
    """RLGym's stock 1v1 pieces with the league's tick skip and timeouts (the `--env stock` builder)."""
    import numpy as np
    from rlgym.api import RLGym
    from rlgym.rocket_league import common_values
    from rlgym.rocket_league.action_parsers import LookupTableAction, RepeatAction
    from rlgym.rocket_league.done_conditions import AnyCondition, GoalCondition, NoTouchTimeoutCondition, TimeoutCondition
    from rlgym.rocket_league.obs_builders import DefaultObs
    from rlgym.rocket_league.reward_functions import CombinedReward, GoalReward, TouchReward
    from rlgym.rocket_league.sim import RocketSimEngine
    from rlgym.rocket_league.state_mutators import FixedTeamSizeMutator, KickoffMutator, MutatorSequence

    game = league_config().game
    return RLGym(
        state_mutator=MutatorSequence(FixedTeamSizeMutator(blue_size=1, orange_size=1), KickoffMutator()),
        obs_builder=DefaultObs(
            zero_padding=1,
            pos_coef=np.asarray([1 / common_values.SIDE_WALL_X, 1 / common_values.BACK_NET_Y, 1 / common_values.CEILING_Z]),
            ang_coef=1 / np.pi, lin_vel_coef=1 / common_values.CAR_MAX_SPEED,
            ang_vel_coef=1 / common_values.CAR_MAX_ANG_VEL, boost_coef=1 / 100.0),
        action_parser=RepeatAction(LookupTableAction(), repeats=game.tick_skip),
        reward_fn=CombinedReward((GoalReward(), 30.0), (TouchReward(), 0.1)),
        termination_cond=GoalCondition(),
        truncation_cond=AnyCondition(NoTouchTimeoutCondition(timeout_seconds=game.no_touch_timeout_seconds),
                                     TimeoutCondition(timeout_seconds=game.episode_timeout_seconds)),
        transition_engine=RocketSimEngine(),
    )


ENVS = {"league": build_league_env, "stock": build_stock_env}


def remove_shared_memory(flinks_folder: str) -> None:
    """Unlink the env processes' shared memory if they could not (killed by a signal to the whole process group,
    as `timeout` sends); each flink file names its segment. On a normal exit the segments are already gone."""
    for flink in Path(flinks_folder).glob("*"):
        try:
            name = flink.read_text().strip().lstrip("/")
            if name.startswith("shmem_") and "/" not in name:
                Path("/dev/shm", name).unlink(missing_ok=True)
        except OSError:
            pass


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", choices=sorted(ENVS), default="league", help="the league's 1v1 game, or RLGym's stock pieces")
    p.add_argument("--iterations", type=int, default=6, help="measured PPO iterations, after one warm-up iteration")
    p.add_argument("--seconds", type=float, default=0.0,
                   help="stop at the first iteration end past this many measured seconds (0: no limit)")
    p.add_argument("--batch", type=int, default=50_000, help="agent steps per iteration (and the buffer's size)")
    p.add_argument("--minibatch", type=int, default=0, help="agent steps per optimizer step (0: the whole batch)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--n-proc", type=int, default=2, help="env processes (one arena each)")
    p.add_argument("--torch-threads", type=int, default=0,
                   help="torch threads in the learner's process (0: torch's default, what rlgym-learn gets)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.iterations < 1 or args.batch < 1 or args.epochs < 1 or args.n_proc < 1:
        p.error("--iterations, --batch, --epochs and --n-proc must be at least 1")
    if args.minibatch < 0 or args.torch_threads < 0 or args.seconds < 0:
        p.error("--minibatch, --torch-threads and --seconds cannot be negative")
    if args.minibatch > args.batch:
        p.error("--minibatch cannot exceed --batch")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        import numpy as np
        import torch
        from rlgym_learn import (BaseConfigModel, LearningCoordinator, LearningCoordinatorConfigModel,
                                 ProcessConfigModel, PyAnySerdeType, SerdeTypesModel)
        from rlgym_learn_algos.ppo import (BasicCritic, DiscreteFF, ExperienceBufferConfigModel,
                                           GAETrajectoryProcessor, GAETrajectoryProcessorConfigModel,
                                           NumpyExperienceBuffer, PPOAgentController, PPOAgentControllerConfigModel,
                                           PPOLearnerConfigModel)
        import yaml  # noqa: F401  (league.config reads the YAML configs)
    except ImportError as exc:
        print(f"bench_rlgym_learn: {exc}; run it from the venv scripts/bench_vs_rlgym_learn.sh makes "
              "(rlgym-learn==1.0.5, rlgym-learn-algos==0.2.6, torch, rlgym[rl-sim]==2.0.1, pyyaml).", file=sys.stderr)
        return 2
    from importlib.metadata import version

    ppo = league_config().ppo
    minibatch = args.minibatch or args.batch
    hidden = (256, 256, 256)

    class TimedPPO(PPOAgentController):
        """PPOAgentController that notes (time, steps collected, update seconds) at each iteration's end."""

        marks: list[tuple[float, int, float]] = []

        def _learn(self):
            steps, start = self.iteration_timesteps, time.perf_counter()
            super()._learn()
            end = time.perf_counter()
            TimedPPO.marks.append((end, steps, end - start))

    def actor_factory(obs_space, action_space, device):
        return DiscreteFF(obs_space[1], action_space[1], hidden, device)

    def critic_factory(obs_space, device):
        return BasicCritic(obs_space[1], hidden, device)

    torch.manual_seed(args.seed)
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    print(f"rlgym-learn {version('rlgym-learn')}, rlgym-learn-algos {version('rlgym-learn-algos')}, "
          f"torch {torch.__version__} ({torch.get_num_threads()} threads in the learner), env {args.env}, "
          f"{args.n_proc} env processes, batch {args.batch:,}, minibatch {minibatch:,}, epochs {args.epochs}, "
          f"[256, 256, 256] actor and critic, float32, CPU", flush=True)
    with tempfile.TemporaryDirectory(prefix="rlgl-bench-") as tmp:
        config = LearningCoordinatorConfigModel(
            base_config=BaseConfigModel(
                serde_types=SerdeTypesModel(
                    agent_id_serde_type=PyAnySerdeType.STRING(),
                    action_serde_type=PyAnySerdeType.NUMPY(np.int64),
                    obs_serde_type=PyAnySerdeType.NUMPY(np.float32 if args.env == "league" else np.float64),
                    reward_serde_type=PyAnySerdeType.FLOAT(),
                    obs_space_serde_type=PyAnySerdeType.TUPLE((PyAnySerdeType.STRING(), PyAnySerdeType.INT())),
                    action_space_serde_type=PyAnySerdeType.TUPLE((PyAnySerdeType.STRING(), PyAnySerdeType.INT())),
                ),
                random_seed=args.seed,
                flinks_folder=os.path.join(tmp, "shmem_flinks"),
                timestep_limit=10**15,
            ),
            process_config=ProcessConfigModel(n_proc=args.n_proc),
            agent_controllers_config={
                "PPO": PPOAgentControllerConfigModel(
                    timesteps_per_iteration=args.batch,
                    save_every_ts=10**15,  # no checkpoints inside the measurement
                    random_seed=args.seed,
                    learner_config=PPOLearnerConfigModel(
                        dtype=torch.float32, device="cpu", n_epochs=args.epochs, batch_size=minibatch,
                        n_minibatches=1, ent_coef=ppo.ent_coef, clip_range=ppo.clip_coef,
                        actor_lr=ppo.learning_rate, critic_lr=ppo.learning_rate,
                        advantage_normalization=ppo.normalize_advantages),
                    experience_buffer_config=ExperienceBufferConfigModel(
                        max_size=args.batch, device="cpu",
                        trajectory_processor_config=GAETrajectoryProcessorConfigModel(
                            gamma=ppo.gamma, lmbda=ppo.gae_lambda, standardize_returns=ppo.normalize_returns
                        ).model_dump()),
                )
            },
            agent_controllers_save_folder=os.path.join(tmp, "checkpoints"),
        )
        controller = TimedPPO(actor_factory=actor_factory, critic_factory=critic_factory,
                              experience_buffer=NumpyExperienceBuffer(GAETrajectoryProcessor()),
                              metrics_logger=None, obs_standardizer=None)
        coordinator = LearningCoordinator(ENVS[args.env], agent_controllers={"PPO": controller}, config=config)
        marks = TimedPPO.marks
        # A `timeout` (SIGTERM) still stops the env processes, which own their shared memory, and removes `tmp`.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        try:
            # LearningCoordinator._run's loop without its keyboard poller (which needs a terminal on stdin).
            envs, agents = coordinator.env_process_interface, coordinator.agent_manager
            while len(marks) < 1 + args.iterations:
                if args.seconds and len(marks) > 1 and marks[-1][0] - marks[0][0] >= args.seconds:
                    break
                total, obs_data, timestep_data, state_info = envs.collect_step_data()
                coordinator.cumulative_timesteps += total
                agents.process_timestep_data(timestep_data)
                envs.send_env_actions(agents.get_env_actions(obs_data, state_info))
        finally:
            coordinator.cleanup()
            remove_shared_memory(config.base_config.flinks_folder)
    measured = marks[1:]
    seconds = marks[-1][0] - marks[0][0]
    steps = sum(m[1] for m in measured)
    update = sum(m[2] for m in measured)
    for i, (_, n, u) in enumerate(marks):
        print(f"iteration {i}{' (warm-up)' if i == 0 else ''}: {n:,} agent steps, update {u:.2f} s", flush=True)
    print(f"{len(measured)} measured iteration(s): {steps:,} agent steps in {seconds:.2f} s; "
          f"the update (values, GAE, PPO) {update / seconds:.0%} of the time")
    print(f"rlgym-learn: {steps / seconds:.0f} agent steps/s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
