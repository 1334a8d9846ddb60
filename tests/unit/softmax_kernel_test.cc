// The softmax and log-softmax kernels of every ISA this machine runs,
// against a float64 softmax written from the definition: lines of 1, 3, 7,
// 15, 16, 17, 33 and 1000 values (around every vector width), contiguous
// (axis last) and strided (axis not last, with 2 .. 33 neighbouring lines),
// on 1 and 2 threads, in place; large inputs (+-80, and around 1000, whose
// exp overflows float without the max subtraction), -inf inputs (exactly 0
// out, -inf for log-softmax), and a line of NaN / +inf staying NaN. Then
// the Softmax op under every ISA.
//
// Tolerance: the float subtraction x - max rounds to half an ulp of
// |x - max|, which exp turns into a relative error of |x - max| * 2^-24;
// on top of that a few ulp from exp (Cephes' polynomial or the C
// library's), the float sum and the division.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mace/kernels/softmax.h"
#include "tests/common/kernel_test_util.h"
#include "tests/common/op_tester.h"

namespace mace {
namespace kernels {
namespace {

using test::StartPool;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> RandomVector(int64_t count, float low, float high,
                                std::mt19937 *rng) {
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> v(count);
  for (float &x : v) x = dist(*rng);
  return v;
}

std::string ShapeName(const SoftmaxShape &s) {
  return "outer=" + std::to_string(s.outer) +
         " length=" + std::to_string(s.length) +
         " inner=" + std::to_string(s.inner);
}

// Checks y against float64 softmax (or log-softmax) of x; reports at most
// three mismatches. Returns the largest error relative to the tolerance.
double ExpectMatchesReference(bool log, const SoftmaxShape &s,
                              const std::vector<float> &x,
                              const std::vector<float> &y,
                              const std::string &what) {
  int failures = 0;
  double worst = 0.0;
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t j) { return (o * s.length + j) * s.inner + i; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < s.length; ++j)
        max = std::max<double>(max, x[at(j)]);
      double sum = 0.0;
      for (int64_t j = 0; j < s.length; ++j) sum += std::exp(x[at(j)] - max);
      for (int64_t j = 0; j < s.length; ++j) {
        const double d = x[at(j)] - max;
        const double got = y[at(j)];
        bool ok = false;
        double error = 0.0;
        double tolerance = 0.0;
        if (std::isinf(d)) {  // a -inf input
          ok = log ? got == -kInf : got == 0.0;
        } else {
          const double want = log ? d - std::log(sum) : std::exp(d) / sum;
          tolerance = log ? 2e-6 + 1.2e-7 * std::fabs(want)
                          : (2e-6 + 6e-8 * std::fabs(d)) * want + 1e-37;
          error = std::fabs(got - want);
          ok = error <= tolerance;
          worst = std::max(worst, error / tolerance);
        }
        if (!ok && ++failures <= 3) {
          ADD_FAILURE() << what << " at o=" << o << " j=" << j << " i=" << i
                        << ": x=" << x[at(j)] << " got " << got << ", error "
                        << error << " > " << tolerance;
        }
      }
    }
  }
  return worst;
}

