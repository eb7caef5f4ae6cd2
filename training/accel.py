"""Accelerator options for the learner, each with a fallback that says in one line why.

- AMP (`training.amp`: auto | bf16 | fp16 | off): autocast; fp16 adds a gradient scaler and
  needs CUDA (on a CPU it falls back to float32 with a note). auto picks bf16 on a GPU that has
  it, and for the PPO update alone on a CPU whose matrix units speak bf16: AMX tiles (Intel Sapphire
  Rapids and later), where a 2,048-row minibatch's update takes 0.58x the float32 time, or AVX-512
  BF16 (AMD Zen 4 and later), where it takes about a third (docs/scaling.md, "The update in bf16");
  the acting forwards' small batches run 1.3-1.4x slower in bf16, so those stay float32 on a CPU
  (docs/diagnose.md; docs/learning.md, run JJ). Elsewhere auto is float32.
- torch.compile (`training.compile`: off | default | reduce-overhead | max-autotune): the model is
  compiled and tried on a small batch; any failure falls back to the eager model.
- Pinned memory (`training.pin_memory`): page-locked host staging for host-to-GPU copies
  (nothing to do on a CPU).
- CPU threads: while the game workers step, the driver keeps to `training.torch_threads`
  (default: the cores the workers leave); during the PPO update the workers wait, so the
  update takes `training.update_threads` (default: every core).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from arena.engine.cores import usable_cores

AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def cuda_available() -> bool:
    """Whether a GPU learner is possible here (configs/gpu.yaml then holds the learner's defaults): the
    `gpu` test league.config.load_config takes."""
    return torch.cuda.is_available()


def learner_threads(training_cfg, workers: int) -> int:
    """Torch threads for the driver while the game workers run: the cores they leave, at least 1."""
    return training_cfg.torch_threads or max(1, usable_cores() - workers)


def update_threads(training_cfg, busy_workers: int = 0) -> int:
    """Torch threads for the PPO update: every core by default while the workers wait for it, the cores
    left by `busy_workers` that play beside it (pipelined), at least 1."""
    return training_cfg.update_threads or max(1, usable_cores() - busy_workers)


@contextlib.contextmanager
def torch_threads(n: int):
    """Run the block with `n` torch CPU threads, then restore the previous count."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class Accel:
    device: torch.device
    amp_dtype: torch.dtype | None = None
    scaler: torch.amp.GradScaler | None = None
    pin_memory: bool = False
    notes: list[str] = field(default_factory=list)  # the fallbacks taken, one line each

    def autocast(self):
        """The PPO update's precision."""
        if self.amp_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.amp_dtype)

    def inference_autocast(self):
        """The acting forwards' precision: the update's on a GPU, float32 on a CPU (small batches run
        slower in bf16 there)."""
        return self.autocast() if self.device.type == "cuda" else contextlib.nullcontext()


BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")  # matrix units whose bf16 products torch's CPU kernels use


def cpu_has_bf16_units(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU multiplies bf16 matrices in hardware (AMX tiles, or AVX-512 BF16), where an update in
    bf16 pays (Linux reads /proc/cpuinfo; elsewhere False)."""
    try:
        flags = set(cpuinfo.read_text().split())
    except OSError:
        return False
    return any(flag in flags for flag in BF16_CPU_FLAGS)


def make_accel(device: torch.device, amp: str = "auto", pin_memory: bool = False) -> Accel:
    acc = Accel(device)
    cuda = device.type == "cuda"
    bf16_native = torch.cuda.is_bf16_supported() if cuda else cpu_has_bf16_units()  # /proc/cpuinfo read once
    if amp == "auto":
        amp = "bf16" if bf16_native else "off"
    if amp == "fp16" and not cuda:
        acc.notes.append(f"AMP fp16 needs a CUDA device; the learner runs in float32 on {device.type}.")
    elif amp == "bf16" and cuda and not bf16_native:
        acc.notes.append("This GPU has no bf16; the learner runs in float32.")
    elif amp != "off":
        acc.amp_dtype = AMP_DTYPES[amp]
        if amp == "fp16":
            acc.scaler = torch.amp.GradScaler("cuda")
        elif not bf16_native:  # a CPU without bf16 units: asked for explicitly, so honoured
            acc.notes.append("AMP bf16 on a CPU without AMX tiles or AVX-512 BF16 is emulated and usually slower "
                             "than float32.")
    acc.pin_memory = pin_memory and cuda  # only copies to a GPU gain from it
    return acc


def maybe_compile(model: nn.Module, mode: str, sample: torch.Tensor, notes: list[str]) -> nn.Module:
    """`torch.compile(model)` tried on `sample`; the eager model (and a note) if that fails."""
    if mode == "off":
        return model
    try:
        compiled = torch.compile(model, mode=None if mode == "default" else mode)
        with torch.no_grad():
            compiled.step(sample, None if not getattr(model, "recurrent", False) else
                          model.initial_state(len(sample), sample.device), torch.zeros(len(sample), device=sample.device))
        return compiled
    except Exception as exc:  # compile failures come in many types (missing compiler, unsupported op, ...)
        notes.append(f"torch.compile({mode}) failed ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
                     "running the eager model.")
        return model
