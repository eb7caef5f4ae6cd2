#!/usr/bin/env bash
# Create ./.venv and install rl-league with everything it needs. Idempotent: once installed,
# it reinstalls only when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
STAMP=.venv/.rl-league-installed
WANT="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    LOG="$(mktemp)"
    # The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
    if ! { python -c "import torch" 2>/dev/null || pip install --quiet torch==2.13.0; } >"$LOG" 2>&1 \
        || ! pip install --quiet -e ".[dev,dashboard,ray,rlviser]" >>"$LOG" 2>&1; then
        cat "$LOG" >&2
        echo "Installing rl-league failed; the pip output is above." >&2
        exit 1
    fi
    rm -f "$LOG"
    echo "$WANT" > "$STAMP"
fi
