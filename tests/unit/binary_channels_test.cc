// The binary Eltwise vector kernels of every ISA this machine runs against
// plain float loops, bit for bit: operands of one shape and a repeated
// per-channel operand on either side, periods that are not multiples of any
// vector width, one row and many, 1 and 2 threads, in place. Then the
// Eltwise op on the shapes that take the kernels and on one that does not.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mace/kernels/binary_channels.h"
#include "tests/common/kernel_test_util.h"
#include "tests/common/op_tester.h"

namespace mace {
namespace kernels {
namespace {

using test::StartPool;

std::vector<float> RandomValues(int64_t n, std::mt19937 *rng) {
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (float &x : v) x = dist(*rng);
  return v;
}

float Apply(BinaryKind kind, float p, float q) {
  switch (kind) {
    case BinaryKind::kSum: return p + q;
    case BinaryKind::kSub: return p - q;
    case BinaryKind::kProd: return p * q;
    case BinaryKind::kDiv: return p / q;
  }
  return NAN;
}

TEST(BinaryChannelsTest, EveryIsaMatchesTheScalarLoopBitForBit) {
  std::mt19937 rng(20261128);
  auto pool2 = StartPool(2);
  for (BinaryKind kind : {BinaryKind::kSum, BinaryKind::kSub,
                          BinaryKind::kProd, BinaryKind::kDiv}) {
    for (int64_t period : {1, 3, 8, 17, 33, 100}) {
      for (int64_t rows : {1, 5, 300}) {
        // period == n: one shape; else the repeated operand per row.
        for (bool one_shape : {false, true}) {
          for (bool repeated_first : {false, true}) {
            const int64_t n = period * rows;
            const int64_t b_count = one_shape ? n : period;
            const std::vector<float> a = RandomValues(n, &rng);
            const std::vector<float> b = RandomValues(b_count, &rng);
            std::vector<float> want(n);
            for (int64_t i = 0; i < n; ++i) {
              const float r = b[i % b_count];
              want[i] = repeated_first ? Apply(kind, r, a[i])
                                       : Apply(kind, a[i], r);
            }
            for (VectorIsa isa : AvailableVectorIsas()) {
              const std::string what =
                  std::string(VectorIsaName(isa)) +
                  " kind=" + std::to_string(static_cast<int>(kind)) +
                  " period=" + std::to_string(b_count) +
                  " n=" + std::to_string(n) +
                  (repeated_first ? " repeated first" : "");
              std::vector<float> y(n, NAN);
              BinaryChannels(isa, kind, a.data(), b.data(), b_count,
                             repeated_first, y.data(), n, nullptr);
              ASSERT_EQ(0, std::memcmp(y.data(), want.data(),
                                       n * sizeof(float)))
                  << what;
              std::vector<float> in_place = a;
              BinaryChannels(isa, kind, in_place.data(), b.data(), b_count,
                             repeated_first, in_place.data(), n, pool2.get());
              ASSERT_EQ(0, std::memcmp(in_place.data(), want.data(),
                                       n * sizeof(float)))
                  << what << ": in place on 2 threads";
            }
          }
        }
      }
    }
  }
}

// The op: x [1, 5, 7, 19] with y of its shape, per channel [19] on either
// side, and per pixel [1, 5, 7, 1] (the broadcast loops), against the
// scalar results.
TEST(BinaryChannelsTest, EltwiseOpTakesTheKernelsOnTheirShapes) {
  std::mt19937 rng(7);
  const std::vector<int64_t> x_shape = {1, 5, 7, 19};
  const std::vector<float> x = RandomValues(5 * 7 * 19, &rng);
  struct Case {
    std::vector<int64_t> other;
    bool other_first;
  };
  for (const Case &c : {Case{{1, 5, 7, 19}, false}, Case{{19}, false},
                        Case{{19}, true}, Case{{1, 5, 7, 1}, false}}) {
    int64_t count = 1;
    for (int64_t d : c.other) count *= d;
    const std::vector<float> other = RandomValues(count, &rng);
    for (int type : {0, 1, 2, 3}) {
      test::OpTester op("Eltwise");
      op.Arg("type", type).Threads(2);
      if (c.other_first) {
        op.Input("b", c.other, other).Input("x", x_shape, x);
      } else {
        op.Input("x", x_shape, x).Input("b", c.other, other);
      }
      op.Output("y");
      ASSERT_EQ(op.Run(), MaceStatus::MACE_SUCCESS);
      const std::vector<float> &y = op.output(0).floats;
      ASSERT_EQ(y.size(), x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        const size_t j = count == static_cast<int64_t>(x.size()) ? i
                         : count == 19                            ? i % 19
                                                                  : i / 19;
        const BinaryKind kind = static_cast<BinaryKind>(type);
        const float want = c.other_first ? Apply(kind, other[j], x[i])
                                         : Apply(kind, x[i], other[j]);
        ASSERT_EQ(y[i], want) << "type " << type << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mace
