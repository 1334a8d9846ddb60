#!/usr/bin/env bash
# Python packages for tests and model generation (python3 on PATH, pip).
# onnx is pinned to a release that ships the backend node test data.
set -euo pipefail
MACE_PIP_PACKAGES=(numpy onnx==1.21.0 onnxruntime)
if ! python3 -c "import numpy, onnxruntime, onnx; assert onnx.__version__ == '1.21.0'" \
    2>/dev/null; then
  python3 -m pip install -q --disable-pip-version-check "${MACE_PIP_PACKAGES[@]}"
fi
