#!/usr/bin/env bash
# The baseline ladder: a round robin among the four baselines on a fresh home, per team size.
# Usage: scripts/bench_ladder.sh [GAMES] [SECONDS] [STAGES...]
set -euo pipefail
games=${1:-10}; seconds=${2:-60}; shift $(( $# > 2 ? 2 : $# )); stages=${*:-1v1 2v2 3v3}
home=$(mktemp -d)/ladder
trap 'rm -rf "$(dirname "$home")"' EXIT
league init --home "$home" >/dev/null
for stage in $stages; do
  league tournament --home "$home" --agents atba,rule,rule-pro,random --games "$games" \
    --game-seconds "$seconds" --stage "$stage" --seed 1 >/dev/null
  league leaderboard --home "$home" --stage "$stage" --by mle
done
