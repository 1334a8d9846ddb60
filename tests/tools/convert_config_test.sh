#!/usr/bin/env bash
# End-to-end checks of `mace convert --config deploy.yml` on the bundled
# ONNX model (models/mini_cnn): the output tree, running the converted
# models, and errors that leave nothing behind.
# Usage: bash tests/tools/convert_config_test.sh <path-to-mace>
set -euo pipefail

source "$(dirname "$0")/test_lib.sh" "$@"
MODEL_DIR="$SRC/models/mini_cnn"

# The deployment file lives in its own folder with a copy of the model, so
# model_file_path is relative to it.
mkdir -p "$TMP/cfg/models" "$TMP/work"
cp "$MODEL_DIR/mini_cnn.onnx" "$TMP/cfg/models/"
SUM="$(sha256sum "$TMP/cfg/models/mini_cnn.onnx" | cut -d' ' -f1)"

# write_config OUTPUT_SHAPE CHECKSUM OUTPUT_TENSOR
write_config() {
  cat >"$TMP/cfg/deploy.yml" <<YAML
# two models from one ONNX file: NCHW as the source, and MACE's NHWC default
library_name: mini
target_abis: [host]
model_graph_format: file
model_data_format: file
models:
  mini_nchw:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    model_sha256_checksum: $2
    runtime: cpu
    data_type: fp32_fp32
    subgraphs:
      - input_tensors:
          - input
        input_shapes:
          - 1,3,32,32
        input_data_formats: NCHW
        output_tensors:
          - $3
        output_shapes:
          - $1
        output_data_formats: NCHW
  mini_nhwc:
    platform: onnx
    model_file_path: models/mini_cnn.onnx
    data_type: fp16_fp32
    input_tensors: input
    input_shapes: 1,32,32,3
    output_tensors: prob
    output_shapes: 1,10
YAML
}

# ---- a good file -------------------------------------------------------------
write_config "1,10" "$SUM" prob
cd "$TMP/work"
expect 0 "wrote build/mini/" "$MACE" convert --config ../cfg/deploy.yml
LIB="$TMP/work/build/mini"
for file in model/mini_nchw.pb model/mini_nchw.data model/mini_nhwc.pb \
            model/mini_nhwc.data include/mace/public/mace.h; do
  [[ -s "$LIB/$file" ]] || fail "build/mini/$file was not written"
done
cmp -s "$LIB/include/mace/public/mace.h" "$SRC/include/mace/public/mace.h" ||
  fail "mace.h is not a copy of include/mace/public/mace.h"
[[ -z "$(ls -A "$TMP/work/build" | grep -v '^mini$')" ]] ||
  fail "temporary files left in build/: $(ls -A "$TMP/work/build")"
CHECKS=$((CHECKS + 1))

# fp16 weights: the NHWC model's data is smaller.
[[ $(stat -c %s "$LIB/model/mini_nhwc.data") -lt \
   $(stat -c %s "$LIB/model/mini_nchw.data") ]] ||
  fail "data_type fp16_fp32 did not shrink the weights"

# the converted models run; the NCHW one matches the reference output.
expect 0 "latency_ms" "$MACE" run --model "$LIB/model/mini_nchw.pb" \
  --data "$LIB/model/mini_nchw.data" --input "input=$MODEL_DIR/input.npy" \
  --validate-outputs "prob=$MODEL_DIR/prob.npy" --output-dir "$TMP/out1"
[[ -s "$TMP/out1/prob.npy" ]] || fail "mace run wrote no prob.npy"
write_zeros_npy "$TMP/zeros_nhwc.npy" "(1, 32, 32, 3)" 3072
expect 0 "latency_ms" "$MACE" run --model "$LIB/model/mini_nhwc.pb" \
  --data "$LIB/model/mini_nhwc.data" --input "input=$TMP/zeros_nhwc.npy"
expect 0 "input.*\[1,32,32,3\]" "$MACE" info "$LIB/model/mini_nhwc.pb"

# the single-model flags share the conversion: the same bytes.
expect 0 "converted" "$MACE" convert --platform onnx \
  --model-file "$MODEL_DIR/mini_cnn.onnx" --name mini_nchw \
  --output-dir "$TMP/flags"
cmp -s "$TMP/flags/mini_nchw.pb" "$LIB/model/mini_nchw.pb" &&
  cmp -s "$TMP/flags/mini_nchw.data" "$LIB/model/mini_nchw.data" ||
  fail "--config and --model-file conversions differ"
expect 0 "is supported" "$MACE" convert --model-file \
  "$MODEL_DIR/mini_cnn.onnx" --check

# --output-dir roots the tree elsewhere.
expect 0 "wrote .*/elsewhere/build/mini/" "$MACE" convert \
  --config "$TMP/cfg/deploy.yml" --output-dir "$TMP/elsewhere"
[[ -s "$TMP/elsewhere/build/mini/model/mini_nhwc.pb" ]] ||
  fail "--output-dir was not used"

# ---- errors: exit 2, the line, and nothing written -----------------------------
rm -rf "$TMP/work/build"
expect_clean_error() {
  expect 2 "$1" "$MACE" convert --config ../cfg/deploy.yml
  [[ -z "$(ls -A "$TMP/work/build" 2>/dev/null)" ]] ||
    fail "an error left files: $(find "$TMP/work/build")"
}
write_config "1,10" "$(printf '%064d' 0)" prob
expect_clean_error "sha256 is $SUM, the deployment file says 0{64}, in \.\./cfg/deploy\.yml:10"
write_config "1,12" "$SUM" prob
expect_clean_error "output tensor 'prob' has shape \[1,10\], output_shapes says \[1,12\], in \.\./cfg/deploy\.yml:22"
write_config "1,10" "$SUM" probs
expect_clean_error "'probs' is not an output of the model; did you mean 'prob'\?, in \.\./cfg/deploy\.yml:20"
write_config "1,10" "$SUM" prob
sed -i 's/^    runtime: cpu$/    runtime: gpu/' "$TMP/cfg/deploy.yml"
expect_clean_error "runtime 'gpu' is not available in this build.*deploy\.yml:11"
write_config "1,10" "$SUM" prob
sed -i 's/^    data_type: fp32_fp32$/    dtype: fp32_fp32/' "$TMP/cfg/deploy.yml"
expect_clean_error "unknown key 'dtype'.*did you mean 'data_type'.*deploy\.yml:12"
# the second model fails: the first one is not written either.
write_config "1,10" "$SUM" prob
sed -i 's/^    output_tensors: prob$/    output_tensors: probz/' \
  "$TMP/cfg/deploy.yml"
expect_clean_error "model 'mini_nhwc': output tensor 'probz' is not an output.*deploy\.yml:30"
write_config "1,10" "$SUM" prob
sed -i 's/^          - input$/          - inptu/' "$TMP/cfg/deploy.yml"
expect_clean_error "model 'mini_nchw': input tensor 'inptu' is not an input of the model, in \.\./cfg/deploy\.yml:15"
write_config "1,10" "$SUM" prob
sed -i 's/^    input_tensors: input$/&\n    input_data_types: int32/' \
  "$TMP/cfg/deploy.yml"
expect_clean_error "input tensor 'input' is float32 in the model, input_data_types says int32, in \.\./cfg/deploy\.yml:28"
expect 2 "cannot open the deployment file" "$MACE" convert --config nope.yml
expect 2 "cannot be combined with --config" "$MACE" convert \
  --config ../cfg/deploy.yml --model-file x.onnx

echo "convert_config_test: $CHECKS checks passed"
