#!/usr/bin/env bash
# Create ./.venv and install rl-league with everything it needs (idempotent, quick when done).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
# The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
python -c "import torch" 2>/dev/null || pip install --quiet torch==2.13.0
pip install --quiet -e ".[dev,dashboard]"
