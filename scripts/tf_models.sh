#!/usr/bin/env bash
# The TensorFlow converter end to end: generate the test models (Keras
# applications with weights=None and op-coverage graphs, built in code, no
# downloads) with TensorFlow's own reference outputs, then convert + run +
# compare each with mace (fp32 storage, cosine >= 0.99999).
#
#   scripts/tf_models.sh [MACE_BINARY] [--models a,b]
#
# MACE_BINARY defaults to build/bin/mace. The cache is
# ${MACE_TF_MODELS_DIR:-$HOME/.cache/mace/tf_models}; models are made only
# when missing. Everything runs under the python3 on PATH (pip's
# tensorflow and numpy).
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
    *) echo "tf_models.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

bash scripts/install_python_deps.sh --tensorflow

python3 scripts/make_tf_models.py "${MODELS[@]}"
python3 scripts/tf_validate.py --mace "$MACE" "${MODELS[@]}"
