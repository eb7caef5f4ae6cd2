"""Necto's batched league adapter plays as Necto's own code would, on real RocketSim games.

Reference: the bot's own files, run in the test process only: `necto_obs.py` (one
NectoObsBuilder per car, as bot.py keeps one per bot, fed rlgym_compat-1.x-like GameStates with
the players ordered as bot.py orders them) and `agent.py` (the TorchScript model at beta 1).
Adapter: `NectoPolicy.act` over every car of several arenas at once, one call per step, memory
restarted per row where an arena starts a new game. Games: 1v1, 2v2 and 3v3 from kickoffs and
from randomized states with some taken pads, cars driven by the adapter's controls (or, in some
games, by random controls so the states vary), both sides.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import RocketSim as rsim
import torch

from agents.community.necto import NECTO_TENSORS, NectoPolicy
from agents.game_state import from_game_states
from agents.community.tensors import CommunityFileError, read_torchscript_tensors
from arena.engine.mutators import RandomStateMutator
from arena.engine.rlgym_state import agent_ids, read_state, write_state
from arena.engine.sim import new_arena
from tests.community_bots import bots_dir

TEAM_SIZES = (1, 2, 3)
N_ARENAS = 4
CAR_STEPS = 3000  # per team size
INPUT_TOLERANCE = 1e-4
MIN_AGREEMENT = 0.995
RANDOM_START_SHARE = 0.5
RANDOM_CONTROL_SHARE = 0.3


@pytest.fixture(scope="module")
def necto_dir() -> Path:
    """Necto's bot folder (skips the module's bot tests where the community bots are absent)."""
    folder = bots_dir() / "Necto" / "Necto"
    missing = [f for f in ("necto-model.pt", "necto_obs.py", "agent.py") if not (folder / f).is_file()]
    if missing:
        pytest.skip(f"Necto's bot folder {folder} lacks {', '.join(missing)}")
    return folder


# --- The bot's own code, with a stand-in for rlgym_compat 1.x ------------------------------------


class CompatPhysics:
    """rlgym_compat 1.x's PhysicsObject: arrays, and forward()/up() from the rotation matrix's columns."""

    def __init__(self, physics) -> None:
        self.position = physics.position
        self.linear_velocity = physics.linear_velocity
        self.angular_velocity = physics.angular_velocity
        self._rotation = physics.rotation_mtx

    def forward(self) -> np.ndarray:
        return self._rotation[:, 0]

    def up(self) -> np.ndarray:
        return self._rotation[:, 2]


class CompatPlayer:
    """rlgym_compat 1.x's PlayerData, with what necto_obs reads (boost_amount 0-1); identity equality."""

    def __init__(self, car_id: int, car) -> None:
        self.car_id = car_id
        self.team_num = car.team_num
        self.car_data = CompatPhysics(car.physics)
        self.boost_amount = car.boost_amount / 100
        self.on_ground = car.on_ground
        self.has_flip = car.has_flip
        self.is_demoed = car.is_demoed


class CompatState:
    """rlgym_compat 1.x's GameState: ball, players (packet order), boost_pads (1.0 where available)."""

    def __init__(self, ball, players: list, boost_pads: np.ndarray) -> None:
        self.ball = ball
        self.players = players
        self.boost_pads = boost_pads


def compat_state(state, ids: list[str]) -> CompatState:
    players = [CompatPlayer(i, state.cars[agent]) for i, agent in enumerate(ids)]
    return CompatState(CompatPhysics(state.ball), players, (np.asarray(state.boost_pad_timers) == 0).astype(float))


def as_bot_sees_it(state: CompatState, index: int) -> tuple[CompatState, CompatPlayer]:
    """bot.py's reordering for the bot at `index`: itself, its teammates, then its opponents."""
    player = state.players[index]
    mates = [p for p in state.players if p.team_num == player.team_num and p is not player]
    opponents = [p for p in state.players if p.team_num != player.team_num]
    return CompatState(state.ball, [player] + mates + opponents, state.boost_pads), player


