#!/usr/bin/env bash
# clang-tidy (root .clang-tidy) on the given files, or on the C++ files
# changed against main when none are given. Needs a configured build
# (compile_commands.json in ${RLWB_BUILD_DIR:-build}).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${RLWB_BUILD_DIR:-build}"
[ -f "$build/compile_commands.json" ] || { echo "lint: no $build/compile_commands.json; run scripts/setup.sh first" >&2; exit 2; }
if [ $# -eq 0 ]; then
  mapfile -t files < <(git diff --name-only main -- '*.cpp')
else
  files=("$@")
fi
[ ${#files[@]} -gt 0 ] || { echo "lint: nothing to check"; exit 0; }
clang-tidy -p "$build" --quiet "${files[@]}"
