#!/usr/bin/env bash
# The main job on a fresh machine: install what is needed, build, convert
# the bundled ONNX model, run it (latency and outputs) and validate it
# against ONNX Runtime's output, which is bundled beside it
# (models/mini_cnn, written by scripts/make_bundled_model.py).
# Idempotent; fast when everything is built.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install_deps.sh
echo "== build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"${MACE_BUILD_JOBS:-2}" --target mace

model_dir=models/mini_cnn
out_dir=build/quickstart
echo "== convert $model_dir/mini_cnn.onnx"
build/bin/mace convert --platform onnx --model-file "$model_dir/mini_cnn.onnx" \
  --output-dir "$out_dir" --name mini_cnn
echo "== run and validate against ONNX Runtime"
build/bin/mace run --model "$out_dir/mini_cnn.pb" --data "$out_dir/mini_cnn.data" \
  --input "input=$model_dir/input.npy" --round 20 \
  --output-dir "$out_dir/outputs" \
  --validate-outputs "prob=$model_dir/prob.npy"