def load_file(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def necto(necto_dir):
    """The bot's necto_obs module and its Agent (TorchScript model), loaded from the bot folder."""
    compat = types.ModuleType("rlgym_compat")
    values = types.ModuleType("rlgym_compat.common_values")
    values.BLUE_TEAM, values.ORANGE_TEAM = 0, 1
    game_state = types.ModuleType("rlgym_compat.game_state")
    game_state.GameState, game_state.PlayerData = CompatState, CompatPlayer
    threads = torch.get_num_threads()
    with pytest.MonkeyPatch.context() as patch:
        for module in (compat, values, game_state):
            patch.setitem(sys.modules, module.__name__, module)
        obs = load_file("necto_obs_reference", necto_dir / "necto_obs.py")
        agent = load_file("necto_agent_reference", necto_dir / "agent.py").Agent()
    # Agent() sets one torch thread for the whole process (as the bot does); kept for this module,
    # which also keeps thousands of tiny forwards fast on a busy machine, then given back.
    yield obs, agent
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def policy(necto_dir) -> NectoPolicy:
    """The adapter, its weights read by the league's TorchScript tensor reader (never torch.jit)."""
    return NectoPolicy.from_tensors(read_torchscript_tensors(necto_dir / "necto-model.pt"))


# --- Games ----------------------------------------------------------------------------------------


def car_controls(row: np.ndarray) -> rsim.CarControls:
    controls = rsim.CarControls()
    controls.throttle, controls.steer, controls.pitch, controls.yaw, controls.roll = (float(v) for v in row[:5])
    controls.jump, controls.boost, controls.handbrake = (bool(v > 0) for v in row[5:8])
    return controls


def random_controls(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.concatenate([rng.integers(-1, 2, (n, 5)), rng.integers(0, 2, (n, 3))], axis=1).astype(np.float32)


class Game:
    """One arena playing a run of games; each game starts from a kickoff or a randomized state."""

    def __init__(self, team_size: int, rng: np.random.Generator) -> None:
        self.arena, self.cars = new_arena(team_size)
        self.ids = agent_ids(team_size)
        self.rng = rng
        self.steps_left = 0
        self.random_controls = False
        self.started: list[tuple[bool, bool]] = []  # (randomized start, random controls) of each game

    def maybe_restart(self) -> bool:
        """Start a new game if this one is over (its length reached, or a goal); true when it did."""
        if self.steps_left > 0 and not read_state(self.arena, self.cars, self.ids, 0).goal_scored:
            self.steps_left -= 1
            return False
        self.arena.reset_kickoff(int(self.rng.integers(1 << 30)))
        randomized = self.rng.random() < RANDOM_START_SHARE
        if randomized:
            state = read_state(self.arena, self.cars, self.ids, 0)
            RandomStateMutator().apply(state, {"rng": self.rng})
            taken = self.rng.random(len(state.boost_pad_timers)) < 0.3
            state.boost_pad_timers = np.where(taken, self.rng.uniform(0.5, 10, taken.shape), 0).astype(np.float32)
            write_state(self.arena, self.cars, self.ids, state)
        self.steps_left = int(self.rng.integers(60, 250))  # past the demo (46) and pad-timer (61, 150) cycles
        self.random_controls = self.rng.random() < RANDOM_CONTROL_SHARE
        self.started.append((randomized, self.random_controls))
        return True

    def step(self, controls: np.ndarray) -> np.ndarray:
        """Play one decision (tick_skip ticks); the controls the cars played."""
        if self.random_controls:
            controls = random_controls(self.rng, len(self.cars))
        for car, row in zip(self.cars, controls):
            car.set_controls(car_controls(row))
        self.arena.step(NectoPolicy.tick_skip)
        return controls


def play_and_compare(team_size: int, policy: NectoPolicy, necto_obs, agent) -> dict[str, float]:
    """Play N_ARENAS arenas for CAR_STEPS car-steps, comparing every car-step with the bot's own code."""
    rng = np.random.default_rng(team_size)
    games = [Game(team_size, rng) for _ in range(N_ARENAS)]
    n_cars = 2 * team_size
    rows = np.arange(N_ARENAS * n_cars)
    memory = policy.initial_state(len(rows))
    prev = np.zeros((N_ARENAS, n_cars, 8), np.float32)
    builders = [[None] * n_cars for _ in games]
    compared = agreed = 0
    worst = 0.0
    for _ in range(CAR_STEPS // len(rows) + 1):
        starts = np.array([game.maybe_restart() for game in games])
        for e in np.flatnonzero(starts):
            builders[e] = [necto_obs.NectoObsBuilder() for _ in range(n_cars)]  # a new match: bot.py's new bots
            prev[e] = 0
        states = [read_state(game.arena, game.cars, game.ids, 0) for game in games]
        arrays = from_game_states(states, games[0].ids, prev)
        episode_start = np.repeat(starts, n_cars)
        (q, kv, mask), _ = policy.inputs(arrays, rows, memory, episode_start)
        controls, memory = policy.act(arrays, rows, memory, episode_start)
        assert controls.shape == (len(rows), 8) and controls.dtype == np.float32
        for e, (game, state) in enumerate(zip(games, states)):
            compat = compat_state(state, game.ids)
            for c in range(n_cars):
                row = e * n_cars + c
                seen, player = as_bot_sees_it(compat, c)
                reference = builders[e][c].build_obs(player, seen, prev[e, c].astype(np.float64))
                for ours, theirs in zip((q[row:row + 1], kv[row:row + 1], mask[row:row + 1]), reference):
                    assert ours.shape == theirs.shape
                    # against what the bot's model is fed: agent.py turns the float64 input into float32
                    worst = max(worst, float(np.abs(ours - theirs.astype(np.float32)).max()))
                with torch.jit.optimized_execution(False):  # no re-specialising for each batch shape
                    action, _ = agent.act(reference, 1)
                agreed += bool(np.array_equal(controls[row], action.astype(np.float32)))
                compared += 1
        prev = np.stack([game.step(controls[e * n_cars:(e + 1) * n_cars]) for e, game in enumerate(games)])
    started = np.array([kind for game in games for kind in game.started])
    return {"compared": compared, "max_input_diff": worst, "agreement": agreed / compared, "games": len(started),
            "randomized_starts": int(started[:, 0].sum()), "random_control_games": int(started[:, 1].sum())}


# 1v1 in the default suite; 2v2 and 3v3 (10 s each) in the slow set, to keep the default under 5 minutes.
@pytest.mark.parametrize("team_size", [t if t == 1 else pytest.param(t, marks=pytest.mark.slow) for t in TEAM_SIZES],
                         ids=lambda t: f"{t}v{t}")
def test_plays_as_the_bots_own_code(team_size, policy, necto):
    necto_obs, agent = necto
    figures = play_and_compare(team_size, policy, necto_obs, agent)
    print(f"\nNecto {team_size}v{team_size}: {figures['compared']} car-steps, max input difference "
          f"{figures['max_input_diff']:.2e}, same controls on {figures['agreement']:.2%} "
          f"({figures['games']} games, {figures['randomized_starts']} from randomized states, "
          f"{figures['random_control_games']} on random controls)")
    assert figures["compared"] >= CAR_STEPS
    assert 0 < figures["randomized_starts"] < figures["games"] and 0 < figures["random_control_games"] < figures["games"]
    assert figures["max_input_diff"] <= INPUT_TOLERANCE
    assert figures["agreement"] >= MIN_AGREEMENT


def test_network_matches_the_torchscript_model(policy, necto_dir):
    """Same logits as the archive's own forward, on a batch of made-up inputs of every team size."""
    model = torch.jit.load(str(necto_dir / "necto-model.pt"))
    gen = torch.Generator().manual_seed(0)
    for n_cars in (2, 4, 6):
        q, kv = torch.randn(16, 1, 32, generator=gen), torch.randn(16, 1 + n_cars + 34, 24, generator=gen)
        mask = torch.zeros(16, 1 + n_cars + 34)
        with torch.no_grad():
            theirs, _ = model((q, kv, mask))
        ours = policy.logits(q.numpy(), kv.numpy(), mask.numpy())
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape
            assert torch.allclose(a, b, atol=1e-4, rtol=1e-4)


def test_rows_are_independent_of_the_rows_asked_with(policy):
    """Asking for some rows (orange cars only, in another order) gives those rows' inputs and memory."""
    rng = np.random.default_rng(5)
    games = [Game(2, rng) for _ in range(3)]
    memory_all = policy.initial_state(12)
    some = np.array([11, 2 * 4 + 3, 6, 2])  # rows e*C + c: orange cars of arenas 2, 2, 1 and 0
    memory_some = policy.initial_state(len(some))
    for _ in range(5):
        for game in games:
            game.maybe_restart()
        arrays = from_game_states([read_state(g.arena, g.cars, g.ids, 0) for g in games], games[0].ids)
        (q, kv, mask), memory_all = policy.inputs(arrays, np.arange(12), memory_all)
        (q2, kv2, mask2), memory_some = policy.inputs(arrays, some, memory_some)
        assert np.array_equal(q[some], q2) and np.array_equal(kv[some], kv2) and np.array_equal(mask[some], mask2)
        assert np.array_equal(memory_all.boost_timers[some], memory_some.boost_timers)
        for game in games:
            game.step(np.zeros((4, 8), np.float32))


def test_a_wrong_tensor_is_refused_in_one_sentence():
    good = {name: torch.zeros(shape) for name, shape in NECTO_TENSORS.items()}
    NectoPolicy.from_tensors(good)
    name = "net.earl.blocks.0.linear1.weight"
    missing = {k: v for k, v in good.items() if k != name}
    wrong_shape = {**good, name: torch.zeros(128, 128)}
    wrong_dtype = {**good, name: torch.zeros(NECTO_TENSORS[name], dtype=torch.float64)}
    extra = {**good, "net.earl.blocks.1.linear1.weight": torch.zeros(3)}
    not_finite = {**good, name: torch.full(NECTO_TENSORS[name], float("nan"))}
    for tensors in (missing, wrong_shape, wrong_dtype, extra, not_finite):
        with pytest.raises(CommunityFileError) as caught:
            NectoPolicy.from_tensors(tensors)
        message = str(caught.value)
        assert "\n" not in message and message.endswith(".") and message.count(". ") == 0
        assert "Necto" in message and ("linear1" in message or "blocks.1" in message)
