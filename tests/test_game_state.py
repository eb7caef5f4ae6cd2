"""The agent contract's version 2 in the runner: the game state it publishes for agents that read the
game (agents.game_state) and the raw controls it plays for agents that speak them."""

import numpy as np
import pytest

from agents.actions import ACTION_TABLE
from agents.game_state import from_game_states
from arena.engine.game import GameSpec
from arena.engine.rlgym_state import agent_ids, read_state
from arena.engine.vector import VecGame


@pytest.mark.parametrize("team_size", [1, 3])
def test_the_published_state_is_rlgyms_and_raw_controls_are_what_the_cars_ran(team_size):
    spec = GameSpec(team_size=team_size, mode="timed", game_seconds=30, game_state=True)
    rng = np.random.default_rng(team_size)
    with VecGame(spec, workers=1, envs_per_worker=3, placement="in-process", seed=team_size) as games:
        games.reset(seed=team_size)
        worker = games.in_process_workers[0]
        assert not games.game_state().prev_controls.any()  # a new episode starts from no controls
        flips = set()
        for _ in range(60):
            actions = rng.integers(0, len(ACTION_TABLE), games.num_agents)
            controls = rng.uniform(-1, 1, (games.num_agents, 8)).astype(np.float32)
            controls[:, 5:] = controls[:, 5:] > 0
            speaking = rng.random(games.num_agents) < 0.5
            games.step(actions, controls, speaking)
            state = games.game_state()
            expected = from_game_states([read_state(a, c, agent_ids(team_size), a.tick_count)
                                         for a, c in zip(worker.arenas, worker.cars)], agent_ids(team_size))
            assert np.array_equal(state.cars, expected.cars) and np.array_equal(state.ball, expected.ball)
            assert np.array_equal(state.pads, expected.pads) and np.array_equal(state.teams, expected.teams)
            ran = np.where(speaking[:, None], controls, ACTION_TABLE[actions])
            assert np.array_equal(state.prev_controls.reshape(-1, 8), ran)
            flips |= set(state.cars[..., 18].ravel().tolist())
            last = [car.get_state().last_controls for car in worker._all_cars]
            assert np.allclose([c.throttle for c in last], ran[:, 0]) and np.allclose([c.yaw for c in last], ran[:, 3])
        assert flips == {0.0, 1.0}  # has_flip is read, not a constant


def test_a_runner_without_the_state_says_so_and_todays_agents_are_played_as_before():
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=2, placement="in-process", seed=1) as games:
        games.reset(seed=1)
        with pytest.raises(RuntimeError, match="game_state=True"):
            games.game_state()
        first = games.step(np.full(games.num_agents, 5))[0].copy()
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=2, placement="in-process", seed=1) as games:
        games.reset(seed=1)
        same = games.step(np.full(games.num_agents, 5), ACTION_TABLE[np.full(games.num_agents, 5)],
                          np.ones(games.num_agents, bool))[0]
        assert np.array_equal(first, same)  # the table's row as raw controls plays the same step


def test_raw_controls_are_matched_to_the_nearest_row_of_the_action_table():
    from agents.actions import nearest_actions

    assert np.array_equal(nearest_actions(ACTION_TABLE), np.arange(len(ACTION_TABLE)))
    # Necto's "throttle and steer left, nothing else" is the table's ground row for it.
    row = nearest_actions(np.array([[1, -1, 1, -1, 0, 0, 0, 0]], np.float32))[0]
    assert ACTION_TABLE[row][[0, 1, 5, 6, 7]].tolist() == [1, -1, 0, 0, 0]
