#!/usr/bin/env bash
# Issue 41's GPU figures on a GPU machine, each part printed as one JSON (training/measure/gpu_check.py):
#   figures   bench env (bare RocketSim vs rollout workers with the MLP), the PPO update's rate per minibatch
#             size, and `league diagnose --test scale` on the GPU defaults, on the defaults before them and
#             with the seed documents' network (about 3 minutes on 16 cores)
#   learning  the learning benchmark for 7 minutes with the learner on the GPU, then its 50-game evaluation
# The CPU torch setup.sh installs has no CUDA: on a GPU machine install a CUDA build first, e.g.
#   .venv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128
# Usage: bash scripts/gpu_check.sh [figures|learning|all]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
python -c "import pynvml" 2>/dev/null || pip install --quiet nvidia-ml-py || echo "nvidia-ml-py missing: no GPU utilisation" >&2
part="${1:-all}"
if [ "$part" = figures ] || [ "$part" = all ]; then python -m training.measure.gpu_check figures; fi
if [ "$part" = learning ] || [ "$part" = all ]; then python -m training.measure.gpu_check learning --minutes 7; fi
