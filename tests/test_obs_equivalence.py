"""The runner's batched observations equal a plain per-agent RLGym ObsBuilder's on the same states.

Two independent routes to the same numbers:
  batched:   Arena.get_gym_state() arrays -> agents.obs.build_obs (what the runner ships)
  reference: RocketSim's per-object API -> RLGym GameState -> arena.engine.rlgym_obs.LeagueObsBuilder
             (RLGym's car.physics / inverted_physics, state.inverted_ball, inverted pad timers)
Both read the clock and score from the same GameClock (shared_info in an RLGym env).
Real RocketSim throughout: kickoffs, randomized mid-air states, orange mirroring, zero-padded
slots for smaller teams, and a demolished car.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from rlgym.rocket_league.common_values import BOOST_LOCATIONS

from agents.actions import ACTION_TABLE, ACTION_TABLE_VERSION
from agents.obs import C_DEMOED, C_PRESENT, CAR_BLOCK, LAYOUT, OBS_DIM, OBS_LAYOUT_VERSION, build_obs
from arena.engine.game import GameSpec, make_rlgym_env
from arena.engine.gym_state import GymStateReader
from arena.engine.rlgym_obs import LeagueObsBuilder
from arena.engine.rlgym_state import read_state
from arena.engine.rules import GAME_CLOCK_KEY, GameClock
from arena.engine.sim import new_arena
from arena.engine.vector import VecGame

TEAM_SIZES = (1, 2, 3)


def reference_obs(games: VecGame) -> np.ndarray:
    """Every row of the runner's current observations, rebuilt one agent at a time from GameStates."""
    builder = LeagueObsBuilder()
    out = np.zeros((games.num_agents, OBS_DIM), dtype=np.float32)
    row = 0
    for worker in games.in_process_workers:
        for local, (arena, cars) in enumerate(zip(worker.arenas, worker.cars)):
            env = worker.plan.first_env + local
            state = read_state(arena, cars, worker.ids, arena.tick_count)
            blue, orange = games.info.score[env]
            clock = GameClock(seconds_left=float(games.info.seconds_left[env]), blue=int(blue), orange=int(orange))
            for agent in worker.ids:
                out[row] = builder.agent_obs(agent, state, clock)
                row += 1
    return out


def assert_same(batched: np.ndarray, reference: np.ndarray) -> None:
    """Bit-for-bit: both routes do the same float32 operations on the same RocketSim floats."""
    assert batched.shape == reference.shape
    worst = np.abs(batched - reference).max()
    assert np.array_equal(batched, reference), f"max abs difference {worst}"


@pytest.fixture(params=TEAM_SIZES, ids=lambda t: f"{t}v{t}")
def games(request):
    spec = GameSpec(team_size=request.param, random_start_share=0.5)
    with VecGame(spec, workers=2, envs_per_worker=3, placement="in-process", seed=7) as runner:
        yield runner


def test_batched_equals_per_agent_reference_over_play(games):
    rng = np.random.default_rng(0)
    obs = games.reset(seed=11)
    assert_same(obs, reference_obs(games))
    for step in range(60):
        obs, *_ = games.step(rng.integers(0, 90, games.num_agents))
        if step % 15 == 14:
            assert_same(obs, reference_obs(games))


