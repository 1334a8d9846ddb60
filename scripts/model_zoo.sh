#!/usr/bin/env bash
# The model zoo end to end: generate the models (torch, in code, no
# downloads), compute ONNX Runtime references, convert + run + compare with
# mace for fp32 and fp16 storage.
#
#   scripts/model_zoo.sh [MACE_BINARY] [--models a,b] [other zoo_validate flags]
#
# MACE_BINARY defaults to build/bin/mace. The cache is
# ${MACE_ZOO_DIR:-$HOME/.cache/mace/zoo}; models and references are made
# only when missing. Generation runs under /usr/bin/python3 with Debian's
# python3-torch / python3-torchvision; references and validation under the
# python3 on PATH with pip's onnx / onnxruntime / numpy.
set -euo pipefail
cd "$(dirname "$0")/.."

MACE=build/bin/mace
if [[ $# -gt 0 && $1 != --* ]]; then
  MACE=$1
  shift
fi
MODELS=()
VALIDATE_ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --models) MODELS=(--models "$2"); shift 2 ;;
    --models=*) MODELS=(--models "${1#--models=}"); shift ;;
    *) VALIDATE_ARGS+=("$1"); shift ;;
  esac
done

bash scripts/install_python_deps.sh

if ! /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  if ! dpkg -s python3-torchvision >/dev/null 2>&1; then
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-torchvision >/dev/null
  fi
  /usr/bin/python3 -c "import torch, torchvision" || {
    echo "model_zoo.sh: /usr/bin/python3 cannot import torch/torchvision" >&2
    exit 1
  }
fi

/usr/bin/python3 scripts/make_model_zoo.py "${MODELS[@]}"
python3 scripts/zoo_reference.py "${MODELS[@]}"
python3 scripts/zoo_validate.py --mace "$MACE" "${MODELS[@]}" \
  "${VALIDATE_ARGS[@]}"
