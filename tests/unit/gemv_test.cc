// The matrix-vector kernel against float64 sums, with row lengths around
// the 8-lane unrolling and thread counts that split the rows.

#include "mace/kernels/gemv.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/reference.h"

namespace mace {
namespace kernels {
namespace {

void ExpectMatchesReference(int64_t n, int64_t k, bool with_bias,
                            int threads) {
  const std::vector<float> w = test::RandomFloats(n * k, -1.0f, 1.0f, 11 + k);
  const std::vector<float> x = test::RandomFloats(k, -1.0f, 1.0f, 13 + n);
  const std::vector<float> bias = test::RandomFloats(n, -1.0f, 1.0f, 17);
  std::vector<float> y(n, -99.0f);
  ThreadPool pool(threads, AFFINITY_NONE);
  Gemv(w.data(), x.data(), with_bias ? bias.data() : nullptr, n, k, y.data(),
       &pool);
  for (int64_t o = 0; o < n; ++o) {
    double sum = with_bias ? bias[o] : 0.0, magnitude = 0.0;
    for (int64_t i = 0; i < k; ++i) {
      sum += static_cast<double>(w[o * k + i]) * x[i];
      magnitude += std::fabs(static_cast<double>(w[o * k + i]) * x[i]);
    }
    EXPECT_NEAR(y[o], sum, 1e-6 * (magnitude + 1.0))
        << "n=" << n << " k=" << k << " o=" << o;
  }
}

TEST(GemvTest, MatchesFloat64OnOddSizes) {
  for (int64_t k : {1, 7, 8, 9, 17, 1024, 1031}) {
    for (int64_t n : {1, 5, 1000}) {
      ExpectMatchesReference(n, k, true, 1);
    }
  }
  ExpectMatchesReference(13, 33, false, 1);
}

TEST(GemvTest, ThreadsGiveTheSameBits) {
  const int64_t n = 257, k = 515;
  const std::vector<float> w = test::RandomFloats(n * k, -1.0f, 1.0f, 3);
  const std::vector<float> x = test::RandomFloats(k, -1.0f, 1.0f, 5);
  std::vector<float> one(n), two(n);
  ThreadPool pool1(1, AFFINITY_NONE), pool2(2, AFFINITY_NONE);
  Gemv(w.data(), x.data(), nullptr, n, k, one.data(), &pool1);
  Gemv(w.data(), x.data(), nullptr, n, k, two.data(), &pool2);
  EXPECT_EQ(one, two);
  ExpectMatchesReference(n, k, true, 2);
}

}  // namespace
}  // namespace kernels
}  // namespace mace
