"""A soccar game from config: its rules, start states, and an RLGym v2 env that plays it.

`GameSpec` is the game as the runner and RLGym envs both play it: team size, tick skip, and a
mode. In "training" mode a goal ends the episode (terminated), or with `goal_ends_episode`
off restarts play with a kickoff, and the no-touch and episode timeouts truncate it. In "timed"
mode an episode is one game of `game_seconds`: a goal restarts play with a kickoff, the clock
ends the game, and a tie then is a draw (no overtime).

Start states, done rules and rewards are RLGym objects (StateMutator, DoneCondition,
RewardFunction), so what training adds later is handed in as objects: `GamePlugins` for the
runner (arena.engine.vector), keyword arguments for `make_rlgym_env`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from rlgym.api import RLGym, SharedInfoProvider, StateMutator
from rlgym.rocket_league.action_parsers import LookupTableAction, RepeatAction
from rlgym.rocket_league.api import GameState
from rlgym.rocket_league.done_conditions import AnyCondition
from rlgym.rocket_league.sim import RocketSimEngine
from rlgym.rocket_league.state_mutators import FixedTeamSizeMutator, MutatorSequence

from arena.engine.mutators import RNG_KEY, SeededKickoffMutator, StartStateMutator
from arena.engine.rewards import GoalReward
from arena.engine.rlgym_state import base_state
from arena.engine.rules import (
    GAME_CLOCK_KEY,
    EpisodeTimeout,
    GameClock,
    GameClockOver,
    GoalScored,
    NoTouchTimeout,
)
from arena.engine.sim import init_rocketsim
from league.config import OPENING_JITTER_MAX
from league.game_values import TICKS_PER_SECOND

Mode = Literal["training", "timed"]
MODES = ("training", "timed")
KICKOFF_RESTART_KEY = "kickoff_restart"
LAST_TICK_KEY = "last_tick"
ELAPSED_TICKS_KEY = "elapsed_ticks"


@dataclass(frozen=True)
class GameSpec:
    """One game's settings (from league.config.GameConfig plus the mode)."""

    team_size: int = 1
    tick_skip: int = 8
    mode: Mode = "training"
    game_seconds: float = 300.0
    no_touch_timeout_seconds: float = 30.0
    episode_timeout_seconds: float = 300.0
    random_start_share: float = 0.0
    opening_jitter: float = 0.0  # uu each car's spot may move at a game's first kickoff (SeededKickoffMutator)
    kickoff_jitter: float = 0.0  # the same at each kickoff after a goal
    goal_ends_episode: bool = True  # training mode; false: a goal restarts play with a kickoff
    game_state: bool = False  # publish the game state (agents.game_state) for agents that read it

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"game mode must be one of {MODES}, got {self.mode!r}")
        if not 1 <= self.team_size <= 3:
            raise ValueError(f"team_size must be 1, 2 or 3, got {self.team_size}")
        if self.tick_skip < 1:
            raise ValueError(f"tick_skip must be at least 1, got {self.tick_skip}")
        for key in ("opening_jitter", "kickoff_jitter"):
            if not 0 <= getattr(self, key) <= OPENING_JITTER_MAX:
                raise ValueError(f"{key} must be between 0 and {OPENING_JITTER_MAX:g} uu, got {getattr(self, key)}")

    @classmethod
    def from_config(cls, game: Any, mode: Mode = "training") -> GameSpec:
        """From a league.config.GameConfig (or anything with its fields). A timed game opens at
        `game.opening_jitter`; a training episode's every kickoff moves by `game.kickoff_jitter`."""
        timed = mode == "timed"
        return cls(
            team_size=game.team_size,
            tick_skip=game.tick_skip,
            mode=mode,
            game_seconds=float(game.game_seconds),
            no_touch_timeout_seconds=float(game.no_touch_timeout_seconds),
            episode_timeout_seconds=float(game.episode_timeout_seconds),
            random_start_share=float(game.random_start_share),
            opening_jitter=float(game.opening_jitter if timed else game.kickoff_jitter),
            kickoff_jitter=0.0 if timed else float(game.kickoff_jitter),
            goal_ends_episode=bool(game.goal_ends_episode),
        )

    @property
    def timed(self) -> bool:
        return self.mode == "timed"

    @property
    def kickoff_after_goal(self) -> bool:
        """Whether a goal restarts play with a kickoff inside the episode (timed games, and
        training with `goal_ends_episode` off) instead of ending it."""
        return self.timed or not self.goal_ends_episode

    @property
    def n_cars(self) -> int:
        return 2 * self.team_size

    @property
    def clock_seconds(self) -> float:
        """What the clock starts at: the game length, or in training the episode timeout."""
        return self.game_seconds if self.timed else self.episode_timeout_seconds

    @property
    def step_seconds(self) -> float:
        """Game seconds one step lasts (the watch loop paces frames by it)."""
        return self.tick_skip / TICKS_PER_SECOND


@dataclass
class GamePlugins:
    """What training adds to a game: objects, handed to the runner when it is built.

    `reward_fn`: a batched reward (arena.engine.batch: an object with `get_rewards_batch`, or a plain
    function `fn(batch, terminated, truncated) -> [E, C]`), or a plain RLGym RewardFunction
    (run per arena: slow); default GoalReward. `mutators` run after the start state is set; `terminations` / `truncations` are
    added to the mode's own rules. All must be picklable (they travel to worker processes).
    """

    reward_fn: Any = None
    mutators: tuple[StateMutator, ...] = ()
    terminations: tuple[Any, ...] = ()
    truncations: tuple[Any, ...] = ()


