"""agents.community.element: Element as a batched adapter plays as the bot itself would.

Parity: real RocketSim 1v1 games (kickoffs, random mid-game starts, random-action episodes; both
cars driven, so both sides are seen), and at every step the adapter's input rows and controls are
compared with the bot's own code: its util/game_state.py decoding a packet made from the RLGym
state, its obs.py CustomObs, its agent.py Agent with model.p loaded by pickle (tests only), and
its bot.py update_controls.
"""

from __future__ import annotations

import pickle
import sys
import types
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import pytest
import RocketSim as rsim
import torch

from agents.community.element import WEIGHT_SHAPES, ElementPolicy
from agents.game_state import from_game_states
from agents.community.tensors import CommunityFileError, read_state_dict
from arena.engine.rlgym_state import agent_ids, read_state
from arena.engine.sim import init_rocketsim, new_arena
from league.errors import LeagueError
from tests.community_bots import bots_dir

TICK_SKIP = 8
N_ENVS = 4
N_STEPS = 500  # x 4 arenas x 2 cars = 4000 car-steps
BOT_MODULES = ("bot", "agent", "obs", "util", "sequences", "rlbot")


def _rlbot_stand_ins() -> dict[str, types.ModuleType]:
    """The RLBot v4 names Element's files import (the installed rlbot is v5): empty classes."""
    modules = {name: types.ModuleType(name) for name in (
        "rlbot", "rlbot.agents", "rlbot.agents.base_agent", "rlbot.utils", "rlbot.utils.structures",
        "rlbot.utils.structures.game_data_struct")}

    class BaseAgent:
        def __init__(self, name, team, index):
            self.name, self.team, self.index = name, team, index

    base = modules["rlbot.agents.base_agent"]
    base.BaseAgent, base.SimpleControllerState = BaseAgent, SimpleNamespace
    structs = modules["rlbot.utils.structures.game_data_struct"]
    for name in ("GameTickPacket", "FieldInfoPacket", "PlayerInfo", "Physics", "Vector3", "Rotator"):
        setattr(structs, name, type(name, (), {}))
    return modules


@contextmanager
def element_bot():
    """Element's own modules (bot, agent, obs, util), imported from its folder and then taken out of
    sys.modules and sys.path again, so nothing else in the test process sees them."""
    folder = str(bots_dir() / "Element")
    ours = lambda name: name.split(".")[0] in BOT_MODULES
    saved = {name: module for name, module in sys.modules.items() if ours(name)}
    for name in saved:
        del sys.modules[name]
    sys.modules.update(_rlbot_stand_ins())
    sys.path.insert(0, folder)
    try:
        import agent
        import bot
        import obs
        from util import game_state

        yield SimpleNamespace(agent=agent, bot=bot, obs=obs, game_state=game_state, folder=folder)
    finally:
        sys.path.remove(folder)
        for name in [n for n in sys.modules if ours(n)]:
            del sys.modules[name]
        sys.modules.update(saved)


