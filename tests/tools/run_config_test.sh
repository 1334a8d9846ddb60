#!/usr/bin/env bash
# End-to-end checks of `mace run --config deploy.yml` on the bundled ONNX
# model (models/mini_cnn): runs by config alone, validation against ONNX
# Runtime (scripts/reference_outputs.py, pip's python3) and against the
# file's validation data, --benchmark, model selection and errors.
# Usage: bash tests/tools/run_config_test.sh <path-to-mace>
set -euo pipefail

source "$(dirname "$0")/test_lib.sh" "$@"
MODEL_DIR="$SRC/models/mini_cnn"

mkdir -p "$TMP/cfg/models" "$TMP/work"
cp "$MODEL_DIR/mini_cnn.onnx" "$MODEL_DIR/input.npy" "$MODEL_DIR/prob.npy" \
  "$TMP/cfg/models/"
cat >"$TMP/cfg/deploy.yml" <<'YAML'
library_name: mini
target_abis: [host]
model_graph_format: file
model_data_format: file
models:
  mini_nchw:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    subgraphs:
      - input_tensors: input
        input_shapes: 1,3,32,32
        input_data_formats: NCHW
        input_ranges: 0,1
        output_tensors: prob
        output_data_formats: NCHW
  mini_nhwc:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    input_tensors: input
    input_shapes: 1,32,32,3
    output_tensors: prob
    validation_threshold:
      CPU: 0.9999
  mini_given:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    input_tensors: input
    input_shapes: 1,3,32,32
    input_data_formats: NCHW
    output_tensors: prob
    output_data_formats: NCHW
    validation_inputs_data: models/input.npy
    validation_outputs_data: models/prob.npy
  mini_obfuscated:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    obfuscate: 1
    winograd: 2
    input_tensors: input
    input_shapes: 1,32,32,3
    output_tensors: prob
YAML
cd "$TMP/work"

expect 2 "does not exist: convert first with .mace convert --config" \
  "$MACE" run --config ../cfg/deploy.yml
expect 0 "wrote build/mini/" "$MACE" convert --config ../cfg/deploy.yml

# Every model runs and validates against ONNX Runtime on the same (random,
# NHWC for mini_nhwc) inputs, or against the file's validation data.
out="$("$MACE" run --config ../cfg/deploy.yml --validate --round 2 \
  --output-dir "$TMP/out" 2>&1)" || fail "run --config --validate:\n$out"
[[ $(grep -c ' PASS$' <<<"$out") -eq 4 ]] || fail "not 4 PASS:\n$out"
grep -q "pass iff cosine > 0.9999" <<<"$out" ||
  fail "mini_nhwc's validation_threshold was not used:\n$out"
for model in mini_nchw mini_nhwc mini_given; do
  [[ -s "$TMP/out/$model/prob.npy" ]] || fail "no $TMP/out/$model/prob.npy"
done
cmp -s "$TMP/out/mini_given/prob.npy" "$TMP/out/mini_nchw/prob.npy" &&
  fail "validation_inputs_data was not fed"
CHECKS=$((CHECKS + 1))

# obfuscate: no source node name is left in the graph, I/O names are.
graph="$(tr -c '[:print:]' ' ' <build/mini/model/mini_obfuscated.pb)"
for word in conv1 relu6 residual softmax; do
  grep -q "$word" <<<"$graph" && fail "obfuscated graph mentions '$word'"
done
grep -q input <<<"$graph" && grep -q prob <<<"$graph" ||
  fail "obfuscation renamed the model's inputs or outputs"
grep -q "$word" <<<"$(tr -c '[:print:]' ' ' <build/mini/model/mini_nhwc.pb)" ||
  fail "the plain graph should mention '$word'"
CHECKS=$((CHECKS + 1))

# A wrong reference fails with exit 1.
cp "$MODEL_DIR/prob.npy" "$TMP/cfg/models/prob.npy.bak"
python3 -c "import numpy as n; a=n.load('$MODEL_DIR/prob.npy'); n.save('$TMP/cfg/models/prob.npy', a[:, ::-1].copy())"
expect 1 "validation failed" "$MACE" run --config ../cfg/deploy.yml \
  --model_name mini_given --validate
mv "$TMP/cfg/models/prob.npy.bak" "$TMP/cfg/models/prob.npy"

# --model-name picks one; --input-dir feeds inputs; --benchmark reports.
python3 -c "import numpy as n; n.save('$TMP/input.npy', n.zeros((1,32,32,3), n.float32))"
expect 0 "==== model 'mini_nhwc'" "$MACE" run --config ../cfg/deploy.yml \
  --model-name mini_nhwc --input-dir "$TMP" --validate \
  --output-dir "$TMP/zeros"
python3 - "$TMP/zeros/mini_nhwc/prob.npy" "$TMP/out/mini_nhwc/prob.npy" <<'PY'
import sys, numpy as n
assert not n.allclose(n.load(sys.argv[1]), n.load(sys.argv[2])), "--input-dir ignored"
PY
expect 0 "Stat by MACs" "$MACE" run --config ../cfg/deploy.yml \
  --model-name mini_nchw --benchmark --round 2 --num-threads 1

# check_tensors / check_shapes validate intermediate tensors; --layers
# bisects for the first tensor that drifts (fp16 weights against an
# extreme threshold drift from the first convolution on).
cat >../cfg/check.yml <<'YAML'
library_name: check
models:
  mini_check:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    input_tensors: input
    input_shapes: 1,32,32,3
    output_tensors: prob
    check_tensors: [c1, d1r]
    check_shapes: ['1,16,16,16', '1,16,16,16']
  mini_drift:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    data_type: fp16_fp32
    input_tensors: input
    input_shapes: 1,32,32,3
    output_tensors: prob
    validation_threshold:
      CPU: 0.99999999
YAML
"$MACE" convert --config ../cfg/check.yml >/dev/null
out="$("$MACE" run --config ../cfg/check.yml --model-name mini_check \
  --validate 2>&1)" || fail "check_tensors:\n$out"
grep -Eq '^  c1 +\[1,16,16,16\] +1\.0+ .* PASS$' <<<"$out" &&
  grep -Eq '^  d1r +\[1,16,16,16\] .* PASS$' <<<"$out" ||
  fail "check_tensors were not validated:\n$out"
sed -i "s/check_shapes: \['1,16,16,16'/check_shapes: ['1,16,16,15'/" ../cfg/check.yml
expect 2 "check tensor 'c1' has shape \[1,16,16,16\], check_shapes says \[1,16,16,15\]" \
  "$MACE" run --config ../cfg/check.yml --model-name mini_check --validate
expect 1 "layers: first drifting tensor 'c1' \(Conv node 'conv1', in mace op Conv2D 'conv1 \(\+ bn1, relu1\)'\)" "$MACE" run \
  --config ../cfg/check.yml --model-name mini_drift --layers
expect 0 "layers: no drift found up to the last tensor" "$MACE" run \
  --config ../cfg/check.yml --model-name mini_check --layers

# Errors.
expect 2 "'mini' is not a model of ../cfg/deploy.yml; did you mean" \
  "$MACE" run --config ../cfg/deploy.yml --model-name mini
expect 2 "--model cannot be combined with --config" "$MACE" run \
  --config ../cfg/deploy.yml --model x.pb
expect 2 "--validate needs --config" "$MACE" run --model x.pb --validate
expect 2 "cannot open the deployment file" "$MACE" run --config nope.yml

echo "run_config_test: $CHECKS checks passed"
