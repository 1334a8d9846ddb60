#!/usr/bin/env bash
# The mace command reports running out of memory as an error (exit 2, a
# message), never as an uncaught std::bad_alloc. The trigger: a frozen
# TensorFlow graph of one Const node in TensorFlow's compact form, a single
# value filling 2^28 floats (1 GiB, the largest constant the converter
# takes), converted under a 600 MB address-space limit.
# Usage: bash tests/tools/out_of_memory_test.sh <path-to-mace>
set -euo pipefail

source "$(dirname "$0")/test_lib.sh" "$@"

# GraphDef { node { name: "c" op: "Const"
#   attr { key: "value" value { tensor { dtype: DT_FLOAT
#     tensor_shape { dim { size: 268435456 } } float_val: 1 } } }
#   attr { key: "dtype" value { type: DT_FLOAT } } } }, protobuf-encoded.
printf '%b' '\x0a\x36\x0a\x01c\x12\x05Const' \
  '\x2a\x1d\x0a\x05value\x12\x14\x42\x12\x08\x01\x12\x08\x12\x06' \
  '\x08\x80\x80\x80\x80\x01\x2a\x04\x00\x00\x80\x3f' \
  '\x2a\x0b\x0a\x05dtype\x12\x02\x30\x01' >"$TMP/fill.pb"

expect 2 'mace convert: error: out of memory' \
  bash -c 'ulimit -v 600000 && exec "$@"' _ \
  "$MACE" convert --platform tensorflow --model-file "$TMP/fill.pb" \
  --output-dir "$TMP/out"

echo "out_of_memory_test: $CHECKS checks passed"
