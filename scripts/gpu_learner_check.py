"""GPU check of the learner's accelerator flags (needs only torch, numpy and pyyaml).

Fills a rollout of the bench size (50,000 agent steps, [256, 256, 256] MLPs) with random data and
times PPO updates under each AMP mode, eager and compiled; prints one JSON line per setting and
the ratio against float32 eager measured in the same run.
"""

import json
import sys
import time

import torch

from agents.networks import build_network
from league.config import PolicyConfig, PpoConfig
from training.accel import make_accel, maybe_compile
from training.measure.stepwise import act, observe_rewards
from training.ppo import PpoLearner


def run(amp: str, compile_mode: str, slots: int = 256, steps: int = 196, updates: int = 5) -> dict:
    device = torch.device("cuda")
    torch.manual_seed(0)
    net = build_network(PolicyConfig(actor_sizes=[256, 256, 256], critic_sizes=[256, 256, 256]))
    acc = make_accel(device, amp, pin_memory=True)
    model = maybe_compile(net.to(device), compile_mode, torch.zeros(2, 196, device=device), acc.notes)
    cfg = PpoConfig(steps_per_env=steps, epochs=1, minibatch_size=slots * steps)
    learner = PpoLearner(model, cfg, slots, 196, device=device, accel=acc)
    obs = torch.randn(slots, 196)
    times, act_times = [], []
    for u in range(updates + 1):
        t = time.perf_counter()
        for _ in range(steps):
            act(learner, obs, torch.zeros(slots))
            observe_rewards(learner, torch.randn(slots))
        torch.cuda.synchronize()
        act = time.perf_counter() - t
        t = time.perf_counter()
        stats = learner.update(obs, torch.zeros(slots))
        torch.cuda.synchronize()
        if u:  # the first one warms up (and compiles)
            times.append(time.perf_counter() - t)
            act_times.append(act)
    return {"amp": amp, "compile": compile_mode, "update_s": min(times), "rollout_inference_s": min(act_times),
            "skipped": stats.skipped, "notes": acc.notes}


if __name__ == "__main__":
    modes = sys.argv[1:] or ["off:off", "bf16:off", "fp16:off", "off:default", "bf16:default"]
    results = [run(*m.split(":")) for m in modes]
    base = results[0]
    for r in results:
        r["update_speedup"] = base["update_s"] / r["update_s"]
        r["inference_speedup"] = base["rollout_inference_s"] / r["rollout_inference_s"]
        print(json.dumps(r))
