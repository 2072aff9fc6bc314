#!/usr/bin/env bash
# Two builds of RLWB on the same experiment, side by side: runs with the
# `before` build's rlwb and the `after` build's alternate (before, after,
# before, after, ...; every process pinned to the same cores), and each
# pair's mean step time and mean time of one node are printed with their
# ratio after/before and the spread. A change helps when every pair's
# ratio is below 1. For a code change that no setting switches off (the
# analyzer's code-level advice), this is its before/after.
#
#   bench/compare_builds.sh BEFORE_RLWB AFTER_RLWB EXPERIMENT NODE [PAIRS] [OVERRIDES...]
#   e.g. bench/compare_builds.sh /tmp/old/build/app/rlwb build/app/rlwb experiments/grpo.yaml update 6
# An rlwb copied out of its build finds no rlwb-sandbox next to it: for
# experiments with a code reward, set RLWB_SANDBOX.
set -euo pipefail
before=$(realpath "$1") after=$(realpath "$2") experiment=$(realpath "$3") node=$4
pairs=${5:-5}
shift $(($# < 5 ? $# : 5))
work=$(mktemp -d /tmp/rlwb-compare-builds-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc alone honours OMP_NUM_THREADS
pin="taskset -c 0-$((cores - 1))"
common=("trainer.steps=30" "~trainer.warm_start" "~trainer.eval" "~trainer.save" "$@")

# Mean of a metric over steps 4.. of the last run (the first calls allocate).
mean_of() {
  sqlite3 runs/rlwb.db "select avg(value) from metrics where key='$1' and step>3 and
    run_id=(select max(id) from runs)"
}
run_with() {
  if ! $pin "$1" run "$experiment" "${common[@]}" >run.log 2>&1; then
    echo "compare_builds: the run with $1 failed:" >&2
    tail -3 run.log >&2
    exit 1
  fi
}

echo "host: $(lscpu | sed -n 's/^Model name: *//p'), $cores cores"
echo "experiment: $experiment ${common[*]}"
printf '%-5s %10s %10s %7s   %10s %10s %7s\n' pair "step bef" "step aft" ratio "$node bef" "$node aft" ratio
step_ratios=() node_ratios=()
for ((p = 1; p <= pairs; ++p)); do
  run_with "$before"
  sb=$(mean_of perf/time_per_step) nb=$(mean_of "timing_s/$node")
  run_with "$after"
  sa=$(mean_of perf/time_per_step) na=$(mean_of "timing_s/$node")
  rs=$(awk -v a="$sa" -v b="$sb" 'BEGIN { printf "%.3f", a / b }')
  rn=$(awk -v a="$na" -v b="$nb" 'BEGIN { printf "%.3f", a / b }')
  step_ratios+=("$rs") node_ratios+=("$rn")
  printf '%-5d %10.4f %10.4f %7s   %10.4f %10.4f %7s\n' "$p" "$sb" "$sa" "$rs" "$nb" "$na" "$rn"
done
summary() {
  printf '%s\n' "${@:2}" | sort -n | awk -v what="$1" '{ r[NR] = $1 } END {
    printf "%s after/before: min %s, median %s, max %s (%s)\n", what, r[1], r[int((NR + 1) / 2)], r[NR],
      r[NR] < 1 ? "faster in every pair" : "not faster in every pair" }'
}
summary "step time" "${step_ratios[@]}"
summary "$node time" "${node_ratios[@]}"
