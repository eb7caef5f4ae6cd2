#!/usr/bin/env bash
# Our training throughput against rlgym-learn 1.0.5 + rlgym-learn-algos 0.2.6, in one window: the same machine,
# the runs one after the other, each figure agent steps/s end to end (updates included) after a warm-up.
#
#   1. league: `league bench train --stage 1v1 --backends rollout --iterations 6 --set ppo.epochs=1` from this
#      checkout's .venv (training.amp auto: bf16 for the update on a CPU with AVX-512 BF16 or AMX);
#   2. league, float32: the same with `--set training.amp=off` (rlgym-learn's update is float32);
#   3. rlgym-learn on the league's 1v1 game (scripts/bench_rlgym_learn.py --env league), from its own venv;
#   4. rlgym-learn on RLGym's stock pieces (--env stock: DefaultObs, GoalReward + TouchReward, kickoffs).
# The headline ratio is 1 / 3; the others say how much of it is bf16 and how much the env's Python pieces.
#
# Usage: scripts/bench_vs_rlgym_learn.sh          (about 4-5 minutes on 2 cores; run it on a quiet machine)
# Settings (environment variables):
#   RLGL_VENV=/tmp/rlgl-venv   rlgym-learn's venv: made and installed here if absent (a plain venv, never this
#                              project's .venv; torch pinned, a CPU build from local disk on these machines)
#   RLGL_PYTHON=python3.11     the interpreter that venv is made from (rlgym-learn's wheels are cp311 here)
#   RLGL_LEAGUE_ARGS="..."     `league bench train`'s arguments (default: the command in 1. above)
#   RLGL_ARGS="..."            scripts/bench_rlgym_learn.py's arguments (default: --iterations 6)
#   RLGL_FLOAT32=1             0 skips run 2
#   RLGL_ENVS="league stock"   which rlgym-learn runs (3 and/or 4), in order
#   RLGL_TIMEOUT=900           seconds any one run may take before it is stopped (and this script fails)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${RLGL_VENV:-/tmp/rlgl-venv}
python=${RLGL_PYTHON:-python3.11}
command -v "$python" >/dev/null || python=python3
league_args=${RLGL_LEAGUE_ARGS:---stage 1v1 --backends rollout --iterations 6 --set ppo.epochs=1}
rlgl_args=${RLGL_ARGS:---iterations 6}
float32=${RLGL_FLOAT32:-1}
envs=${RLGL_ENVS:-league stock}
limit=${RLGL_TIMEOUT:-900}
league="$root/.venv/bin/league"
[[ -x "$league" ]] || { echo "no $league: install the project first (scripts/setup.sh)" >&2; exit 2; }

# rlgym-learn's venv. rlgym-learn-algos 0.2.6 imports wandb at import time without declaring it; league.config
# (which the env builder reads for the 1v1 game, rewards and PPO settings) needs pyyaml.
reqs=(torch==2.13.0 "rlgym[rl-sim]==2.0.1" rlgym-learn==1.0.5 rlgym-learn-algos==0.2.6 wandb==0.31.0 pyyaml==6.0.4)
stamp="$venv/.bench-requirements"
if [[ ! -x "$venv/bin/python" || "$(cat "$stamp" 2>/dev/null)" != "${reqs[*]}" ]]; then
  echo "== installing rlgym-learn's venv at $venv ($("$python" --version 2>&1))"
  [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q "${reqs[@]}" 2>&1 | grep -v "is ignored: it is neither a file nor a directory" || true
  "$venv/bin/python" - "${reqs[@]}" <<'PY' || { echo "rlgym-learn's venv at $venv is not as pinned; remove it and run again" >&2; exit 2; }
import re, sys
from importlib.metadata import version
import torch, rlgym_learn, rlgym_learn_algos.ppo, RocketSim, yaml  # noqa: F401  (each imports)
for req in sys.argv[1:]:
    name, want = re.sub(r"\[.*\]", "", req).split("==")
    if version(name).split("+")[0] != want:
        sys.exit(f"{name} {version(name)} installed, {want} wanted")
PY
  echo "${reqs[*]}" >"$stamp"
fi

logs=$(mktemp -d /tmp/bench-vs-rlgl.XXXXXX)
export COLUMNS=200  # rich's tables: one line a row, so the figures can be read back
cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
flags=$(grep -m1 -o -w -E 'avx512_bf16|amx_bf16|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ' || true)
echo "== $(date -u +%FT%TZ), $(nproc) cores, CPU: $cpu${flags:+ ($flags)}, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== logs in $logs"
if awk '{ exit !($1 > 0.5) }' /proc/loadavg; then
  echo "== warning: the machine is busy (load average above 0.5): rlgym-learn's lockstep steps suffer most from" \
       "other work on the cores, so the ratio will read high; measure on a quiet machine"
fi

# The rollout backend's end-to-end figure out of `league bench train`'s table.
league_rate() {  # the first backend's row (rollout's, with the default arguments); its last figure
  grep -m1 -F 'end to end (agent steps/s' "$1" | grep -oE '[0-9][0-9,]*(\.[0-9]+)?' | tail -1 | tr -d ,
}
run_league() {  # NAME EXTRA-ARGS...
  local name=$1; shift
  echo "== league bench train $league_args $*"
  # shellcheck disable=SC2086
  (cd "$root" && timeout "$limit" "$league" bench train $league_args "$@") 2>&1 | tee "$logs/$name.log"
  rate=$(league_rate "$logs/$name.log")
  [[ -n "$rate" ]] || { echo "no end-to-end figure in $logs/$name.log" >&2; exit 1; }
  printf -v "rate_$name" '%s' "$rate"
}
run_rlgl() {  # ENV
  echo "== $venv/bin/python scripts/bench_rlgym_learn.py --env $1 $rlgl_args"
  # shellcheck disable=SC2086
  (cd "$root" && timeout "$limit" "$venv/bin/python" scripts/bench_rlgym_learn.py --env "$1" $rlgl_args </dev/null) 2>&1 \
    | tee "$logs/rlgl-$1.log"
  rate=$(sed -n 's/^rlgym-learn: \([0-9.]*\) agent steps\/s$/\1/p' "$logs/rlgl-$1.log" | tail -1)
  [[ -n "$rate" ]] || { echo "no rlgym-learn figure in $logs/rlgl-$1.log" >&2; exit 1; }
  printf -v "rate_rlgl_$1" '%s' "$rate"
}

run_league ours
if [[ "$float32" == 1 ]]; then run_league ours_f32 --set training.amp=off; fi
for env in $envs; do run_rlgl "$env"; done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo
echo "== summary: CPU $cpu, $(nproc) cores, load average now $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-62s %12.0f agent steps/s\n' "ours: league bench train, rollout (training.amp auto)" "$rate_ours"
if [[ -n "${rate_ours_f32:-}" ]]; then
  printf '%-62s %12.0f agent steps/s\n' "ours, float32 update (training.amp=off)" "$rate_ours_f32"
fi
for env in $envs; do
  var="rate_rlgl_$env"
  printf '%-62s %12.0f agent steps/s\n' "rlgym-learn 1.0.5 + algos 0.2.6, --env $env" "${!var}"
done
for env in $envs; do
  var="rate_rlgl_$env"
  echo "ours / rlgym-learn (--env $env): $(ratio "$rate_ours" "${!var}")x"
  if [[ -n "${rate_ours_f32:-}" ]]; then
    echo "ours float32 / rlgym-learn (--env $env): $(ratio "$rate_ours_f32" "${!var}")x"
  fi
done
exit 0
