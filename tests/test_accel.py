"""Accelerator flags fall back on a CPU with one line saying why, and the learner still learns."""

import os

import torch

from agents.networks import build_network
from arena.engine.cores import usable_cores
from league.config import PolicyConfig, load_config
from training.accel import cpu_has_bf16_units, learner_threads, make_accel, maybe_compile, torch_threads, update_threads


def test_fp16_on_cpu_falls_back_to_float32_with_a_note():
    acc = make_accel(torch.device("cpu"), "fp16", pin_memory=True)
    assert acc.amp_dtype is None and acc.scaler is None and not acc.pin_memory
    assert len(acc.notes) == 1 and "needs a CUDA device" in acc.notes[0]


def test_auto_amp_on_cpu_is_bf16_for_the_update_alone_where_the_cpu_has_bf16_units(tmp_path):
    auto = make_accel(torch.device("cpu"), "auto")
    assert auto.amp_dtype == (torch.bfloat16 if cpu_has_bf16_units() else None) and auto.notes == []
    # The acting forwards stay float32 on a CPU; the update's autocast is bf16 when asked for.
    bf16 = make_accel(torch.device("cpu"), "bf16")
    net = build_network(PolicyConfig(actor_sizes=[8], critic_sizes=[8]))
    with bf16.autocast():
        assert net(torch.zeros(2, 196))[0].dtype == torch.bfloat16
    with bf16.inference_autocast():
        assert net(torch.zeros(2, 196))[0].dtype == torch.float32
    assert bool(bf16.notes) == (not cpu_has_bf16_units())
    flags = tmp_path / "cpuinfo"
    flags.write_text("flags\t\t: fpu avx512f avx512_bf16 amx_bf16 amx_tile\n")  # Intel Sapphire Rapids
    assert cpu_has_bf16_units(flags)
    flags.write_text("flags\t\t: fpu avx512f avx512_bf16 avx512_vnni\n")  # AMD Zen 4 and later: no AMX
    assert cpu_has_bf16_units(flags)
    flags.write_text("flags\t\t: fpu avx2 avx512f\n")
    assert not cpu_has_bf16_units(flags) and not cpu_has_bf16_units(tmp_path / "missing")


def test_compile_failure_falls_back_to_the_eager_model():
    net = build_network(PolicyConfig(actor_sizes=[8], critic_sizes=[8]))
    notes: list[str] = []
    # An invalid mode makes torch.compile raise: the eager model comes back with a note.
    model = maybe_compile(net, "no-such-mode", torch.zeros(2, 196), notes)
    assert model is net and len(notes) == 1 and "running the eager model" in notes[0]
    assert maybe_compile(net, "off", torch.zeros(2, 196), notes) is net and len(notes) == 1


def test_update_threads_default_to_every_core_and_restore_after(monkeypatch):
    cfg = load_config()
    assert update_threads(cfg.training) == usable_cores()
    assert update_threads(load_config(sets=["training.update_threads=1"]).training) == 1
    assert learner_threads(cfg.training, workers=usable_cores()) == 1  # the workers take the cores
    # The cores this process may run on (its affinity mask), never the machine's count.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert update_threads(cfg.training) == 3 and learner_threads(cfg.training, workers=2) == 1
    monkeypatch.undo()
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
