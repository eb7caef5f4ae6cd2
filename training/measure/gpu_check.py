"""The GPU figures of issue 18 in one run (`bash scripts/gpu_check.sh` on a GPU machine), as one JSON.

On the machine's cores (one game worker each) and its GPU, 1v1, the default network
([256, 256, 256] MLPs), the bench's iteration size (training.measure.train):

  end_to_end_*       agent steps/s of the learner, updates included, pipelining off and on
  collection_only    the same workers with random actions and no learner (the reference)
  *_over_collection  end to end / collection only, from this run (target >= 0.7 pipelined)
  gpu_busy_*         NVML utilisation sampled over the pipelined run: mean, during updates, during collection

Without CUDA it says so in the JSON ("cuda": false) and measures nothing.
"""

from __future__ import annotations

import json
import os
import sys

import torch

from arena.engine.vector import default_workers
from training.measure.system import ResourceSampler, gpu_report
from training.measure.train import bench_config, collection_rate, training_rate


def gpu_check(iterations: int = 4, batch: int = 50_000) -> dict:
    if not torch.cuda.is_available():
        return {"cuda": False, "reason": "no CUDA device here; run this on a GPU machine"}
    workers = default_workers()
    figures: dict = {"cuda": True, "gpu": torch.cuda.get_device_name(0), "cores": os.cpu_count(), "workers": workers,
                     "torch": torch.__version__}
    for mode in ("never", "always"):
        cfg = bench_config("1v1", iterations, batch, workers, None, ["training.device=cuda", f"runner.pipeline={mode}"])
        with ResourceSampler(gpu=True) as sampler:
            rate, share = training_rate(cfg, None, sampler.update_spans)
        key = "pipelined" if mode == "always" else "sequential"
        figures[f"end_to_end_{key}"] = rate
        figures[f"time_split_{key}"] = share.parts()
        gpu = gpu_report(sampler)
        figures[f"gpu_busy_{key}"] = {"mean": gpu.utilization_mean_percent, "update": gpu.utilization_update_percent,
                                      "collection": gpu.utilization_collection_percent}
    figures["collection_only"] = collection_rate(cfg, seconds=10.0)
    for key in ("sequential", "pipelined"):
        figures[f"{key}_over_collection"] = figures[f"end_to_end_{key}"] / figures["collection_only"]
    figures["targets"] = {"end_to_end_pipelined": 150_000, "pipelined_over_collection": 0.7}
    return figures


if __name__ == "__main__":
    print(json.dumps(gpu_check(*(int(a) for a in sys.argv[1:3])), indent=2))
