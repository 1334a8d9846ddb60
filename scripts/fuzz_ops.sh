#!/usr/bin/env bash
# Coverage-guided fuzzing with clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer, of one of these targets:
# - ops (tests/fuzz/op_fuzzer.cc): the ops' argument and shape checking;
#   each input is a model of one to three ops of any registered type;
# - onnx (tests/fuzz/onnx_fuzzer.cc): the ONNX converter, then the engine
#   on what it converts; each input is an ONNX model of one to four nodes;
# - caffe (tests/fuzz/caffe_fuzzer.cc): the same for Caffe, each input a
#   .prototxt of one to four layers and its .caffemodel;
# - tf (tests/fuzz/tf_fuzzer.cc): the same for TensorFlow, each input a
#   frozen GraphDef of one to four nodes besides its inputs and constants.
# See each fuzzer's header for what it builds and what counts as a bug. A
# crash, sanitizer report or a failure without a message stops the run and
# leaves the input in <build-dir>/fuzz/<target>/artifacts (timeouts and
# out-of-memory inputs are left there too, without stopping it).
#
#   scripts/fuzz_ops.sh [seconds] [build-dir] [ops|onnx|caffe|tf]
#                                       (default: 600 build-fuzz ops)
#
# The corpus (<build-dir>/fuzz/<target>/corpus) is kept between runs, so a
# later run goes on from the coverage an earlier one reached. Replay an
# artifact, with the model it builds written out:
#   MACE_FUZZ_DUMP=1 build-fuzz/op_fuzzer ARTIFACT          (printed)
#   MACE_FUZZ_DUMP=m.onnx build-fuzz/onnx_fuzzer ARTIFACT   (an ONNX file)
#   MACE_FUZZ_DUMP=1 build-fuzz/caffe_fuzzer ARTIFACT       (the prototxt)
#   MACE_FUZZ_DUMP=m.pb build-fuzz/tf_fuzzer ARTIFACT       (a GraphDef)
# Not part of scripts/test.sh: the instrumented build alone takes 20-25
# minutes on 2 cores. Needs clang and libclang-rt-14-dev (Debian).
# Exit status: 0 when the run found nothing, else libFuzzer's.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-600}"
build_dir="${2:-build-fuzz}"
case "${3:-ops}" in
  ops) target=op_fuzzer ;;
  onnx) target=onnx_fuzzer ;;
  caffe) target=caffe_fuzzer ;;
  tf) target=tf_fuzzer ;;
  *) echo "fuzz_ops: target '${3}' should be ops, onnx, caffe or tf" >&2
     exit 2 ;;
esac

command -v clang++ >/dev/null ||
  { echo "fuzz_ops: clang++ missing (apt-get install clang)" >&2; exit 2; }

CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMACE_SANITIZE=ON -DMACE_FUZZERS=ON \
  -DMACE_BUILD_TESTS=OFF -DMACE_BUILD_TOOLS=OFF \
  -DMACE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build_dir" -j"${MACE_BUILD_JOBS:-2}" --target "$target"

work="$build_dir/fuzz/$target"
mkdir -p "$work/corpus" "$work/artifacts"
# Allocation failures are errors the engine must report, not crashes.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# Fork mode, so that a valid model too big for a quick run (an arena of
# gigabytes, which the load maps and prefaults) is set aside as a timeout
# or out-of-memory artifact while the run goes on; a crash still stops it.
"$build_dir/$target" -fork=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -ignore_crashes=0 -max_total_time="$seconds" -max_len=1024 -timeout=10 \
  -rss_limit_mb=8000 -artifact_prefix="$work/artifacts/" "$work/corpus"
