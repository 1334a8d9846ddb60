// The tap tables of windowed and transposed-window ops (pooling, the
// reference convolutions, Deconv2D) against their definition, walked over
// every output and kernel index; and a wide kernel over a narrow input,
// whose table costs its few taps, not outputs x kernel.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>

#include "mace/ops/common/conv_util.h"

namespace mace {
namespace {

struct Axis {
  int64_t out, in, kernel, stride, dilation, pad_begin;
};

AxisTaps WindowTapsByDefinition(const Axis &a) {
  AxisTaps taps;
  taps.begin.push_back(0);
  for (int64_t o = 0; o < a.out; ++o) {
    for (int64_t k = 0; k < a.kernel; ++k) {
      const int64_t i = o * a.stride - a.pad_begin + k * a.dilation;
      if (i >= 0 && i < a.in) {
        taps.input.push_back(i);
        taps.kernel.push_back(k);
      }
    }
    taps.begin.push_back(static_cast<int64_t>(taps.input.size()));
  }
  return taps;
}

AxisTaps TransposedTapsByDefinition(const Axis &a) {
  AxisTaps taps;
  taps.begin.push_back(0);
  for (int64_t o = 0; o < a.out; ++o) {
    for (int64_t k = 0; k < a.kernel; ++k) {  // the order sums are taken in
      for (int64_t i = 0; i < a.in; ++i) {
        if (i * a.stride + k * a.dilation == o + a.pad_begin) {
          taps.input.push_back(i);
          taps.kernel.push_back(k);
        }
      }
    }
    taps.begin.push_back(static_cast<int64_t>(taps.input.size()));
  }
  return taps;
}

void ExpectSameTaps(const AxisTaps &expected, const AxisTaps &actual,
                    const Axis &a) {
  SCOPED_TRACE(testing::Message()
               << "out " << a.out << " in " << a.in << " kernel " << a.kernel
               << " stride " << a.stride << " dilation " << a.dilation
               << " pad " << a.pad_begin);
  EXPECT_EQ(expected.begin, actual.begin);
  EXPECT_EQ(expected.input, actual.input);
  EXPECT_EQ(expected.kernel, actual.kernel);
}

Axis RandomAxis(std::mt19937 *rng) {
  auto draw = [rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(*rng);
  };
  // Pads beyond the kernel and negative ones (cropping) included.
  return {draw(1, 13), draw(1, 11), draw(1, 7), draw(1, 4), draw(1, 3),
          draw(-3, 9)};
}

TEST(AxisTapsTest, WindowTapsMatchTheDefinition) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const Axis a = RandomAxis(&rng);
    AxisTaps taps;
    BuildWindowTaps(a.out, a.in, a.kernel, a.stride, a.dilation, a.pad_begin,
                    &taps);
    ExpectSameTaps(WindowTapsByDefinition(a), taps, a);
    if (HasFailure()) return;
  }
}

TEST(AxisTapsTest, TransposedTapsMatchTheDefinition) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    const Axis a = RandomAxis(&rng);
    AxisTaps taps;
    BuildTransposedTaps(a.out, a.in, a.kernel, a.stride, a.dilation,
                        a.pad_begin, &taps);
    ExpectSameTaps(TransposedTapsByDefinition(a), taps, a);
    if (HasFailure()) return;
  }
}

// A fuzzed ConvTranspose: a 52634-wide kernel over 2 inputs. Walking every
// output and kernel index took seconds (2.8e9 steps); the table holds
// 2 x 52634 taps.
TEST(AxisTapsTest, WideKernelOverNarrowInputCostsItsTaps) {
  const int64_t in = 2, kernel = 52634, out = in - 1 + kernel;
  const auto start = std::chrono::steady_clock::now();
  AxisTaps transposed, window;
  BuildTransposedTaps(out, in, kernel, 1, 1, 0, &transposed);
  // The same kernel as a forward window over the input padded by it.
  BuildWindowTaps(out, in, kernel, 1, 1, kernel - 1, &window);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  EXPECT_EQ(transposed.input.size(), static_cast<size_t>(in * kernel));
  EXPECT_EQ(window.input.size(), static_cast<size_t>(in * kernel));
  // Generous for a sanitizer build on a loaded machine: microseconds of
  // work against seconds before.
  EXPECT_LT(seconds, 0.5);
}

}  // namespace
}  // namespace mace
