#!/usr/bin/env bash
# Issue 18's GPU figures in one command on a GPU machine: end-to-end agent steps/s (pipelining off
# and on), collection only, their ratios and the GPU's busy share, printed as one JSON.
# The CPU torch setup.sh installs has no CUDA: on a GPU machine install a CUDA build first, e.g.
#   .venv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128
# Optional arguments: measured iterations (4) and agent steps per iteration (50000).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
python -c "import pynvml" 2>/dev/null || pip install --quiet nvidia-ml-py || echo "nvidia-ml-py missing: no GPU utilisation" >&2
python -m training.measure.gpu_check "$@"
