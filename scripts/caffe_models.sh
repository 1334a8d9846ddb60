#!/usr/bin/env bash
# The Caffe frontend end to end: write the test nets (prototxt +
# caffemodel, in code, no downloads), take references from OpenCV's DNN
# module (and float64 NumPy for Proposal / PSROIAlign), convert + run + compare
# with mace (fp32 storage, cosine >= 0.99999).
#
#   scripts/caffe_models.sh [MACE_BINARY] [--models a,b]
#
# MACE_BINARY defaults to build/bin/mace. The cache is
# ${MACE_CAFFE_DIR:-$HOME/.cache/mace/caffe_models}; nets and references are
# made only when missing. Generation runs under the python3 on PATH (pip's
# protobuf) with protoc; references and validation under /usr/bin/python3
# (Debian's python3-opencv).
set -euo pipefail
cd "$(dirname "$0")/.."

MACE=build/bin/mace
if [[ $# -gt 0 && $1 != --* ]]; then
  MACE=$1
  shift
fi
MODELS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --models) MODELS=(--models "$2"); shift 2 ;;
    --models=*) MODELS=(--models "${1#--models=}"); shift ;;
    *) echo "caffe_models.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if ! python3 -c "import google.protobuf, numpy" 2>/dev/null; then
  bash scripts/install_python_deps.sh
fi
command -v protoc >/dev/null || {
  echo "caffe_models.sh: protoc is needed (apt-get install" \
       "protobuf-compiler)" >&2
  exit 1
}
if ! /usr/bin/python3 -c "import cv2, numpy" 2>/dev/null; then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    python3-opencv >/dev/null
  /usr/bin/python3 -c "import cv2" || {
    echo "caffe_models.sh: /usr/bin/python3 cannot import cv2" >&2
    exit 1
  }
fi

python3 scripts/make_caffe_models.py "${MODELS[@]}"
/usr/bin/python3 scripts/caffe_validate.py --mace "$MACE" "${MODELS[@]}"
