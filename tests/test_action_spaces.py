"""agents.action_spaces and agents.teaching: factorised heads, joint indices, a teacher's labels in
the student's space. The label maps are checked against the bots' own play on real game states:
a head read in the wrong order, or a control sent wrongly, makes these fail."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.action_spaces import SPACES, action_space, can_hold, one_hot, project
from agents.actions import ACTION_TABLE, nearest_actions
from agents.community.install import community_policy
from agents.community.tensors import read_state_dict, read_torchscript_tensors
from agents.teaching import check_can_teach, teacher_labels
from arena.engine.game import GameSpec
from arena.engine.vector import VecGame
from community_bots import bots_dir
from league.errors import LeagueError


@pytest.mark.parametrize("name", list(SPACES))
def test_joint_indices_log_probs_and_entropy_are_those_of_the_joint_distribution(name):
    space = SPACES[name]
    logits = torch.randn(4, space.logits, generator=torch.Generator().manual_seed(0))
    every = torch.arange(space.actions)
    joint = torch.stack([space.log_prob(row.expand(space.actions, -1), every) for row in logits])
    assert torch.allclose(joint.exp().sum(1), torch.ones(4), atol=1e-5)  # a distribution over the joint actions
    assert torch.allclose(space.entropy(logits), -(joint.exp() * joint).sum(1), atol=1e-4)
    actions, logprob = space.sample(logits, torch.Generator().manual_seed(1))
    assert torch.allclose(logprob, joint.gather(1, actions[:, None]).squeeze(1), atol=1e-5)
    assert torch.equal(space.greedy(logits), joint.argmax(1))  # independent heads: the per-head argmaxes
    assert space.controls.shape == (space.actions, 8)


def test_the_table_samples_as_it_always_has():
    """One head of 90: the same Gumbel draw as before the heads existed, so seeded games replay."""
    logits = torch.randn(7, 90)
    a, _ = SPACES["table"].sample(logits, torch.Generator().manual_seed(3))
    uniform = torch.rand(logits.shape, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, (logits - torch.log(-torch.log(uniform))).argmax(-1))
    assert np.array_equal(SPACES["table"].controls, ACTION_TABLE)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["necto", "element"]), st.integers(0, 2**31 - 1))
def test_projection_into_the_table_keeps_the_mass_on_nearest_rows(name, seed):
    space = SPACES[name]
    logits = torch.randn(3, space.logits, generator=torch.Generator().manual_seed(seed))
    probs = space.probs(logits).numpy()
    table = project(probs, space, SPACES["table"])
    assert np.allclose(table.sum(1), 1.0, atol=1e-5)
    # a one-hot label lands wholly on the nearest row of its joint action's controls
    actions = space.greedy(logits).numpy()
    hard = project(one_hot(actions, space), space, SPACES["table"])
    assert np.array_equal(hard.argmax(1), nearest_actions(space.controls[actions]))


def test_who_can_hold_whom():
    table, necto, element = SPACES["table"], SPACES["necto"], SPACES["element"]
    assert can_hold(table, necto) and can_hold(table, element) and can_hold(necto, necto)
    assert not can_hold(necto, element) and not can_hold(element, necto) and not can_hold(necto, table)
    with pytest.raises(LeagueError, match="cannot hold"):
        project(np.ones((1, 21)) / 3, element, necto)
    with pytest.raises(LeagueError, match="Unknown action space"):
        action_space("joystick")


def played_states(team_size: int, steps: int = 40):
    """Game states of a few arenas driven by random controls (each a new state for the bots)."""
    rng = np.random.default_rng(team_size)
    spec = GameSpec(team_size=team_size, mode="timed", game_seconds=30, game_state=True)
    with VecGame(spec, workers=1, envs_per_worker=3, placement="in-process", seed=team_size) as games:
        games.reset(seed=team_size)
        for _ in range(steps):
            controls = np.concatenate([rng.integers(-1, 2, (games.num_agents, 5)),
                                       rng.integers(0, 2, (games.num_agents, 3))], 1).astype(np.float32)
            games.step(np.zeros(games.num_agents, np.int64), controls, np.ones(games.num_agents, bool))
            yield games.game_state()


@pytest.mark.parametrize("kind, team_size, read", [("necto", 2, read_torchscript_tensors),
                                                    ("element", 1, read_state_dict)])
def test_a_bots_labels_say_what_it_plays(kind, team_size, read):
    """Each head's most likely choice, read in the student's space and sent through its controls,
    is exactly what the bot sends the car; its memory advances as when it plays."""
    folder = {"necto": bots_dir() / "Necto" / "Necto" / "necto-model.pt", "element": bots_dir() / "Element" / "model.p"}
    tensors = read(folder[kind])
    labeller, player = (community_policy(kind, tensors, kind) for _ in range(2))
    space = SPACES[kind]
    label_state = play_state = None
    for game in played_states(team_size):
        rows = np.arange(game.cars.shape[0] * game.cars.shape[1])
        starts = np.zeros(len(rows), bool)
        if label_state is None:
            label_state, play_state = labeller.initial_state(len(rows)), player.initial_state(len(rows))
        labels, label_state = teacher_labels(labeller, game, np.zeros((len(rows), 1)), rows, label_state, starts, space)
        played, play_state = player.act_game(game, rows, play_state, starts)
        heads = [torch.as_tensor(p).argmax(-1) for p in np.split(labels, np.cumsum(space.head_sizes)[:-1], axis=1)]
        assert np.array_equal(space.controls[space.joint(heads).numpy()], played)
        assert np.allclose(labels.reshape(len(rows), -1).sum(1), len(space.head_sizes), atol=1e-4)


def test_a_student_that_cannot_hold_its_teacher_is_told_in_one_sentence():
    element = community_policy("element", read_state_dict(bots_dir() / "Element" / "model.p"), "element")
    check_can_teach(element, "element", SPACES["table"])
    check_can_teach(element, "element", SPACES["element"])
    with pytest.raises(LeagueError, match="cannot hold element's actions") as info:
        check_can_teach(element, "element", SPACES["necto"])
    assert "\n" not in str(info.value)