// Every ISA, 1 and 2 threads, out of place and in place.
void CheckEveryIsa(const SoftmaxShape &s, const std::vector<float> &x,
                   const std::string &what) {
  static const auto pool1 = StartPool(1);
  static const auto pool2 = StartPool(2);
  for (VectorIsa isa : AvailableVectorIsas()) {
    for (bool log : {false, true}) {
      for (ThreadPool *pool : {pool1.get(), pool2.get()}) {
        const std::string where =
            what + " " + VectorIsaName(isa) + (log ? " log" : "") +
            " threads=" + std::to_string(pool->num_threads()) + " " +
            ShapeName(s);
        std::vector<float> y(x.size(), NAN);
        Softmax(isa, log, s, x.data(), y.data(), pool);
        ExpectMatchesReference(log, s, x, y, where);
        std::vector<float> in_place = x;
        Softmax(isa, log, s, in_place.data(), in_place.data(), pool);
        ASSERT_EQ(in_place, y) << where << ": in place differs";
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

const int64_t kLengths[] = {1, 3, 7, 15, 16, 17, 33, 1000};

TEST(SoftmaxKernelTest, ContiguousLinesMatchFloat64OnEveryIsa) {
  std::mt19937 rng(20261121);
  for (int64_t length : kLengths) {
    for (int64_t outer : {1, 5}) {
      const SoftmaxShape s{outer, length, 1};
      CheckEveryIsa(s, RandomVector(outer * length, -5.0f, 5.0f, &rng),
                    "uniform(-5, 5)");
      if (HasFailure()) return;
    }
  }
}

TEST(SoftmaxKernelTest, StridedLinesMatchFloat64OnEveryIsa) {
  std::mt19937 rng(7);
  for (int64_t inner : {2, 3, 7, 15, 16, 17, 33}) {
    for (int64_t length : kLengths) {
      if (length == 1000 && inner > 17) continue;  // keeps the test fast
      const SoftmaxShape s{2, length, inner};
      CheckEveryIsa(s, RandomVector(2 * length * inner, -5.0f, 5.0f, &rng),
                    "uniform(-5, 5)");
      if (HasFailure()) return;
    }
  }
}

TEST(SoftmaxKernelTest, LargeInputsDoNotOverflow) {
  std::mt19937 rng(11);
  for (int64_t length : {3, 17, 1000}) {
    for (int64_t inner : {1, 5}) {
      const SoftmaxShape s{2, length, inner};
      const int64_t count = 2 * length * inner;
      CheckEveryIsa(s, RandomVector(count, -80.0f, 80.0f, &rng),
                    "uniform(-80, 80)");
      CheckEveryIsa(s, RandomVector(count, 995.0f, 1005.0f, &rng),
                    "uniform(995, 1005)");
      if (HasFailure()) return;
    }
  }
}

// Masked attention: -inf scores give exactly 0 (log-softmax -inf) and the
// rest of the line is the softmax of the finite values.
TEST(SoftmaxKernelTest, MinusInfinityGivesZero) {
  std::mt19937 rng(13);
  for (int64_t length : {2, 7, 16, 17, 33, 1000}) {
    for (int64_t inner : {1, 3, 16}) {
      const SoftmaxShape s{2, length, inner};
      std::vector<float> x =
          RandomVector(2 * length * inner, -3.0f, 3.0f, &rng);
      // Every third value, and the last of each line, but never the first.
      for (int64_t o = 0; o < 2; ++o) {
        for (int64_t j = 1; j < length; ++j) {
          if (j % 3 == 1 || j == length - 1) {
            for (int64_t i = 0; i < inner; ++i) {
              x[(o * length + j) * inner + i] = -kInf;
            }
          }
        }
      }
      CheckEveryIsa(s, x, "with -inf");
      if (HasFailure()) return;
    }
  }
}

// No defined softmax: the whole line is NaN, as float arithmetic gives it,
// and neighbouring lines are untouched.
TEST(SoftmaxKernelTest, UndefinedLinesComeOutNaN) {
  const std::vector<float> kBad[] = {
      {1.0f, NAN, 2.0f, 0.5f, -1.0f},
      {1.0f, kInf, 2.0f, 0.5f, -1.0f},
      {-kInf, -kInf, -kInf, -kInf, -kInf},
  };
  for (const std::vector<float> &bad : kBad) {
    for (int64_t inner : {1, 4}) {
      // Line 0 (or lane 0) is bad, the others are fine.
      const int64_t length = static_cast<int64_t>(bad.size());
      const SoftmaxShape s{2, length, inner};
      std::vector<float> x(2 * length * inner, 0.25f);
      for (int64_t j = 0; j < length; ++j) x[j * inner] = bad[j];
      for (VectorIsa isa : AvailableVectorIsas()) {
        for (bool log : {false, true}) {
          std::vector<float> y(x.size(), 0.0f);
          Softmax(isa, log, s, x.data(), y.data(), nullptr);
          const float fine = log ? -std::log(static_cast<float>(length))
                                 : 1.0f / static_cast<float>(length);
          for (int64_t k = 0; k < static_cast<int64_t>(y.size()); ++k) {
            const bool bad_line = k < length * inner && k % inner == 0;
            if (bad_line) {
              ASSERT_TRUE(std::isnan(y[k])) << VectorIsaName(isa) << " " << k;
            } else {
              ASSERT_NEAR(y[k], fine, 1e-6) << VectorIsaName(isa) << " " << k;
            }
          }
        }
      }
    }
  }
}

TEST(SoftmaxKernelTest, EmptyShapesWriteNothing) {
  float x = 1.0f, y = 7.0f;
  for (VectorIsa isa : AvailableVectorIsas()) {
    Softmax(isa, false, SoftmaxShape{0, 3, 1}, &x, &y, nullptr);
    Softmax(isa, true, SoftmaxShape{2, 0, 1}, &x, &y, nullptr);
    Softmax(isa, false, SoftmaxShape{2, 3, 0}, &x, &y, nullptr);
    EXPECT_EQ(y, 7.0f);
  }
}

// The ops on a [2, 3, 5, 37] tensor along axis 1 (strided) and -1, under
// every ISA.
TEST(SoftmaxKernelTest, OpsMatchFloat64UnderEveryIsa) {
  std::mt19937 rng(5);
  const std::vector<int64_t> shape = {2, 3, 5, 37};
  const std::vector<float> x = RandomVector(2 * 3 * 5 * 37, -4.0f, 4.0f, &rng);
  const VectorIsa before = SelectedVectorIsa();
  for (VectorIsa isa : AvailableVectorIsas()) {
    ASSERT_TRUE(SetVectorIsaForTesting(isa));
    for (const char *type : {"Softmax", "LogSoftmax"}) {
      for (int axis : {1, -1}) {
        const std::string what = std::string(VectorIsaName(isa)) + " " + type +
                                 " axis=" + std::to_string(axis);
        test::OpTester op(type);
        op.Input("x", shape, x).Output("y").Arg("axis", axis).Threads(2);
        ASSERT_EQ(op.Run(), MaceStatus::MACE_SUCCESS) << what;
        ASSERT_EQ(op.output(0).shape, shape) << what;
        const SoftmaxShape s =
            axis == 1 ? SoftmaxShape{2, 3, 5 * 37} : SoftmaxShape{30, 37, 1};
        ExpectMatchesReference(std::string(type) == "LogSoftmax", s, x,
                               op.output(0).floats, what);
        if (HasFailure()) break;
      }
    }
  }
  SetVectorIsaForTesting(before);
}

}  // namespace
}  // namespace kernels
}  // namespace mace
