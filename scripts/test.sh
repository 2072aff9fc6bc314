#!/usr/bin/env bash
# The whole test suite, from nothing: set-up + build, then every GoogleTest
# through ctest. Extra arguments go to ctest (e.g. -R Batch).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
cd "${RLWB_BUILD_DIR:-$here/build}"
ctest --output-on-failure --timeout 300 -j 2 "$@"
