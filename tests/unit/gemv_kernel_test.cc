// The matrix-vector kernel of every ISA this machine runs against float64
// sums: row counts around the 4-row block (1, 3, 4, 5, 17, 1000), lengths
// around the vector widths (1, 7, 15, 16, 17, 33) and MobileNet v2's 1280,
// with and without bias, on the caller's thread and on 2 threads. A row's
// result must not depend on the threads or on whether it falls in a block.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "mace/kernels/gemv.h"
#include "tests/common/kernel_test_util.h"
#include "tests/common/reference.h"

namespace mace {
namespace kernels {
namespace {

using test::StartPool;

struct Problem {
  int64_t n, k;
  std::vector<float> w, x, bias;
};

Problem MakeProblem(int64_t n, int64_t k) {
  const uint32_t seed = static_cast<uint32_t>(n * 7919 + k);
  return {n, k, test::RandomFloats(n * k, -1.0f, 1.0f, seed),
          test::RandomFloats(k, -1.0f, 1.0f, seed + 1),
          test::RandomFloats(n, -1.0f, 1.0f, seed + 2)};
}

// Compares y with float64 sums, allowing 1e-5 of sum |w[o, i] x[i]|.
void ExpectMatchesFloat64(const Problem &p, bool with_bias,
                          const std::vector<float> &y,
                          const std::string &what) {
  int failures = 0;
  for (int64_t o = 0; o < p.n && failures < 5; ++o) {
    double sum = with_bias ? p.bias[o] : 0.0;
    double magnitude = std::fabs(sum);
    for (int64_t i = 0; i < p.k; ++i) {
      const double product = static_cast<double>(p.w[o * p.k + i]) * p.x[i];
      sum += product;
      magnitude += std::fabs(product);
    }
    if (!(std::fabs(y[o] - sum) <= 1e-5 * magnitude)) {
      ADD_FAILURE() << what << " row " << o << ": " << y[o] << " vs " << sum;
      ++failures;
    }
  }
}

TEST(GemvKernelTest, EveryIsaMatchesFloat64SumsOnOddShapes) {
  const std::unique_ptr<ThreadPool> pool = StartPool(2);
  for (int64_t n : {1, 3, 4, 5, 17, 1000}) {
    for (int64_t k : {1, 7, 15, 16, 17, 33, 1280}) {
      const Problem p = MakeProblem(n, k);
      for (VectorIsa isa : AvailableVectorIsas()) {
        for (bool with_bias : {false, true}) {
          std::vector<float> alone(n, std::nanf("")), shared(n, std::nanf(""));
          const float *bias = with_bias ? p.bias.data() : nullptr;
          Gemv(isa, p.w.data(), p.x.data(), bias, n, k, alone.data(), nullptr);
          Gemv(isa, p.w.data(), p.x.data(), bias, n, k, shared.data(),
               pool.get());
          const std::string what =
              std::string(VectorIsaName(isa)) + " n=" + std::to_string(n) +
              " k=" + std::to_string(k) + (with_bias ? " bias" : " no bias");
          ExpectMatchesFloat64(p, with_bias, alone, what + " no pool");
          EXPECT_EQ(alone, shared) << what << ": 2 threads changed the bits";
        }
      }
    }
  }
}

// Rows 0-3 go through the 4-row block, row 4 alone; each must equal the
// same row computed as a one-row product.
TEST(GemvKernelTest, RowResultDoesNotDependOnItsBlock) {
  const Problem p = MakeProblem(5, 1280 + 5);
  for (VectorIsa isa : AvailableVectorIsas()) {
    std::vector<float> all(p.n);
    Gemv(isa, p.w.data(), p.x.data(), p.bias.data(), p.n, p.k, all.data(),
         nullptr);
    for (int64_t o = 0; o < p.n; ++o) {
      float one = 0.0f;
      Gemv(isa, p.w.data() + o * p.k, p.x.data(), p.bias.data() + o, 1, p.k,
           &one, nullptr);
      EXPECT_EQ(all[o], one) << VectorIsaName(isa) << " row " << o;
    }
  }
}

TEST(GemvKernelTest, EmptyRowsGiveTheBias) {
  const std::vector<float> bias = {1.5f, -2.0f, 0.25f, 3.0f, -7.0f};
  for (VectorIsa isa : AvailableVectorIsas()) {
    std::vector<float> y(bias.size(), std::nanf(""));
    Gemv(isa, nullptr, nullptr, bias.data(), 5, 0, y.data(), nullptr);
    EXPECT_EQ(y, bias) << VectorIsaName(isa);
    Gemv(isa, nullptr, nullptr, nullptr, 0, 16, nullptr, nullptr);
  }
}

// The overload without an ISA runs the selected one.
TEST(GemvKernelTest, DefaultOverloadUsesTheSelectedIsa) {
  const Problem p = MakeProblem(17, 33);
  const std::unique_ptr<ThreadPool> pool = StartPool(2);
  for (VectorIsa isa : AvailableVectorIsas()) {
    ASSERT_TRUE(SetVectorIsaForTesting(isa));
    std::vector<float> selected(p.n), forced(p.n);
    Gemv(p.w.data(), p.x.data(), p.bias.data(), p.n, p.k, selected.data(),
         pool.get());
    Gemv(isa, p.w.data(), p.x.data(), p.bias.data(), p.n, p.k, forced.data(),
         nullptr);
    EXPECT_EQ(selected, forced) << VectorIsaName(isa);
  }
  SetVectorIsaForTesting(AvailableVectorIsas().back());
}

}  // namespace
}  // namespace kernels
}  // namespace mace
