#!/usr/bin/env bash
# The end-to-end demo on the embedded default: a league home under ./league-home.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export LEAGUE_HOME="${LEAGUE_HOME:-$PWD/league-home}"
league init
league agents
league leaderboard --stage 1v1
