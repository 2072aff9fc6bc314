#!/usr/bin/env bash
# Every benchmark with its peer or floor, in one command: builds them, runs
# each pinned to the same cores, keeps each one's raw log, appends the
# machine-readable figures (bench/bench_record.h: JSON lines with the
# figure, value, peer value, per-pair ratios, host CPU model, cores, date,
# commit) to bench/results.jsonl, and regenerates the table of current
# figures at the top of bench/RESULTS.md (scripts/bench_table.py).
#
#   bench/run_all.sh [--quick] [--cpus 0,1] [--build build] [--only NAME[,NAME...]]
#
# --quick: few pairs and short runs (minutes, for trying the script; its
#          figures are recorded like the others, so do not commit them as
#          the current figures).
# --only:  some benchmarks, by name without "bench_" (grpo_step,sandbox,...).
# Logs: bench/logs/<UTC date>-<commit>/<benchmark>.log and results.jsonl.
# The full set took 17 minutes on 2 cores (2026-12-04); run it on an idle
# machine: other work on the same cores decides the figures.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
cpus="0,1"
build="$root/build"
quick=0
only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --cpus) cpus="$2"; shift 2 ;;
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --only) only=",$2,"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_all.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if ! taskset -c "$cpus" true 2>/dev/null; then
  echo "run_all.sh: cannot pin to cores '$cpus' on this machine (nproc: $(env -u OMP_NUM_THREADS nproc)); pass --cpus with cores it has" >&2
  exit 2
fi
if [[ ! -f "$build/build.ninja" ]]; then
  echo "run_all.sh: no configured build in $build; run scripts/setup.sh first (or pass --build DIR)" >&2
  exit 2
fi

commit="$(git -C "$root" rev-parse --short=10 HEAD)"
if [[ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]]; then commit="$commit-dirty"; fi
stamp="$(date -u +%Y-%m-%dT%H%M%SZ)"
logs="$root/bench/logs/$stamp-$commit"
mkdir -p "$logs"
export RLWB_BENCH_RESULTS="$logs/results.jsonl"
export RLWB_COMMIT="$commit"
: > "$RLWB_BENCH_RESULTS"

echo "building the benchmarks in $build ..."
cmake --build "$build" --target rlwb-worker rlwb-sandbox rlwb-gui \
  bench_transfer bench_rpc bench_math bench_sandbox bench_generate bench_train_step \
  bench_grpo_step bench_grpo_scaling bench_orchestration bench_profiler bench_reshard bench_pipeline bench_gui > "$logs/build.log" 2>&1 ||
  { echo "run_all.sh: the build failed; see $logs/build.log" >&2; exit 1; }

# name | full arguments | quick arguments
benchmarks=(
  "transfer||--quick"
  "rpc|--iters 5000|--iters 500"
  "math|--cpu ${cpus%%,*} --rounds 3|--cpu ${cpus%%,*} --rounds 1 --seconds 0.5"
  "sandbox|--pairs 4|--seconds 0.5 --pairs 1"
  "generate||"
  "train_step|--rounds 10 --steps 5|--rounds 1 --steps 2"
  "grpo_step|--pairs 10 --steps 20|--pairs 1 --steps 3 --warmup 1"
  "grpo_scaling|--out $logs/scaling|--axes layers,dp --steps 1 --warmup 1 --out $logs/scaling"
  "orchestration|--steps 30|--steps 5"
  "profiler|--rounds 6 --steps 60|--rounds 1 --steps 10"
  "reshard|--rounds 5|--rounds 1 --layers 2"
  "reshard|--tp 2 --dp 2 --gen-tp 1 --rounds 5|--tp 2 --dp 2 --gen-tp 1 --rounds 1 --layers 2"
  "reshard|--pp 4 --tp 1 --gen-pp 2 --gen-tp 1 --rounds 5|--pp 4 --tp 1 --gen-pp 2 --gen-tp 1 --rounds 1 --layers 4"
  "pipeline|--rounds 6|--rounds 1 --passes 1"
  "gui||"
)
failed=()
for entry in "${benchmarks[@]}"; do
  IFS='|' read -r name full short <<< "$entry"
  [[ -n "$only" && "$only" != *",$name,"* ]] && continue
  args="$full"; [[ $quick == 1 ]] && args="$short"
  log="$logs/$name.log"
  [[ -e "$log" ]] && log="$logs/$name-$(date -u +%H%M%S).log"
  echo "bench_$name $args  (log: ${log#"$root"/})"
  export RLWB_BENCH_COMMAND="bench_$name $args"
  start=$SECONDS
  # shellcheck disable=SC2086  # the arguments are words on purpose
  if taskset -c "$cpus" "$build/bench/bench_$name" $args > "$log" 2>&1; then
    echo "  done in $((SECONDS - start)) s"
  else
    echo "  FAILED after $((SECONDS - start)) s (exit $?); last lines:"; tail -5 "$log" | sed 's/^/    /'
    failed+=("$name")
  fi
done

cat "$RLWB_BENCH_RESULTS" >> "$root/bench/results.jsonl"
python3 "$root/scripts/bench_table.py" --results "$root/bench/results.jsonl" --doc "$root/bench/RESULTS.md"
echo "figures: $(wc -l < "$RLWB_BENCH_RESULTS") lines in ${RLWB_BENCH_RESULTS#"$root"/}; table regenerated in bench/RESULTS.md"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run_all.sh: failed: ${failed[*]}" >&2
  exit 1
fi
