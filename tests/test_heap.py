"""Free memory a rollout worker's C heap keeps goes back to the system between rounds (training.heap).

Each check runs in a fresh interpreter, so the resident sizes it compares are that process's alone. The
heap is fragmented on purpose: 100 KB arrays (under glibc's mmap threshold, so from the heap), nine in ten
freed, every tenth kept so the freed ones cannot leave from the heap's top. That is free memory glibc holds
until a trim, as the long 2v2 run's worker held it (docs/runs/distill.md, run `te`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap: Linux")

FRAGMENT = """
import numpy as np
from training.heap import resident_bytes

def fragment(mb):
    chunks = [np.ones(100_000 // 8) for _ in range(mb * 10)]
    kept = chunks[::10]
    del chunks[:]
    return kept
"""


def run(body: str) -> dict:
    code = textwrap.dedent(FRAGMENT) + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_trim_hands_the_free_memory_of_a_fragmented_heap_back():
    got = run("""
        import json
        from training.heap import HeapTrim
        trim = HeapTrim(margin=64 << 20)
        first = trim.after_round()   # the resting size
        kept = fragment(400)
        held = resident_bytes()
        trimmed = trim.after_round()
        print(json.dumps({"first": first, "held": held, "trimmed": trimmed, "after": resident_bytes(),
                          "again": trim.after_round(), "trims": trim.trims}))
    """)
    assert got["first"] is False and got["trimmed"] is True and got["trims"] == 1
    assert got["held"] - got["after"] > 250 << 20, got  # of the ~360 MB freed, most went back
    assert got["again"] is False  # no growth since: no second trim


def test_a_process_that_does_not_grow_is_never_trimmed():
    got = run("""
        import json
        import numpy as np
        from training.heap import HeapTrim
        trim = HeapTrim(margin=64 << 20)
        rounds = []
        for _ in range(5):
            a = np.ones(2_000_000); del a  # a round's arrays, freed
            rounds.append(trim.after_round())
        print(json.dumps({"rounds": rounds, "trims": trim.trims}))
    """)
    assert got == {"rounds": [False] * 5, "trims": 0}


def test_a_rollout_worker_hands_back_what_its_heap_holds_free_after_its_round():
    """Before training.heap, a worker kept its freed heap: resident size after the round as before it."""
    got = run("""
        import json
        from league.config import load_config
        from agents.networks import build_network
        from training.rollout_worker import RolloutWorker
        cfg = load_config("1v1", sets=["runner.workers=1", "runner.envs_per_worker=2", "policy.actor_sizes=[32]",
                                       "policy.critic_sizes=[32]", "training.kickstart.teacher="])
        worker = RolloutWorker(cfg, cfg.policy, None, seed=1)
        weights = {k: v.numpy() for k, v in build_network(cfg.policy).state_dict().items()}
        try:
            worker.collect(weights, 0, 8, 1.0, False)
            kept = fragment(400)  # as the long run's worker grew between its rounds
            held = resident_bytes()
            segment = worker.collect(weights, 1, 8, 1.0, False)
            print(json.dumps({"held": held, "after": resident_bytes(), "steps": segment.actions.shape[0]}))
        finally:
            worker.close()
    """)
    assert got["steps"] == 8
    assert got["held"] - got["after"] > 250 << 20, got