def test_orange_rows_are_mirrored(games):
    """Each orange car sees what a blue car would after a 180-degree turn of the field."""
    games.reset(seed=3)
    worker = games.in_process_workers[0]
    state = read_state(worker.arenas[0], worker.cars[0], worker.ids, 0)
    orange = next(a for a in worker.ids if a.startswith("orange"))
    physics, inverted = state.cars[orange].physics, state.cars[orange].inverted_physics
    row = games.teams.tolist().index(1)  # first orange row of arena 0
    own = games.reset(seed=3)[row, LAYOUT["self"].slice]
    np.testing.assert_allclose(own[1:4] * 2300, inverted.position, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(own[1:3] * 2300, -physics.position[:2], rtol=1e-5, atol=1e-3)


def test_absent_slots_are_zero(games):
    obs = games.reset(seed=5)
    team_size = games.spec.team_size
    for k, name in enumerate(("mate0", "mate1")):
        block = obs[:, LAYOUT[name].slice]
        assert (block[:, C_PRESENT] == (1.0 if k < team_size - 1 else 0.0)).all()
        if k >= team_size - 1:
            assert not block.any()
    for k, name in enumerate(("opp0", "opp1", "opp2")):
        block = obs[:, LAYOUT[name].slice]
        assert (block[:, C_PRESENT] == (1.0 if k < team_size else 0.0)).all()
        if k >= team_size:
            assert not block.any()


def test_demolished_car_matches_and_is_flagged():
    spec = GameSpec(team_size=2)
    with VecGame(spec, workers=1, envs_per_worker=2, placement="in-process", seed=1) as games:
        games.reset(seed=1)
        worker = games.in_process_workers[0]
        victim = worker.cars[1][2]  # arena 1, first orange car
        victim.demolish()
        obs, *_ = games.step(np.zeros(games.num_agents, dtype=np.int64))
        assert_same(obs, reference_obs(games))
        victim_row = 1 * spec.n_cars + 2
        assert obs[victim_row, LAYOUT["self"].start + C_DEMOED] == 1.0
        # The blue cars of arena 1 see it as their first opponent, demolished.
        for blue_row in (spec.n_cars, spec.n_cars + 1):
            assert obs[blue_row, LAYOUT["opp0"].start + C_DEMOED] == 1.0


def test_rlgym_env_obs_equal_batched_obs_of_its_own_arena():
    """An RLGym env's own GameState (RocketSimEngine) gives what build_obs gives for its arena."""
    for team_size in TEAM_SIZES:
        spec = GameSpec(team_size=team_size, random_start_share=0.5)
        env = make_rlgym_env(spec, seed=4)
        try:
            rng = np.random.default_rng(team_size)
            obs = env.reset()
            for _ in range(25):
                actions = {agent: np.array([rng.integers(0, 90)]) for agent in env.agents}
                obs, _, terminated, truncated = env.step(actions)
                if any(terminated.values()) or any(truncated.values()):
                    obs = env.reset()
            arena = env.transition_engine._arena  # the engine's RocketSim arena (test-only peek)
            arrays = GymStateReader(spec.n_cars).read([arena])
            clock: GameClock = env.shared_info[GAME_CLOCK_KEY]
            teams = np.array([[env.state.cars[a].team_num for a in env.agents]])
            batched = build_obs(arrays.ball, arrays.cars, teams, arrays.pads,
                                np.array([[clock.blue, clock.orange]]), np.array([clock.seconds_left], np.float32),
                                np.array([clock.overtime]))
            assert_same(batched, np.stack([obs[a] for a in env.agents]))
        finally:
            env.close()


def test_arena_pad_order_is_rlgyms():
    arena, _ = new_arena(1)
    positions = np.array([pad.get_pos().as_numpy()[:2] for pad in arena.get_boost_pads()])
    # RLGym lists one pad 2 uu off (y 3310 instead of 3308); match each pad to its nearest.
    distance = np.linalg.norm(positions[:, None] - np.array(BOOST_LOCATIONS)[None, :, :2], axis=-1)
    np.testing.assert_array_equal(distance.argmin(axis=1), np.arange(len(positions)))
    assert distance.min(axis=1).max() <= 2.0


def test_contract_page_matches_the_code():
    """docs/contract.md is the one description of the layout and the table: it must not drift."""
    text = (Path(__file__).parents[1] / "docs" / "contract.md").read_text()
    assert f"OBS_LAYOUT_VERSION = {OBS_LAYOUT_VERSION}" in text
    assert f"ACTION_TABLE_VERSION = {ACTION_TABLE_VERSION}" in text
    for name, block in LAYOUT.items():
        assert f"| {block.start}-{block.start + block.size - 1} | {block.size} | {name} |" in text, name
    assert CAR_BLOCK == 25 and OBS_DIM == 196
    rows = re.findall(r"^\| (\d+) \| (-?\d) \| (-?\d) \| (-?\d) \| (-?\d) \| (-?\d) \| (\d) \| (\d) \| (\d) \|$",
                      text, flags=re.M)
    documented = np.array([[float(v) for v in row[1:]] for row in rows], dtype=np.float32)
    assert [int(row[0]) for row in rows] == list(range(90))
    np.testing.assert_array_equal(documented, ACTION_TABLE)