def start_mutator(spec: GameSpec, extra: tuple[StateMutator, ...] = ()) -> StateMutator:
    """Cars for the team size, a kickoff or randomized state, then training's own mutators."""
    return MutatorSequence(
        FixedTeamSizeMutator(spec.team_size, spec.team_size),
        StartStateMutator(spec.random_start_share, kickoff=SeededKickoffMutator(spec.opening_jitter)),
        *extra,
    )


def kickoff_mutator(spec: GameSpec) -> StateMutator:
    """The restart after a goal inside an episode (`GameSpec.kickoff_after_goal`)."""
    return MutatorSequence(FixedTeamSizeMutator(spec.team_size, spec.team_size), SeededKickoffMutator(spec.kickoff_jitter))


def default_terminations(spec: GameSpec) -> list:
    if spec.timed:
        return [GameClockOver()]
    return [GoalScored()] if spec.goal_ends_episode else []


def default_truncations(spec: GameSpec) -> list:
    if spec.timed:
        return []
    return [NoTouchTimeout(spec.no_touch_timeout_seconds), EpisodeTimeout(spec.episode_timeout_seconds)]


# --------------------------------------------------------------------------- RLGym env


class GameInfoProvider(SharedInfoProvider[Any, GameState]):
    """Keeps the arena's random generator and the game clock/score in shared_info.

    The clock counts down from `spec.clock_seconds` in game time; goals add to the score. A
    kickoff restart inside a timed game (KICKOFF_RESTART_KEY set) keeps clock and score.
    """

    def __init__(self, spec: GameSpec, seed: int | None = None):
        self.spec = spec
        self.seed = seed

    def create(self, shared_info: dict[str, Any]) -> dict[str, Any]:
        info = dict(shared_info)
        if RNG_KEY not in info:
            info[RNG_KEY] = np.random.default_rng(self.seed)
        if not (info.pop(KICKOFF_RESTART_KEY, False) and GAME_CLOCK_KEY in info):
            info[GAME_CLOCK_KEY] = GameClock(seconds_left=self.spec.clock_seconds)
            info[ELAPSED_TICKS_KEY] = 0
        return info

    def set_state(self, agents: list, initial_state: GameState, shared_info: dict[str, Any]) -> dict[str, Any]:
        shared_info[LAST_TICK_KEY] = initial_state.tick_count
        return shared_info

    def step(self, agents: list, state: GameState, shared_info: dict[str, Any]) -> dict[str, Any]:
        clock: GameClock = shared_info[GAME_CLOCK_KEY]
        # Whole ticks, as the runner counts them: summing float seconds would drift past zero.
        shared_info[ELAPSED_TICKS_KEY] += state.tick_count - shared_info[LAST_TICK_KEY]
        shared_info[LAST_TICK_KEY] = state.tick_count
        clock.seconds_left = max(0.0, self.spec.clock_seconds - shared_info[ELAPSED_TICKS_KEY] / TICKS_PER_SECOND)
        if state.goal_scored:
            if state.scoring_team == 0:
                clock.blue += 1
            else:
                clock.orange += 1
        return shared_info


def make_rlgym_env(
    spec: GameSpec,
    *,
    obs_builder: Any = None,
    action_parser: Any = None,
    reward_fn: Any = None,
    mutators: tuple[StateMutator, ...] = (),
    terminations: tuple[Any, ...] = (),
    truncations: tuple[Any, ...] = (),
    seed: int | None = None,
) -> RLGym:
    """An RLGym v2 env (RocketSimEngine) playing `spec`, one agent per car.

    Defaults: the league observation layout (arena.engine.rlgym_obs.LeagueObsBuilder), the 90-action
    lookup table repeated `tick_skip` ticks, GoalReward. Wrap it in `RLGymGame` so that goals
    restart with a kickoff where the spec says so (`GameSpec.kickoff_after_goal`).
    """
    from arena.engine.rlgym_obs import LeagueObsBuilder

    init_rocketsim()
    return RLGym(
        state_mutator=start_mutator(spec, tuple(mutators)),
        obs_builder=obs_builder or LeagueObsBuilder(),
        action_parser=action_parser or RepeatAction(LookupTableAction(), repeats=spec.tick_skip),
        reward_fn=reward_fn or GoalReward(),
        transition_engine=RocketSimEngine(),
        termination_cond=AnyCondition(*default_terminations(spec), *terminations),
        truncation_cond=AnyCondition(*default_truncations(spec), *truncations),
        shared_info_provider=GameInfoProvider(spec, seed),
    )


class RLGymGame:
    """Plays `spec`'s mode on an RLGym env: in a timed game (or a training episode that a goal
    does not end) a goal restarts with a kickoff.

    RLGym's env only knows episodes; a timed game is one episode with kickoff restarts inside
    it, so after a step that scored (and did not end the episode) we set a kickoff state while
    the GameInfoProvider keeps clock and score.
    """

    def __init__(self, spec: GameSpec, env: RLGym):
        self.spec = spec
        self.env = env
        self.kickoff = kickoff_mutator(spec)

    @property
    def clock(self) -> GameClock:
        return self.env.shared_info[GAME_CLOCK_KEY]

    def reset(self) -> dict:
        return self.env.reset()

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict]:
        obs, rewards, terminated, truncated = self.env.step(actions)
        ended = any(terminated.values()) or any(truncated.values())
        if self.spec.kickoff_after_goal and self.env.state.goal_scored and not ended:
            self.env.shared_info[KICKOFF_RESTART_KEY] = True
            state = base_state()
            self.kickoff.apply(state, self.env.shared_info)
            obs = self.env.set_state(state)
        return obs, rewards, terminated, truncated

    def close(self) -> None:
        self.env.close()
