#!/usr/bin/env bash
# Runs the ONNX backend node tests (shipped with the onnx pip package)
# through mace convert + mace run. Last line: "N passed, N failed,
# N unsupported". Exit 1 when a test the converter claims fails.
# Usage: scripts/onnx_conformance.sh [path/to/mace] [--filter 'test_conv*']
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_python_deps.sh
mace_bin="${1:-build/bin/mace}"
shift || true
exec python3 scripts/onnx_conformance.py --mace "$mace_bin" "$@"
