// libFuzzer's entry point for every fuzzer of tests/fuzz: each defines
// mace::fuzz::FuzzOneInput.

#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  return mace::fuzz::FuzzOneInput(bytes, size);
}
