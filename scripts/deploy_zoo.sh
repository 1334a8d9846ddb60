#!/usr/bin/env bash
# The deployment workflow by config alone, on two zoo models (mobilenet_v1,
# and two_stream with two inputs): one deployment file; convert, run,
# validate against ONNX Runtime and benchmark, with the models as files and
# as code (a static library linked into examples/deploy/example.cc).
#
#   scripts/deploy_zoo.sh [MACE_BINARY]
#
# The zoo is generated first when missing (scripts/model_zoo.sh's cache,
# ${MACE_ZOO_DIR:-$HOME/.cache/mace/zoo}). Uses pip's python3 (numpy,
# onnxruntime) for the reference outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$PWD"
MACE="$(realpath "${1:-build/bin/mace}")"
ZOO="${MACE_ZOO_DIR:-$HOME/.cache/mace/zoo}"
for model in mobilenet_v1 two_stream; do
  if [[ ! -f "$ZOO/$model/model.onnx" ]]; then
    /usr/bin/python3 scripts/make_model_zoo.py --models "$model"
  fi
done
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

write_config() {  # FORMAT
  cat >deploy.yml <<YAML
library_name: zoo
target_abis: [host]
model_graph_format: $1
model_data_format: $1
models:
  mobilenet_v1:
    platform: onnx
    model_file_path: $ZOO/mobilenet_v1/model.onnx
    model_sha256_checksum: $(sha256sum "$ZOO/mobilenet_v1/model.onnx" | cut -d' ' -f1)
    runtime: cpu
    subgraphs:
      - input_tensors: input
        input_shapes: 1,224,224,3
        input_ranges: -1,1
        output_tensors: output
        output_shapes: 1,1000
    validation_threshold:
      CPU: 0.9999
  two_stream:
    platform: onnx
    model_file_path: $ZOO/two_stream/model.onnx
    model_sha256_checksum: $(sha256sum "$ZOO/two_stream/model.onnx" | cut -d' ' -f1)
    runtime: cpu
    subgraphs:
      - input_tensors:
          - input
          - features
        input_shapes:
          - 1,64,64,3
          - 1,16
        input_data_formats:
          - NHWC
          - NONE
        input_ranges:
          - -1,1
          - 0,2
        output_tensors: output
        output_shapes: 1,10
YAML
}

for format in file code; do
  echo "==== model_graph_format/model_data_format: $format"
  write_config "$format"
  "$MACE" convert --config deploy.yml
  "$MACE" run --config deploy.yml --validate --round 3 --num-threads 2 |
    tee run.log | grep -E "^====|latency_ms|PASS|FAIL"
  [[ $(grep -c ' PASS$' run.log) -eq 2 ]] || { echo "validation failed"; exit 1; }
  "$MACE" run --config deploy.yml --model-name mobilenet_v1 --benchmark \
    --round 3 --num-threads 1 >bench.log
  sed -n '/Stat by Op Type/,/^$/p' bench.log
  grep -Eq '^\| +Conv2D \|.* [0-9]*[1-9][0-9]*\.[0-9]+ \|' bench.log ||
    { echo "no GMACPS for Conv2D"; exit 1; }
done

# The code-format library linked into the example app.
c++ -std=c++17 -O1 -DMACE_EXAMPLE_FROM_CODE "$SRC/examples/deploy/example.cc" \
  -I build/zoo/include build/zoo/model/zoo.a build/zoo/lib/libmace.a \
  -lprotobuf-lite -pthread -o example
./example --model_name two_stream --input_node input,features \
  --input_shape 1,64,64,3:1,16 --output_node output --output_shape 1,10 \
  --output_file out
echo "deploy_zoo: file and code formats converted, ran, validated and benchmarked"
