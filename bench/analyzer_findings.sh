#!/usr/bin/env bash
# The analyzer's advice, applied and measured: for four of its rules, a
# run of one of RLWB's own experiments that exhibits the problem is
# profiled, `rlwb analyze` names the change (a graph-file override), and
# then runs without and with that change alternate (before, after, before,
# after, ...; every process pinned to the same cores), printing each
# pair's step time, the ratio and the spread. A change helps when every
# pair's ratio is below 1.
#
#   bench/analyzer_findings.sh [BUILD_DIR] [PAIRS]     (default: build, 3)
set -euo pipefail
build=${1:-build}
pairs=${2:-3}
rlwb="$(cd "$build" && pwd)/app/rlwb"
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d /tmp/rlwb-analyzer-findings-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc alone honours OMP_NUM_THREADS
pin="taskset -c 0-$((cores - 1))"
common=("trainer.steps=10" "~trainer.warm_start" "~trainer.eval" "~trainer.save")

last_run() { sqlite3 runs/rlwb.db "select max(id) from runs"; }
# Mean step time (s) of a run, its first two steps left out (first calls allocate).
step_time() { sqlite3 runs/rlwb.db "select avg(value) from metrics where run_id=$1 and key='perf/time_per_step' and step>2"; }

# case RULE EXPERIMENT OVERRIDES...: profile, take the rule's change from
# `rlwb analyze`, then measure before/after pairs.
measure() {
  local rule=$1 experiment=$2
  shift 2
  local base=("$@")
  $pin "$rlwb" run "$source_dir/experiments/$experiment.yaml" "${common[@]}" "${base[@]}" \
    profile.enabled=true profile.every=1 >/dev/null 2>&1
  local run
  run=$(last_run)
  local change
  change=$("$rlwb" analyze "$run" | awk -v rule="[$rule]" '
    index($0, rule) { found = 1; next }
    found && /^   change:/ { sub(/^   change: +/, ""); print; exit }')
  change=${change%%$'\n'*}
  # Only the key=value words before any explanation are the overrides.
  local overrides=()
  for word in ${change%%(*}; do [[ $word == *=* || $word == "~"* ]] && overrides+=("$word"); done
  if [[ ${#overrides[@]} -eq 0 ]]; then
    echo "$rule on $experiment: the analyzer did not find it (change: '${change}')"
    return
  fi
  echo "$rule on $experiment ${base[*]}"
  echo "  analyzer's change: ${overrides[*]}"
  printf '  %-5s %12s %12s %8s\n' pair "before s" "after s" ratio
  local ratios=()
  for ((p = 1; p <= pairs; ++p)); do
    $pin "$rlwb" run "$source_dir/experiments/$experiment.yaml" "${common[@]}" "${base[@]}" >/dev/null 2>&1
    local before
    before=$(step_time "$(last_run)")
    $pin "$rlwb" run "$source_dir/experiments/$experiment.yaml" "${common[@]}" "${base[@]}" "${overrides[@]}" \
      >/dev/null 2>&1
    local after
    after=$(step_time "$(last_run)")
    local ratio
    ratio=$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.3f", a / b }')
    ratios+=("$ratio")
    printf '  %-5d %12.4f %12.4f %8s\n' "$p" "$before" "$after" "$ratio"
  done
  printf '%s\n' "${ratios[@]}" | sort -n | awk '{ r[NR] = $1 } END {
    printf "  ratio after/before: min %s, median %s, max %s (%s)\n", r[1], r[int((NR + 1) / 2)], r[NR],
      r[NR] < 1 ? "helps in every pair" : "does not help in every pair" }'
}

echo "host: $(lscpu | sed -n 's/^Model name: *//p'), $cores cores"
measure reward-critical grpo_code "++rewards.runs.config.executors=1"
measure threads-oversubscribed grpo "pools.train.workers=$((2 * cores))" \
  "models.actor.parallel.dp=$((2 * cores))" "models.ref.parallel.dp=$((2 * cores))" \
  "models.actor.config.ppo.mini_batch_size=0"
measure pool-idle grpo "+pools.refpool={workers: 1}" "models.ref.pool=refpool" "models.ref.parallel.dp=1"
# The actor's update in micro-batches of 16 rows with the host's memory mostly free.
measure memory-headroom grpo "models.actor.config.micro_batch_size=16"