@pytest.fixture(scope="module")
def bot():
    with element_bot() as modules:
        yield modules


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Thousands of one-row forwards: a second intra-op thread only waits on a shared 2-core machine
    (the bot's Agent sets one thread too). Restored afterwards for the rest of the process."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def policy():
    return ElementPolicy.from_tensors(read_state_dict(bots_dir() / "Element" / "model.p"))


class Reference:
    """The bot's decision at one step, made by its own code: decode, build_obs, Agent.act, update_controls."""

    def __init__(self, bot):
        self.bot = bot
        actor = bot.agent.Actor(107, 5, 3)
        with open(f"{bot.folder}/model.p", "rb") as f:
            actor.load_state_dict(pickle.load(f))  # the bot's own loading (tests only)
        self.agent = bot.agent.Agent.__new__(bot.agent.Agent)  # skips Agent.__init__'s torch.set_num_threads(1)
        self.agent.state_space, self.agent.actor = 107, actor.eval()
        self.obs = bot.obs.CustomObs(cars=2)
        self.element = bot.bot.Element.__new__(bot.bot.Element)
        self.element.action_trans = np.array([-1, -1, -1, -1, -1, 0, 0, 0])

    def new_game_state(self):
        return self.bot.game_state.GameState(SimpleNamespace(num_boosts=34))

    def decide(self, game_state, index: int, previous_action: np.ndarray):
        """(obs [107] float64, the bot's action [8], its controls [8]) for car `index`, as bot.py's get_output."""
        player = game_state.players[index]
        everyone = list(game_state.players)
        game_state.players = [player] + [p for p in everyone if p is not player]
        obs = self.obs.build_obs(player, game_state, previous_action)
        game_state.players = everyone
        action = self.agent.act(obs)[0] + self.element.action_trans
        self.element.controls = SimpleNamespace()
        self.element.update_controls(action)
        c = self.element.controls
        controls = np.array([c.throttle, c.steer, c.pitch, c.yaw, c.roll, c.jump, c.boost, c.handbrake], np.float32)
        return obs, action, controls


def _vec(v) -> SimpleNamespace:
    return SimpleNamespace(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def packet(state, ids) -> SimpleNamespace:
    """An RLBot v4 GameTickPacket stand-in carrying an RLGym GameState, for util/game_state.py's decode.

    has_flip reaches the bot as RLGym's (double_jumped = not has_flip) and on_ground as RLGym's
    (decode's 6-tick grace never applies at 8 ticks per decode): the semantics the runner hands in.
    """
    cars = []
    for agent_id in ids:
        car = state.cars[agent_id]
        p = car.physics
        pitch, yaw, roll = p.euler_angles
        cars.append(SimpleNamespace(
            physics=SimpleNamespace(location=_vec(p.position), rotation=SimpleNamespace(pitch=pitch, yaw=yaw, roll=roll),
                                    velocity=_vec(p.linear_velocity), angular_velocity=_vec(p.angular_velocity)),
            has_wheel_contact=bool(car.on_ground), team=int(car.team_num), is_demolished=bool(car.is_demoed),
            double_jumped=not car.has_flip, boost=float(car.boost_amount)))
    ball = state.ball
    return SimpleNamespace(
        teams=[SimpleNamespace(score=0), SimpleNamespace(score=0)],
        num_boost=34, game_boosts=[SimpleNamespace(is_active=bool(t == 0)) for t in state.boost_pad_timers],
        game_ball=SimpleNamespace(physics=SimpleNamespace(
            location=_vec(ball.position), velocity=_vec(ball.linear_velocity), angular_velocity=_vec(ball.angular_velocity))),
        num_cars=len(cars), game_cars=cars)


def random_start(arena, cars, rng) -> None:
    """A random mid-game state: ball and cars anywhere, moving, some cars in the air, random boost and pads."""
    ball = rsim.BallState()
    ball.pos = rsim.Vec(rng.uniform(-3000, 3000), rng.uniform(-4000, 4000), rng.uniform(100, 1500))
    ball.vel = rsim.Vec(*rng.normal(0, 800, 3))
    ball.ang_vel = rsim.Vec(*rng.normal(0, 2, 3))
    arena.ball.set_state(ball)
    for car in cars:
        s = rsim.CarState()
        airborne = rng.random() < 0.3
        s.pos = rsim.Vec(rng.uniform(-3500, 3500), rng.uniform(-4500, 4500), rng.uniform(200, 1200) if airborne else 17.0)
        s.vel = rsim.Vec(*rng.normal(0, 700, 3) * (1, 1, airborne))
        s.ang_vel = rsim.Vec(*rng.normal(0, 1.5, 3) * airborne)
        tilt = rng.uniform(-1.5, 1.5, 2) * airborne
        s.rot_mat = rsim.Angle(rng.uniform(-np.pi, np.pi), tilt[0], tilt[1]).as_rot_mat()
        s.boost = rng.uniform(0, 100)
        car.set_state(s)
    for pad in arena.get_boost_pads():
        p = rsim.BoostPadState()
        p.is_active = bool(rng.random() < 0.7)
        p.cooldown = 0.0 if p.is_active else float(rng.uniform(0.5, 9.0))
        pad.set_state(p)


def random_actions(rng, n: int) -> np.ndarray:
    """n random actions in the bot's own space (three-way heads -1..1, two-way 0..1)."""
    return np.concatenate([rng.integers(-1, 2, (n, 5)), rng.integers(0, 2, (n, 3))], axis=1).astype(np.float32)


def controls_of(action: np.ndarray) -> np.ndarray:
    controls = action.copy()
    controls[:, 3] = np.where(action[:, 5] > 0, 0, action[:, 3])
    return controls


def set_controls(car, row: np.ndarray) -> None:
    c = rsim.CarControls()
    c.throttle, c.steer, c.pitch, c.yaw, c.roll = (float(v) for v in row[:5])
    c.jump, c.boost, c.handbrake = (bool(v) for v in row[5:])
    car.set_controls(c)


def test_element_adapter_plays_as_the_bot_does(bot, policy):
    init_rocketsim()
    rng = np.random.default_rng(7)
    ids = agent_ids(1)
    games = [new_arena(1) for _ in range(N_ENVS)]
    reference = Reference(bot)
    decoded = [reference.new_game_state() for _ in range(N_ENVS)]
    kinds, ages = [""] * N_ENVS, np.zeros(N_ENVS, int)
    previous = policy.initial_state(2 * N_ENVS)  # the action each car played last (the bot's self.action)
    rows = np.arange(2 * N_ENVS)
    counted = ("car_steps", "agree", "orange_steps", "kickoff_steps", "random_steps", "airborne", "no_flip")
    figures = {name: 0 for name in counted} | {"max_input_diff": 0.0}

    def restart(e):
        arena, cars = games[e]
        kinds[e] = rng.choice(["kickoff", "midgame", "random"], p=[0.4, 0.4, 0.2])
        if kinds[e] == "kickoff":
            arena.reset_kickoff(int(rng.integers(1 << 30)))
        else:
            random_start(arena, cars, rng)
        ages[e] = 0
        previous[2 * e:2 * e + 2] = 0

    for e in range(N_ENVS):
        restart(e)
    for _step in range(N_STEPS):
        states = [read_state(arena, cars, ids, arena.tick_count) for arena, cars in games]
        arrays = from_game_states(states, ids)
        x = policy.inputs(arrays, rows, previous)
        controls, action = policy.act(arrays, rows, previous)
        for e, state in enumerate(states):
            decoded[e].decode(packet(state, ids), TICK_SKIP)
            for k in range(2):
                row = 2 * e + k
                obs, _bot_action, bot_controls = reference.decide(decoded[e], k, previous[row].astype(np.int64))
                figures["max_input_diff"] = max(figures["max_input_diff"], float(np.abs(x[row] - obs).max()))
                figures["agree"] += bool(np.array_equal(controls[row], bot_controls))
                figures["car_steps"] += 1
                figures["orange_steps"] += k == 1
                figures["kickoff_steps"] += kinds[e] == "kickoff" and ages[e] < 20
                figures["random_steps"] += kinds[e] == "random"
                figures["airborne"] += not arrays.cars[e, k, 16]
                figures["no_flip"] += not arrays.cars[e, k, 18]
        played = action.copy()
        for e in range(N_ENVS):
            if kinds[e] == "random" or rng.random() < 0.05:  # random-action episodes, and a little noise elsewhere
                played[2 * e:2 * e + 2] = random_actions(rng, 2)
        applied = controls_of(played)
        previous = played
        for e, (arena, cars) in enumerate(games):
            for k, car in enumerate(cars):
                set_controls(car, applied[2 * e + k])
            arena.step(TICK_SKIP)
            ages[e] += 1
            if states[e].goal_scored or ages[e] >= (40 if kinds[e] == "random" else 120):
                restart(e)

    agreement = figures["agree"] / figures["car_steps"]
    print(f"\nElement parity: {figures['car_steps']} car-steps ({figures['orange_steps']} orange, "
          f"{figures['kickoff_steps']} in kickoffs' first 20 steps, {figures['random_steps']} in random-action episodes, "
          f"{figures['airborne']} airborne, {figures['no_flip']} without a flip), "
          f"max input difference {figures['max_input_diff']:.2e}, same controls on {100 * agreement:.2f}%")
    assert figures["car_steps"] == 2 * N_ENVS * N_STEPS and figures["kickoff_steps"] > 100 and figures["random_steps"] > 100
    assert figures["airborne"] > 100 and figures["no_flip"] > 50
    assert figures["max_input_diff"] <= 1e-4
    assert agreement >= 0.995


def test_weights_round_trip_and_inputs_are_107_floats(policy):
    arrays = from_game_states([], agent_ids(1))
    x = policy.inputs(arrays, np.zeros(0, np.int64))
    assert x.shape == (0, 107)
    controls, state = policy.act(arrays, np.zeros(0, np.int64), policy.initial_state(0))
    assert controls.shape == state.shape == (0, 8)


def test_previous_action_comes_from_state_or_runner_and_restarts(policy):
    init_rocketsim()
    arena, cars = new_arena(1)
    arena.reset_kickoff(3)
    ids = agent_ids(1)
    prev_controls = np.tile(np.arange(8, dtype=np.float32) / 10, (1, 2, 1))
    arrays = from_game_states([read_state(arena, cars, ids, 0)], ids, prev_controls)
    rows = np.array([0, 1])
    assert np.array_equal(policy.inputs(arrays, rows)[:, 9:17], prev_controls[0])
    state = np.ones((2, 8), np.float32)
    assert np.array_equal(policy.inputs(arrays, rows, state)[:, 9:17], state)
    restarted = policy.inputs(arrays, rows, state, episode_start=np.array([True, False]))
    assert not restarted[0, 9:17].any() and restarted[1, 9:17].all()
    controls, action = policy.act(arrays, rows, state)
    assert set(np.unique(controls[:, :5])) <= {-1, 0, 1} and set(np.unique(controls[:, 5:])) <= {0, 1}
    assert np.array_equal(controls[:, 3], np.where(action[:, 5] > 0, 0, action[:, 3]))


def test_orange_turn_matches_the_reversed_pad_order():
    """obs.py turns an orange car's pads by reversing the list: right for RLGym's (= RLBot's) order,
    to the 2 uu by which the table itself is not symmetric (pads at y = -3308 and 3310)."""
    from rlgym.rocket_league.common_values import BOOST_LOCATIONS

    pads = np.asarray(BOOST_LOCATIONS)
    assert np.allclose(pads[::-1, :2], -pads[:, :2], atol=2.0) and np.array_equal(pads[::-1, 2], pads[:, 2])


def test_only_1v1_games_are_played(policy):
    ids = agent_ids(2)
    arrays = from_game_states([], ids)
    with pytest.raises(ValueError, match="1v1 only"):
        policy.inputs(arrays, np.zeros(0, np.int64))


def _weights() -> dict[str, torch.Tensor]:
    return {name: torch.zeros(shape) for name, shape in WEIGHT_SHAPES.items()}


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda w: w.pop("fc3.bias"), "lack the tensor 'fc3.bias'"),
        (lambda w: w.update(extra=torch.zeros(1)), "have tensors no Element model has: extra"),
        (lambda w: w.update({"fc1.weight": torch.zeros(256, 106)}), "'fc1.weight' is torch.float32 [256, 106]"),
        (lambda w: w.update({"cat_heads.bias": torch.zeros(15, dtype=torch.float64)}), "float64"),
        (lambda w: w.update({"ber_heads.bias": torch.full((6,), float("nan"))}), "not finite"),
        (lambda w: w.update({"fc2.bias": [0.0] * 256}), "is list"),
    ],
    ids=["missing", "extra", "shape", "dtype", "nan", "not-a-tensor"],
)
def test_wrong_weights_are_refused_in_one_sentence(change, says):
    weights = _weights()
    ElementPolicy.from_tensors(weights)
    change(weights)
    with pytest.raises(CommunityFileError) as info:
        ElementPolicy.from_tensors(weights)
    message = str(info.value)
    assert says in message and message.endswith(".") and "\n" not in message and message.count(". ") == 0, message
    assert isinstance(info.value, LeagueError)
