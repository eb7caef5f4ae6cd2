#!/usr/bin/env bash
# The end-to-end demo on the embedded default: a league home under ./league-home, local processes.
# Sets up, trains a 1v1 agent for a few minutes, plays a round robin with the baselines, prints
# the standings and the leaderboard, and says how to open the dashboard.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export LEAGUE_HOME="${LEAGUE_HOME:-$PWD/league-home}"
MINUTES="${DEMO_MINUTES:-3}"
RUN="demo-$(date +%Y%m%d-%H%M%S)"

league init
league train --stage 1v1 --minutes "$MINUTES" --name "$RUN" \
    --set training.snapshot_every_steps=100000 --set training.eval_games=4
league agents --stage 1v1
league tournament --stage 1v1 --games 4 --game-seconds 60
league leaderboard --stage 1v1 --by mle
league lineage "$(league agents --stage 1v1 | grep -o "$RUN-v[0-9]*" | sort -uV | tail -1)"  # the latest version, not its parent
echo
echo "Open the dashboard with:  . .venv/bin/activate && league dashboard --home $LEAGUE_HOME"
