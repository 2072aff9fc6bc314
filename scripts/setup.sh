#!/usr/bin/env bash
# Installs everything RLWB needs on a fresh Debian machine of this kind and
# builds it. Idempotent: a second run only rebuilds what changed.
#   scripts/setup.sh            -> packages, torch wheel, configure, build
# Environment: RLWB_HOME (default ~/.local/share/rlwb) holds the Python venv
# with the pinned torch wheel, shared by every checkout on the machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RLWB_HOME="${RLWB_HOME:-$HOME/.local/share/rlwb}"
TORCH_VERSION="2.15.0"   # pinned; its CUDA 13 build matches the machine's nvcc 13
BUILD_DIR="${RLWB_BUILD_DIR:-$here/build}"

packages=(build-essential cmake ninja-build ccache pkg-config
  libzmq3-dev cppzmq-dev libsqlitecpp-dev libsqlite3-dev libseccomp-dev
  libimgui-dev libglfw3-dev libgtest-dev libgmock-dev libyaml-cpp-dev
  nlohmann-json3-dev libcli11-dev libgloo-dev libginac-dev libgraphviz-dev bubblewrap xvfb xauth python3-venv
  libprotobuf-dev protobuf-compiler zlib1g-dev libpcre2-dev libicu-dev libsentencepiece-dev
  clang-format clang-tidy iproute2
  slurmctld slurmd slurm-client munge openssh-server openssh-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

venv="$RLWB_HOME/venv"
if ! "$venv/bin/python" -c "import torch,sys; sys.exit(0 if torch.__version__.startswith('$TORCH_VERSION') else 1)" 2>/dev/null; then
  echo "[setup] installing torch==$TORCH_VERSION into $venv (one time, a few GB)"
  mkdir -p "$RLWB_HOME"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "torch==$TORCH_VERSION" numpy
fi
# Python packages the tests and benchmarks compare against (HF transformers,
# math-verify, ...), pinned in scripts/python-requirements.txt.
req="$here/scripts/python-requirements.txt"
stamp="$venv/.rlwb-requirements-$(sha1sum "$req" 2>/dev/null | cut -c1-12)"
if [ -f "$req" ] && [ ! -f "$stamp" ]; then
  echo "[setup] installing Python reference packages from $req"
  "$venv/bin/pip" install -q -r "$req"
  touch "$stamp"
fi

export PATH="/usr/lib/ccache:$PATH"
export CCACHE_DIR="${CCACHE_DIR:-$RLWB_HOME/ccache}"
# Paths relative to the checkout, so a clone in another folder (CI) reuses
# the cache of an earlier build.
export CCACHE_BASEDIR="$here" CCACHE_NOHASHDIR=1
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "[setup] configuring $BUILD_DIR"
  cmake -S "$here" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRLWB_PYTHON="$venv/bin/python" >"$BUILD_DIR.configure.log" 2>&1 \
    || { cat "$BUILD_DIR.configure.log"; exit 1; }
fi
echo "[setup] building (log: $BUILD_DIR/build.log)"
cmake --build "$BUILD_DIR" -j "$(nproc)" >"$BUILD_DIR/build.log" 2>&1 \
  || { tail -60 "$BUILD_DIR/build.log"; echo "[setup] build failed; full log: $BUILD_DIR/build.log"; exit 1; }
echo "[setup] ready: $BUILD_DIR"
