#!/usr/bin/env bash
# mace and the peer engines (ONNX Runtime, OpenVINO, TFLite+XNNPACK, MNN,
# ncnn) side by side on the zoo models, interleaved in one run:
#
#   scripts/bench_models.sh [--quick] [--threads 1,2] [--models a,b]
#                           [--markdown FILE] [other bench_models.py flags]
#
# Runs scripts/bench_models.py under the python3 on PATH (pip's). The zoo
# must exist (scripts/model_zoo.sh makes it). The driver's own packages
# (scripts/install_python_deps.sh) and the peer packages that pip's
# main environment lacks are pip-installed there first. The converters
# that it lacks, onnx2tf (ONNX -> TFLite) and pnnx (ONNX -> ncnn), go into
# a venv at ${MACE_BENCH_DIR:-~/.cache/mace/bench}/venv that sees the
# main site-packages; they are installed with --no-deps because their
# declared dependencies would downgrade tensorflow, onnx and protobuf there.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR=${MACE_BENCH_DIR:-$HOME/.cache/mace/bench}
VENV=$BENCH_DIR/venv

setup_converters() {
  mkdir -p "$BENCH_DIR"
  [[ -x $VENV/bin/python ]] || python3 -m venv --system-site-packages "$VENV"
  # find_spec, not import: pnnx's Python package imports torch, which is
  # not needed (only its bundled pnnx executable is used).
  if "$VENV/bin/python" -c "import importlib.util as u, sys; sys.exit(0 if \
all(u.find_spec(m) for m in ('onnx2tf', 'pnnx', 'tf_keras', 'cv2')) else 1)" \
      2>/dev/null; then
    return 0
  fi
  local tf_minor
  tf_minor=$(python3 -c "import importlib.metadata as m; \
print('.'.join(m.version('tensorflow').split('.')[:2]))" 2>/dev/null || true)
  local packages=(onnx2tf onnx_graphsurgeon sng4onnx pnnx psutil
                  opencv-python-headless)
  [[ -n $tf_minor ]] && packages+=("tf_keras~=$tf_minor.0")
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps \
    "${packages[@]}" ||
    echo "bench_models.sh: cannot install onnx2tf/pnnx; TFLite and ncnn" \
      "will be reported as not converted" >&2
}

# The peers themselves go into pip's main environment (the one that runs
# scripts/bench_models.py): a peer that cannot be installed is reported as
# not run by bench_models.py, not fatal here.
setup_peers() {
  local missing=()
  local module package
  for pair in onnxruntime:onnxruntime openvino:openvino \
      ai_edge_litert:ai-edge-litert MNN:MNN ncnn:ncnn; do
    module=${pair%%:*}
    package=${pair#*:}
    python3 -c "import importlib.util as u, sys; \
sys.exit(0 if u.find_spec('$module') else 1)" 2>/dev/null ||
      missing+=("$package")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  echo "bench_models.sh: installing ${missing[*]} (pip)" >&2
  python3 -m pip install -q --disable-pip-version-check "${missing[@]}" ||
    echo "bench_models.sh: cannot install every peer; those missing are" \
      "reported as not run" >&2
}

# The driver's own needs (numpy, onnx for the machine probe) and
# tensorflow, which onnx2tf imports.
bash scripts/install_python_deps.sh --tensorflow
setup_peers
setup_converters
exec python3 scripts/bench_models.py "$@"
