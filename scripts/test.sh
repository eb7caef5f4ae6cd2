#!/usr/bin/env bash
# Set up and run the default (fast) test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
python -m pytest "$@"
