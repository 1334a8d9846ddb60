#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test:
#   1. the Release build's CTest suite (unit, op, model, fuzz, tool tests);
#   2. the ONNX backend node tests through mace convert + mace run, and the
#      layout audit (scripts/layout_audit.py: Conv -> op -> Conv graphs of
#      common ops keep no layout transposes beyond the input's and output's);
#   3. the model zoo (generated once into ~/.cache/mace/zoo) converted,
#      run and validated against ONNX Runtime, fp32 and fp16 storage, and
#      two of its models deployed by a deployment file (scripts/deploy_zoo.sh);
#      scripts/compare_builds.py run once on one of them;
#   3b. TensorFlow models (Keras, generated once into ~/.cache/mace/tf_models)
#      converted and validated against TensorFlow's own outputs;
#   3c. Caffe nets (written by scripts/make_caffe_models.py) against OpenCV
#      DNN and NumPy references;
#   3d. the kernel, op and model tests cross-compiled for aarch64 and run
#      under qemu-aarch64 (scripts/test_aarch64.sh);
#   4. the model-corruption fuzz test and the loader/API tests again in an
#      AddressSanitizer + UndefinedBehaviorSanitizer build.
# Idempotent; fast when everything is built (ninja + ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so every clone (CI's
# fresh ones included) reuses the objects another clone compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"

bash scripts/install_deps.sh
bash scripts/install_python_deps.sh

# ---- aarch64: cross-compiled kernel, op and model tests under qemu-user --
# First, so that the CTest device test (tests/tools/device_run_test.sh)
# finds build-aarch64's libmace built.
echo "== aarch64 (g++-aarch64-linux-gnu, qemu-aarch64): kernel, op, model tests"
bash scripts/test_aarch64.sh build-aarch64

echo "== Release build and tests"
bash scripts/build.sh build
ctest --test-dir build -j2 --output-on-failure --timeout 600

echo "== ONNX backend node tests (conformance)"
bash scripts/onnx_conformance.sh build/bin/mace

echo "== ONNX layout audit (transposes left by the converter)"
python3 scripts/layout_audit.py --mace build/bin/mace

echo "== model zoo (14 networks built in code) against ONNX Runtime"
bash scripts/model_zoo.sh build/bin/mace

echo "== scripts/compare_builds.py on a zoo model (a build against itself)"
python3 scripts/compare_builds.py --mace a=build/bin/mace \
  --mace b=build/bin/mace --models squeezenet1_1 --processes 1 --rounds 2 \
  --top 2
# Bad arguments end in a usage error (exit 2): one build, two of one name,
# a path that is not an executable, thread counts that are not integers.
for bad in "--mace build/bin/mace" \
           "--mace a=build/bin/mace --mace a=build/bin/mace" \
           "--mace build/bin/mace --mace /nonexistent/mace" \
           "--mace build/bin/mace --mace build/bin/mace --threads one"; do
  status=0
  python3 scripts/compare_builds.py $bad 2>/dev/null || status=$?
  if [ "$status" -ne 2 ]; then
    echo "compare_builds.py $bad: exit $status, expected 2"; exit 1
  fi
done
# A model missing from the zoo: named, exit 1.
status=0
missing=$(python3 scripts/compare_builds.py --mace a=build/bin/mace \
  --mace b=build/bin/mace --models no_such_model) || status=$?
if [ "$status" -ne 1 ] || [[ "$missing" != *"no_such_model: not in the zoo"* ]]; then
  echo "compare_builds.py on a missing model: exit $status, '$missing'"; exit 1
fi

echo "== deployment file: two zoo models by config, as files and as code"
bash scripts/deploy_zoo.sh build/bin/mace

echo "== TensorFlow models (built with TensorFlow, frozen) against TensorFlow"
bash scripts/tf_models.sh build/bin/mace

echo "== Caffe nets (written by our script) against OpenCV DNN / NumPy"
bash scripts/caffe_models.sh build/bin/mace

echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
sanitized_tests=(fuzz_model_corruption_test fuzz_onnx_corruption_test
                 fuzz_tf_corruption_test fuzz_caffe_corruption_test
                 unit_model_loader_test unit_engine_api_test
                 unit_packed_weight_cache_test unit_packed_weight_arena_test
                 converter_onnx_frontend_test converter_tf_frontend_test
                 converter_caffe_frontend_test unit_net_in_place_split_test
                 unit_net_in_place_join_test unit_net_in_place_addend_test
                 unit_conv_kernels_test converter_onnx_fuzz_findings_test
                 unit_tensor_test unit_axis_taps_test unit_binary_channels_test
                 ops_detection_output_test ops_pointwise_depthwise_conv_2d_test)
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMACE_SANITIZE=ON >/dev/null
cmake --build build-asan -j"${MACE_BUILD_JOBS:-2}" \
  --target "${sanitized_tests[@]}"
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
regex="^($(IFS='|'; echo "${sanitized_tests[*]}"))\$"
ctest --test-dir build-asan -R "$regex" --output-on-failure --timeout 900
