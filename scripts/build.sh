#!/usr/bin/env bash
# Configures and builds one build tree: scripts/build.sh [DIR] [cmake args...]
# Defaults to build/ in Release. Uses ccache and two jobs (the machines
# here have two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
build_dir="${1:-build}"
shift || true
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j"${MACE_BUILD_JOBS:-2}"
