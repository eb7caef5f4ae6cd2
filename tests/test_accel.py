"""Accelerator flags fall back on a CPU with one line saying why, and the learner still learns."""

import torch

from agents.networks import build_network
from league.config import PolicyConfig
from training.accel import make_accel, maybe_compile


def test_amp_on_cpu_falls_back_to_float32_with_a_note():
    acc = make_accel(torch.device("cpu"), "bf16", pin_memory=True)
    assert acc.amp_dtype is None and acc.scaler is None and not acc.pin_memory
    assert len(acc.notes) == 1 and "needs a CUDA device" in acc.notes[0]
    auto = make_accel(torch.device("cpu"), "auto")
    assert auto.amp_dtype is None and auto.notes == []


def test_compile_failure_falls_back_to_the_eager_model():
    net = build_network(PolicyConfig(actor_sizes=[8], critic_sizes=[8]))
    notes: list[str] = []
    # An invalid mode makes torch.compile raise: the eager model comes back with a note.
    model = maybe_compile(net, "no-such-mode", torch.zeros(2, 196), notes)
    assert model is net and len(notes) == 1 and "running the eager model" in notes[0]
    assert maybe_compile(net, "off", torch.zeros(2, 196), notes) is net and len(notes) == 1
