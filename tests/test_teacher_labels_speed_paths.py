"""The teacher's faster labels (issue 59) say what the float32 labels before them said, on real game states:
Necto's refolded attention (agents.community.necto.Attention) against the archive's literal form, and its
labels in bfloat16 (agents.teaching.label_dtype, what a distilling run uses on a CPU with bf16 units) against
float32's. Games: RocketSim 1v1, Necto driving, a share of the cars on random controls
(training.measure.teacher_labels, whose figures these are, timed there, never here)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.community.necto import HEAD_SIZES, NectoNet
from agents.nn_policy import NetworkPolicy
from agents.networks import build_network
from agents.teaching import label_dtype, teacher_labels
from community_bots import bots_dir
from league.config import PolicyConfig
from training.accel import torch_threads
from training.measure.teacher_labels import agreement, label_all, literal_copy, necto_teacher, record_games

MIN_HEAD_AGREEMENT = 0.99  # bf16's argmax, head by head, on the share of states (issue 59's bar)


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread, as a rollout worker labels (and two threads on a busy 2-core machine crawl)."""
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    """Necto as a distilling run builds it: added to a league home from its botpack folder, then its spec's policy."""
    return necto_teacher(tmp_path_factory.mktemp("necto-home"), bots_dir() / "Necto")


@pytest.fixture(scope="module")
def recorded(teacher):
    """48 steps of 32 real 1v1 games (3,072 states: bf16 disagrees on about 0.5% of them in a head, so that
    99% stands about four standard deviations away)."""
    with torch_threads(1):
        return record_games(teacher, team_size=1, arenas=32, steps=48, random_share=0.3, seed=3)


def test_the_refolded_attention_labels_as_the_archives_literal_form(teacher, recorded):
    some = recorded[:16]  # the first 16 steps (1,024 states) make the point
    literal, _ = label_all(literal_copy(teacher), some, None)
    refolded, _ = label_all(teacher, some, None)
    agree, worst, _ = agreement(refolded, literal, HEAD_SIZES)
    assert worst < 1e-5 and min(agree) >= 0.999, (agree, worst)  # a tie within rounding may go either way


def test_the_refolded_attention_keeps_the_mask_and_every_team_size():
    """Made-up inputs with a mask that is not zero (Necto's never is), 2 to 6 cars: the same logits."""
    gen = torch.Generator().manual_seed(0)
    net = NectoNet().eval()
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.1, generator=gen)
    for n_cars in (2, 4, 6):
        k = 1 + n_cars + 34
        q, kv = torch.randn(8, 1, 32, generator=gen), torch.randn(8, k, 24, generator=gen)
        mask = torch.where(torch.rand(8, k, generator=gen) < 0.3, -3.0, 0.0)
        with torch.inference_mode():
            refolded, literal = net(q, kv, mask), net(q, kv, mask, literal=True)
            unmasked = net(q, kv, torch.zeros_like(mask))
        for a, b, c in zip(refolded, literal, unmasked):
            assert torch.allclose(a, b, atol=1e-4, rtol=1e-4)
            assert not torch.allclose(a, c, atol=1e-2)  # the mask counts


def test_bf16_labels_agree_with_float32_labels_on_real_game_states(teacher, recorded):
    dtype = label_dtype(teacher, bf16_units=True)
    assert dtype == torch.bfloat16
    exact, _ = label_all(teacher, recorded, None)
    reduced, _ = label_all(teacher, recorded, dtype)
    assert reduced.dtype == np.float32 and reduced.shape == exact.shape
    for head in np.split(reduced.reshape(-1, reduced.shape[-1]), np.cumsum(HEAD_SIZES)[:-1], axis=1):
        assert np.allclose(head.sum(1), 1, atol=1e-3)  # each head still a distribution
    agree, worst, mean = agreement(reduced, exact, HEAD_SIZES)
    print(f"\nbf16 against float32 on {len(exact.reshape(-1, exact.shape[-1]))} states: argmax agreement per head "
          f"{', '.join(f'{a:.2%}' for a in agree)}, largest |dp| {worst:.3f}, mean {mean:.4f}")
    assert worst > 0  # the reduced path did run in bf16
    assert min(agree) >= MIN_HEAD_AGREEMENT, agree
    assert mean < 0.005 and worst < 0.3


def test_only_a_teacher_measured_in_bf16_and_only_a_cpu_with_bf16_units_label_in_it(teacher):
    assert label_dtype(teacher, bf16_units=False) is None
    network = NetworkPolicy(build_network(PolicyConfig(actor_sizes=[8], critic_sizes=[8])))
    assert label_dtype(network, bf16_units=True) is None  # not measured: float32


def test_labels_in_float32_without_a_dtype_as_before(teacher, recorded):
    game, starts = recorded[0]
    rows = np.arange(len(starts))
    state = teacher.initial_state(len(rows))
    labels, _ = teacher_labels(teacher, game, None, rows, state, starts, teacher.space)
    probs, _ = teacher.act_game_probs(game, rows, teacher.initial_state(len(rows)), starts)
    assert labels.dtype == np.float32 and np.array_equal(labels, probs)


def test_the_measure_says_in_one_sentence_that_a_bot_folder_is_missing(tmp_path, capsys):
    from training.measure.teacher_labels import main

    with pytest.raises(SystemExit) as exit_:
        main(["--bot-folder", str(tmp_path / "necto")])
    message = str(exit_.value.code)
    assert message.startswith("Error: ") and "is not a folder" in message and "\n" not in message
