#!/usr/bin/env bash
# Model as code: `mace convert --config` with model_graph_format: code (and
# model_data_format: code or file) writes a static library with
# CreateMaceEngineFromCode; the deployment example (examples/deploy) links
# it and must compute the same outputs as from the model files.
# Usage: bash tests/tools/model_code_test.sh <path-to-mace>
set -euo pipefail

source "$(dirname "$0")/test_lib.sh" "$@"
CXX="${CXX:-c++}"

mkdir -p "$TMP/cfg/models" "$TMP/work"
cp "$SRC/models/mini_cnn/mini_cnn.onnx" "$TMP/cfg/models/"
write_config() {  # GRAPH_FORMAT DATA_FORMAT
  cat >"$TMP/cfg/deploy.yml" <<YAML
library_name: mini-lib
target_abis: [host]
model_graph_format: $1
model_data_format: $2
models:
  mini-a:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    input_tensors: input
    input_shapes: 1,32,32,3
    output_tensors: prob
  mini_b:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    data_type: fp16_fp32
    input_tensors: input
    input_shapes: 1,32,32,3
    output_tensors: prob
YAML
}
cd "$TMP/work"
LIB="$TMP/work/build/mini-lib"
EXAMPLE="$SRC/examples/deploy/example.cc"
LINK=(-lprotobuf-lite -pthread)

# The reference: the file-format models through the example built against
# the library tree's libmace.a.
write_config file file
"$MACE" convert --config ../cfg/deploy.yml >/dev/null
for file in lib/libmace.a lib/libmace.so include/mace/public/mace.h; do
  [[ -s "$LIB/$file" ]] || fail "build/mini-lib/$file was not written"
done
"$CXX" -std=c++17 -O1 "$EXAMPLE" -I "$LIB/include" "$LIB/lib/libmace.a" \
  "${LINK[@]}" -o "$TMP/example_files"
python3 -c "import numpy as n; n.random.seed(3); n.random.rand(1,32,32,3).astype(n.float32).tofile('$TMP/in_input')"
ARGS=(--input_node input --input_shape 1,32,32,3 --output_node prob
      --output_shape 1,10 --input_file "$TMP/in")
for model in mini-a mini_b; do
  "$TMP/example_files" --model_name "$model" \
    --model_file "$LIB/model/$model.pb" \
    --model_data_file "$LIB/model/$model.data" "${ARGS[@]}" \
    --output_file "$TMP/files_$model" >/dev/null
done
CHECKS=$((CHECKS + 1))

# Graph and weights in code.
write_config code code
"$MACE" convert --config ../cfg/deploy.yml >/dev/null
for file in model/mini-lib.a include/mace/public/mace_engine_factory.h \
            include/mace/public/mini_a.h include/mace/public/mini_b.h \
            model/code/mini_a.cc model/code/mace_engine_factory.cc; do
  [[ -s "$LIB/$file" ]] || fail "build/mini-lib/$file was not written"
done
[[ ! -e "$LIB/model/mini-a.pb" && ! -e "$LIB/model/mini-a.data" ]] ||
  fail "code format left model files in model/"
"$CXX" -std=c++17 -O1 -DMACE_EXAMPLE_FROM_CODE "$EXAMPLE" -I "$LIB/include" \
  "$LIB/model/mini-lib.a" "$LIB/lib/libmace.a" "${LINK[@]}" \
  -o "$TMP/example_code"
for model in mini-a mini_b; do
  "$TMP/example_code" --model_name "$model" "${ARGS[@]}" \
    --output_file "$TMP/code_$model" >/dev/null
  cmp -s "$TMP/code_${model}_prob" "$TMP/files_${model}_prob" ||
    fail "$model from code differs from the model files"
done
"$TMP/example_code" --model_name nope "${ARGS[@]}" --output_file x \
  2>"$TMP/err" && fail "an unknown model name was accepted"
grep -q "no model 'nope' in this library" "$TMP/err" ||
  fail "unexpected error: $(cat "$TMP/err")"
CHECKS=$((CHECKS + 2))

# mace run --config runs and validates the code-format models too.
out="$("$MACE" run --config ../cfg/deploy.yml --validate --round 2 2>&1)" ||
  fail "run --config on the code format:\n$out"
[[ $(grep -c ' PASS$' <<<"$out") -eq 2 ]] || fail "not 2 PASS:\n$out"
CHECKS=$((CHECKS + 1))

# Graph in code, weights in a file the app loads.
write_config code file
"$MACE" convert --config ../cfg/deploy.yml >/dev/null
[[ -s "$LIB/model/mini_b.data" ]] || fail "model_data_format: file wrote no .data"
"$CXX" -std=c++17 -O1 -DMACE_EXAMPLE_FROM_CODE "$EXAMPLE" -I "$LIB/include" \
  "$LIB/model/mini-lib.a" "$LIB/lib/libmace.a" "${LINK[@]}" \
  -o "$TMP/example_code_file"
"$TMP/example_code_file" --model_name mini_b \
  --model_data_file "$LIB/model/mini_b.data" "${ARGS[@]}" \
  --output_file "$TMP/codefile_mini_b" >/dev/null
cmp -s "$TMP/codefile_mini_b_prob" "$TMP/files_mini_b_prob" ||
  fail "graph from code + weights from file differs from the model files"
CHECKS=$((CHECKS + 1))

# The outputs are the model's: they match `mace run` on the same input.
python3 -c "import numpy as n; n.save('$TMP/input.npy', n.fromfile('$TMP/in_input', n.float32).reshape(1,32,32,3))"
write_config file file
"$MACE" convert --config ../cfg/deploy.yml >/dev/null
"$MACE" run --model "$LIB/model/mini-a.pb" --data "$LIB/model/mini-a.data" \
  --input "input=$TMP/input.npy" --output-dir "$TMP/run" >/dev/null
python3 - "$TMP/run/prob.npy" "$TMP/code_mini-a_prob" <<'PY'
import sys, numpy as n
a = n.load(sys.argv[1]).ravel()
b = n.fromfile(sys.argv[2], n.float32)
assert n.allclose(a, b, rtol=1e-5, atol=1e-6), (a, b)
PY
CHECKS=$((CHECKS + 1))

echo "model_code_test: $CHECKS checks passed"
