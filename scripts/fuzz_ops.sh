#!/usr/bin/env bash
# Coverage-guided fuzzing of the ops' argument and shape checking:
# builds tests/fuzz/op_fuzzer.cc with clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs it. Each input is a model of one to
# three ops of any registered type (see the fuzzer's header); a crash,
# sanitizer report or a failure without a message stops the run and leaves
# the input in <build-dir>/fuzz/artifacts (timeouts and out-of-memory
# inputs are left there too, without stopping it).
#
#   scripts/fuzz_ops.sh [seconds] [build-dir]    (default: 600 build-fuzz)
#
# The corpus (<build-dir>/fuzz/corpus) is kept between runs, so a later run
# goes on from the coverage an earlier one reached. Replay an artifact, with
# the model it builds printed:
#   MACE_FUZZ_DUMP=1 build-fuzz/op_fuzzer build-fuzz/fuzz/artifacts/crash-...
# Not part of scripts/test.sh: the instrumented build alone takes 20-25
# minutes on 2 cores. Needs clang and libclang-rt-14-dev (Debian).
# Exit status: 0 when the run found nothing, else libFuzzer's.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-600}"
build_dir="${2:-build-fuzz}"

command -v clang++ >/dev/null ||
  { echo "fuzz_ops: clang++ missing (apt-get install clang)" >&2; exit 2; }

CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMACE_SANITIZE=ON -DMACE_FUZZERS=ON \
  -DMACE_BUILD_TESTS=OFF -DMACE_BUILD_TOOLS=OFF \
  -DMACE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build_dir" -j"${MACE_BUILD_JOBS:-2}" --target op_fuzzer

mkdir -p "$build_dir/fuzz/corpus" "$build_dir/fuzz/artifacts"
# Allocation failures are errors the engine must report, not crashes.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# Fork mode, so that a valid model too big for a quick run (an arena of
# gigabytes, which the load maps and prefaults) is set aside as a timeout
# or out-of-memory artifact while the run goes on; a crash still stops it.
"$build_dir/op_fuzzer" -fork=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -ignore_crashes=0 -max_total_time="$seconds" -max_len=512 -timeout=10 \
  -rss_limit_mb=8000 -artifact_prefix="$build_dir/fuzz/artifacts/" \
  "$build_dir/fuzz/corpus"
