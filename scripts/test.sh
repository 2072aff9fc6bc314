#!/usr/bin/env bash
# The whole test suite, from nothing: set-up + build, then every GoogleTest
# through ctest. Extra arguments go to ctest (e.g. -R Batch).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
# The Slurm launch tests use a real one-node Slurm on loopback: started
# here once (the tests also start it when run alone), stopped at the end.
if [ "$(id -u)" -eq 0 ]; then
  "$here/scripts/slurm-local.sh" start >/dev/null || echo "[test] no local Slurm: its tests will skip with the reason"
  trap '"$here/scripts/slurm-local.sh" stop' EXIT
fi
cd "${RLWB_BUILD_DIR:-$here/build}"
ctest --output-on-failure --timeout 300 -j 2 "$@"
