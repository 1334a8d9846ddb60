#!/usr/bin/env bash
# Python packages for tests and model generation (python3 on PATH, pip).
# onnx is pinned to a release that ships the backend node test data.
#
#   scripts/install_python_deps.sh [--tensorflow]
#
# --tensorflow also installs tensorflow (a large wheel only the TensorFlow
# model tests and the TFLite peer's onnx2tf conversion need).
set -euo pipefail
MACE_PIP_PACKAGES=(numpy onnx==1.21.0 onnxruntime)
TENSORFLOW_PACKAGE=tensorflow==2.21.0
if ! python3 -c "import numpy, onnxruntime, onnx; assert onnx.__version__ == '1.21.0'" \
    2>/dev/null; then
  python3 -m pip install -q --disable-pip-version-check "${MACE_PIP_PACKAGES[@]}"
fi
if [[ ${1:-} == --tensorflow ]]; then
  # find_spec: importing tensorflow just to check would cost seconds.
  if ! python3 -c "import importlib.util as u, sys; \
sys.exit(not u.find_spec('tensorflow'))"; then
    python3 -m pip install -q --disable-pip-version-check "$TENSORFLOW_PACKAGE"
  fi
elif [[ $# -gt 0 ]]; then
  echo "install_python_deps.sh: unknown argument $1" >&2
  exit 2
fi
