#!/usr/bin/env bash
# The checks that need a GPU, for a machine that has one. Builds nothing:
# it runs what is already in the build folder (scripts/setup.sh builds it)
# and says what it checked and what it could not.
#   1. the GPU, as nvidia-smi sees it;
#   2. the profiler's CUDA tests (workers_tests, CuptiKernelsTest.*): a
#      matmul's kernels under aten::mm in a profiled call; fails if they
#      were skipped, i.e. if LibTorch saw no GPU;
#   3. the model roles on the GPU (workers_tests, CudaRoles.*), tensor
#      parallelism and the 3D-HybridEngine on two ranks among them: over
#      NCCL with two GPUs, through the host where they share one; and
#      weight streaming between models on GPUs (WeightStreamCuda.*);
#   4. where the rlwb command is built: a short profiled GRPO run on
#      pools.train.device=cuda (one worker: one GPU), and `rlwb profile
#      show` of it plus each stored tree's kernel frames, so a reader
#      sees whether kernels or a note reached the stored profile.
# Environment: RLWB_BUILD_DIR (default ./build).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RLWB_BUILD_DIR:-$here/build}"
status=0
say() { echo "[device_check] $*"; }

if command -v nvidia-smi >/dev/null; then
  say "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
else
  say "nvidia-smi not found: the tests below will tell whether LibTorch sees a GPU"
fi

tests="$build/tests/workers_tests"
if [ ! -x "$tests" ]; then
  say "FAIL: $tests is not built (scripts/setup.sh, or cmake --build $build --target workers_tests)"
  exit 2
fi
# Runs the tests of FILTER; fails when they fail or when MUST_RUN (a test
# that needs only one GPU) was skipped. Leaves the output in $log.
run_gpu_tests() {  # FILTER WHAT MUST_RUN OK_MESSAGE
  log="$(mktemp)"
  "$tests" --gtest_filter="$1" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    say "FAIL: the $2 failed (exit $rc)"
    status=1
  elif grep -q "SKIPPED.*$3" "$log"; then
    say "FAIL: $3 was skipped: LibTorch sees no GPU here"
    status=1
  else
    say "ok: $4"
  fi
}

run_gpu_tests 'CuptiKernelsTest.*' "CUDA profiler tests" CudaMatmulKernelsLandUnderTheirOperator \
  "CUPTI kernels, kernel counts and memcpy bytes land under their operators"
rm -f "$log"
# The model roles on the GPU (issue 13): an actor on cuda against the CPU,
# and tensor parallelism and the engine on two ranks (NCCL or the host).
run_gpu_tests 'CudaRoles.*' "CUDA role tests" AnActorOnAGpuComputesWhatItComputesOnTheCpu \
  "an actor on the GPU computes what it computes on the CPU"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if grep -q 'SKIPPED.*TensorParallelOnGpus' "$log"; then
  say "skipped: tensor parallelism and the engine on two ranks (no GPU)"
elif [ "${gpus:-0}" -ge 2 ]; then
  say "tensor parallelism and the engine ran over NCCL ($gpus GPUs)"
else
  say "tensor parallelism and the engine ran with both ranks on one GPU (host copies over Gloo); NCCL needs two GPUs"
fi
rm -f "$log"
# Weight streaming from a model on a GPU to one on a GPU (host buckets).
run_gpu_tests 'WeightStreamCuda.*' "CUDA weight-stream test" AGpuModelStreamsToAGpuModelBitwiseThroughHostBuckets \
  "weights stream from a GPU model to a GPU model bitwise"
rm -f "$log"

cli="$build/app/rlwb"
if [ ! -x "$cli" ] || [ ! -x "$build/app/rlwb-worker" ]; then
  say "skipped: the profiled run ($cli or rlwb-worker not built)"
  exit $status
fi
work="$(mktemp -d)"
say "profiled run on pools.train.device=cuda (db: $work/rlwb.db)"
if (cd "$work" && timeout 300 "$cli" run "$here/experiments/grpo.yaml" --db "$work/rlwb.db" \
      pools.train.device=cuda pools.train.workers=1 models.actor.parallel.dp=1 models.ref.parallel.dp=1 \
      trainer.steps=3 trainer.warm_start.steps=1 trainer.eval.batch_size=16 'trainer.save=[]' task.batch_size=8 \
      models.actor.config.ppo.mini_batch_size=64 profile.enabled=true profile.steps=2-3 >"$work/run.log" 2>&1); then
  "$cli" profile show 1 --db "$work/rlwb.db" --top 15 || status=1
  # The stored trees (kernel frames have no wall time, so `show` does not rank them): per
  # worker window, its kernel frames and kernels, and its notes.
  python3 - "$work/rlwb.db" <<'PY' || status=1
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for worker, step, data in db.execute("select node, step, data from profiles where kind = 'cct'"):
    w = json.loads(data)
    frames = kernels = 0
    def visit(f):
        global frames, kernels
        if f.get("k") == "kernel":
            frames += 1
            kernels += f["m"][7]
        for c in f.get("c", []):
            visit(c)
    visit(w["tree"])
    print(f"[device_check] {worker} window {step}: {frames} kernel frames, {kernels} kernels;"
          f" notes: {w.get('notes')}")
PY
else
  say "FAIL: the profiled CUDA run did not finish; its log:"
  tail -40 "$work/run.log"
  status=1
fi
exit $status
