// The activation kernels of every ISA this machine runs, against float64:
// the piecewise-linear activations exactly, SIGMOID and TANH (whose exp is
// approximated) within a few float ulps, over lengths that are not multiples
// of any vector width, wide input ranges and the values where the
// approximations switch formula or clamp; in place and out of place; 1 and 2
// threads bit for bit. Then the Activation op under every ISA.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mace/kernels/activation.h"
#include "tests/common/kernel_test_util.h"
#include "tests/common/op_tester.h"

namespace mace {
namespace kernels {
namespace {

using test::StartPool;

std::vector<float> Inputs(int64_t n, float range, std::mt19937 *rng) {
  std::uniform_real_distribution<float> dist(-range, range);
  std::vector<float> v(n);
  for (float &x : v) x = dist(*rng);
  // Where the approximations change formula or clamp.
  const float kSpecial[] = {0.0f,   -0.0f,  0.625f,  -0.625f, 0.6249f,
                            1e-6f,  -1e-6f, 88.0f,   -88.0f,  87.4f,
                            -87.4f, 100.0f, -100.0f, 44.0f,   -44.0f};
  for (size_t i = 0; i < sizeof(kSpecial) / sizeof(kSpecial[0]); ++i) {
    if (static_cast<int64_t>(i) * 3 < n) v[i * 3] = kSpecial[i];
  }
  return v;
}

double Reference(const ActivationParams &act, double x, int64_t channel) {
  switch (act.kind) {
    case ActivationKind::kNone:
      return x;
    case ActivationKind::kRelu:
      return x > 0 ? x : 0;
    case ActivationKind::kReluX:
      return std::fmin(std::fmax(x, 0.0), act.max_limit);
    case ActivationKind::kLeakyRelu:
      return x >= 0 ? x : static_cast<float>(x * act.coefficient);
    case ActivationKind::kPRelu:
      return x >= 0 ? x
                    : static_cast<float>(
                          x * act.slope[act.slope_size == 1 ? 0 : channel]);
    case ActivationKind::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case ActivationKind::kTanh:
      return std::tanh(x);
    case ActivationKind::kHardSigmoid:
      return std::fmin(
          std::fmax(act.hardsigmoid_alpha * x + act.hardsigmoid_beta, 0.0),
          1.0);
    case ActivationKind::kHardSwish:
      return x * std::fmin(std::fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case ActivationKind::kSwish:
      return x / (1.0 + std::exp(-act.coefficient * x));
    case ActivationKind::kErf:
      return std::erf(x);
    case ActivationKind::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  return x;
}

TEST(ActivationKernelsTest, EveryIsaMatchesFloat64) {
  std::mt19937 rng(20261121);
  auto pool1 = StartPool(1);
  auto pool2 = StartPool(2);
  const std::vector<float> slope = Inputs(33, 1.0f, &rng);
  const ActivationKind kKinds[] = {
      ActivationKind::kNone,      ActivationKind::kRelu,
      ActivationKind::kReluX,     ActivationKind::kLeakyRelu,
      ActivationKind::kPRelu,     ActivationKind::kSigmoid,
      ActivationKind::kTanh,      ActivationKind::kHardSigmoid,
      ActivationKind::kHardSwish, ActivationKind::kSwish,
      ActivationKind::kErf,       ActivationKind::kGelu};
  for (ActivationKind kind : kKinds) {
    for (int64_t channels : {1, 3, 5, 17, 33}) {
      for (int64_t rows : {1, 7, 300}) {
        for (bool shared_slope : {false, true}) {
          if (shared_slope && kind != ActivationKind::kPRelu) continue;
          ActivationParams act;
          act.kind = kind;
          act.max_limit = 0.7f;
          act.coefficient = 0.15f;
          act.hardsigmoid_alpha = 0.3f;
          act.hardsigmoid_beta = 0.4f;
          act.slope = slope.data();
          act.slope_size = shared_slope ? 1 : channels;
          const int64_t n = rows * channels;
          const std::vector<float> x = Inputs(n, 12.0f, &rng);
          for (VectorIsa isa : AvailableVectorIsas()) {
            const std::string what =
                std::string(VectorIsaName(isa)) +
                " kind=" + std::to_string(static_cast<int>(kind)) +
                " channels=" + std::to_string(channels) +
                " n=" + std::to_string(n) + (shared_slope ? " shared" : "");
            std::vector<float> y(n, NAN);
            ActivateChannels(isa, act, channels, x.data(), y.data(), n,
                             pool1.get());
            int failures = 0;
            for (int64_t i = 0; i < n; ++i) {
              const double want = Reference(act, x[i], i % channels);
              const bool approximated = kind == ActivationKind::kSigmoid ||
                                        kind == ActivationKind::kTanh ||
                                        kind == ActivationKind::kSwish;
              // The hard ones round in float where the reference does not.
              const bool rounded = kind == ActivationKind::kHardSigmoid ||
                                   kind == ActivationKind::kHardSwish;
              // erf's rational approximation: |error| < 5e-7 (GELU scales
              // it by x / 2).
              const bool erf =
                  kind == ActivationKind::kErf || kind == ActivationKind::kGelu;
              const double tol =
                  approximated ? 4e-7 * std::fabs(want) + 1e-7
                  : rounded    ? 2.5e-7 * std::fabs(want) + 1e-7
                  : erf        ? 6e-7 * std::fmax(1.0, 0.5 * std::fabs(x[i])) +
                              2.5e-7 * std::fabs(want)
                        : 0.0;
              if (!(std::fabs(y[i] - want) <= tol) && ++failures <= 3) {
                ADD_FAILURE() << what << " at x=" << x[i] << ": got " << y[i]
                              << ", want " << want;
              }
            }
            std::vector<float> in_place = x;
            ActivateChannels(isa, act, channels, in_place.data(),
                             in_place.data(), n, pool2.get());
            ASSERT_EQ(0,
                      std::memcmp(in_place.data(), y.data(), n * sizeof(float)))
                << what << ": in place on 2 threads differs";
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

// With an addend (a residual sum fused into a convolution's epilogue):
// act(x + addend), the sum rounded to float as the kernels do; chunks on
// 2 threads must shift the addend with x; y may be the addend itself.
TEST(ActivationKernelsTest, AddendIsAddedBeforeTheActivationOnEveryIsa) {
  std::mt19937 rng(20261122);
  auto pool2 = StartPool(2);
  const std::vector<float> slope = Inputs(33, 1.0f, &rng);
  for (ActivationKind kind :
       {ActivationKind::kNone, ActivationKind::kRelu, ActivationKind::kReluX,
        ActivationKind::kPRelu, ActivationKind::kLeakyRelu}) {
    for (int64_t channels : {1, 5, 17, 33}) {
      for (int64_t rows : {1, 7, 700}) {
        ActivationParams act;
        act.kind = kind;
        act.max_limit = 0.7f;
        act.coefficient = 0.15f;
        act.slope = slope.data();
        act.slope_size = channels;
        const int64_t n = rows * channels;
        const std::vector<float> x = Inputs(n, 4.0f, &rng);
        const std::vector<float> addend = Inputs(n, 4.0f, &rng);
        act.addend = addend.data();
        for (VectorIsa isa : AvailableVectorIsas()) {
          const std::string what = std::string(VectorIsaName(isa)) + " kind=" +
                                   std::to_string(static_cast<int>(kind)) +
                                   " channels=" + std::to_string(channels) +
                                   " n=" + std::to_string(n);
          std::vector<float> y(n, NAN);
          ActivateChannels(isa, act, channels, x.data(), y.data(), n,
                           pool2.get());
          for (int64_t i = 0; i < n; ++i) {
            const float sum = x[i] + addend[i];
            ASSERT_EQ(y[i],
                      static_cast<float>(Reference(act, sum, i % channels)))
                << what << " at " << i;
          }
          std::vector<float> into_addend = addend;
          ActivationParams onto = act;
          onto.addend = into_addend.data();
          ActivateChannels(isa, onto, channels, x.data(), into_addend.data(), n,
                           pool2.get());
          ASSERT_EQ(
              0, std::memcmp(into_addend.data(), y.data(), n * sizeof(float)))
              << what << ": written over the addend";
        }
      }
    }
  }
}

// Blocks of rows ld apart (a GEMM epilogue's block of a wider output),
// short rows going four at a time and rows that follow one another as one:
// every value as ActivateChannels computes its row alone, bit for bit, the
// addend added first, and the values between the rows left as they were.
TEST(ActivationKernelsTest, RowsOfABlockMatchEachRowAlone) {
  std::mt19937 rng(20261202);
  const std::vector<float> slope = Inputs(70, 1.0f, &rng);
  for (ActivationKind kind :
       {ActivationKind::kHardSwish, ActivationKind::kSwish,
        ActivationKind::kSigmoid, ActivationKind::kPRelu,
        ActivationKind::kLeakyRelu, ActivationKind::kGelu}) {
    for (int64_t cols : {1, 5, 16, 17, 32, 33, 70}) {
      for (int64_t rows : {1, 3, 4, 5, 9, 13}) {
        for (int64_t gap : {0, 3}) {
          for (bool with_addend : {false, true}) {
            ActivationParams act;
            act.kind = kind;
            act.coefficient = 0.15f;
            act.slope = slope.data();
            act.slope_size = cols;
            const int64_t ld = cols + gap;
            const std::vector<float> x = Inputs(rows * ld, 6.0f, &rng);
            const std::vector<float> addend = Inputs(rows * ld, 6.0f, &rng);
            if (with_addend) act.addend = addend.data();
            for (VectorIsa isa : AvailableVectorIsas()) {
              const std::string what =
                  std::string(VectorIsaName(isa)) +
                  " kind=" + std::to_string(static_cast<int>(kind)) +
                  " rows=" + std::to_string(rows) +
                  " cols=" + std::to_string(cols) +
                  " ld=" + std::to_string(ld) + (with_addend ? " addend" : "");
              std::vector<float> block = x;
              ActivateRows(isa, act, rows, cols, ld, block.data(),
                           block.data());
              for (int64_t r = 0; r < rows; ++r) {
                ActivationParams row_act = act;
                if (with_addend) row_act.addend = addend.data() + r * ld;
                std::vector<float> alone(cols);
                ActivateChannels(isa, row_act, cols, x.data() + r * ld,
                                 alone.data(), cols, nullptr);
                ASSERT_EQ(0, std::memcmp(alone.data(), block.data() + r * ld,
                                         cols * sizeof(float)))
                    << what << " row " << r;
                for (int64_t c = cols; c < ld; ++c) {
                  ASSERT_EQ(block[r * ld + c], x[r * ld + c])
                      << what << " gap of row " << r;
                }
              }
            }
          }
        }
      }
    }
  }
}

// erf keeps a NaN and saturates at +-1 on every ISA, as std::erf does.
TEST(ActivationKernelsTest, ClampBoundsAreReluAndReluXOnly) {
  float bounds[2] = {-1.0f, -1.0f};
  ActivationParams act;
  act.kind = ActivationKind::kRelu;
  ASSERT_TRUE(ClampBounds(act, bounds));
  EXPECT_EQ(bounds[0], 0.0f);
  EXPECT_EQ(bounds[1], std::numeric_limits<float>::infinity());
  act.kind = ActivationKind::kReluX;
  act.max_limit = 3.5f;
  ASSERT_TRUE(ClampBounds(act, bounds));
  EXPECT_EQ(bounds[0], 0.0f);
  EXPECT_EQ(bounds[1], 3.5f);
  for (ActivationKind kind :
       {ActivationKind::kNone, ActivationKind::kLeakyRelu,
        ActivationKind::kPRelu, ActivationKind::kSigmoid,
        ActivationKind::kHardSigmoid, ActivationKind::kGelu}) {
    act.kind = kind;
    EXPECT_FALSE(ClampBounds(act, bounds)) << static_cast<int>(kind);
  }
}

TEST(ActivationKernelsTest, ErfOfNanIsNanAndOfInfinityIsOne) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {NAN, inf, -inf, 0.0f, 9.0f, -9.0f};
  const std::vector<float> want = {NAN, 1.0f, -1.0f, 0.0f, 1.0f, -1.0f};
  ActivationParams act;
  act.kind = ActivationKind::kErf;
  for (VectorIsa isa : AvailableVectorIsas()) {
    std::vector<float> y(x.size());
    ActivateChannels(isa, act, 1, x.data(), y.data(), x.size(), nullptr);
    EXPECT_TRUE(std::isnan(y[0])) << VectorIsaName(isa);
    for (size_t i = 1; i < x.size(); ++i) {
      EXPECT_EQ(y[i], want[i]) << VectorIsaName(isa) << " erf(" << x[i] << ")";
    }
  }
}

// NaN, signed zeros and infinities go through the piecewise-linear kinds
// as through the generic lanes on every ISA (Max / Min keep the operand
// order of a > b ? a : b), and ReLU / ReLU6 of NaN is 0 as in the
// reference loops.
TEST(ActivationKernelsTest, SpecialValuesMatchGenericOnEveryIsa) {
  const std::vector<float> x = {
      NAN,  -0.0f, 0.0f,  INFINITY, -INFINITY, -2.5f, 7.0f, -NAN, 0.25f,
      3.0f, -3.0f, 1e30f, -1e30f,   NAN,       -0.0f, 1.0f, NAN};
  const int64_t n = static_cast<int64_t>(x.size());
  for (ActivationKind kind :
       {ActivationKind::kRelu, ActivationKind::kReluX,
        ActivationKind::kLeakyRelu, ActivationKind::kHardSigmoid,
        ActivationKind::kHardSwish}) {
    ActivationParams act;
    act.kind = kind;
    act.coefficient = 0.1f;
    std::vector<float> generic(n);
    ActivateChannels(VectorIsa::kGeneric, act, 1, x.data(), generic.data(), n,
                     nullptr);
    if (kind == ActivationKind::kRelu || kind == ActivationKind::kReluX) {
      EXPECT_EQ(generic[0], 0.0f);             // NaN
      EXPECT_FALSE(std::signbit(generic[1]));  // -0 -> +0
    }
    for (VectorIsa isa : AvailableVectorIsas()) {
      std::vector<float> y(n);
      ActivateChannels(isa, act, 1, x.data(), y.data(), n, nullptr);
      EXPECT_EQ(0, std::memcmp(y.data(), generic.data(), n * sizeof(float)))
          << VectorIsaName(isa) << " kind=" << static_cast<int>(kind);
    }
  }
}

TEST(ActivationKernelsTest, OpMatchesFloat64UnderEveryIsa) {
  std::mt19937 rng(3);
  const std::vector<int64_t> shape = {2, 5, 3, 19};
  const std::vector<float> x = Inputs(2 * 5 * 3 * 19, 6.0f, &rng);
  const std::vector<float> alpha = Inputs(19, 1.0f, &rng);
  const VectorIsa before = SelectedVectorIsa();
  for (VectorIsa isa : AvailableVectorIsas()) {
    ASSERT_TRUE(SetVectorIsaForTesting(isa));
    for (const char *name : {"SIGMOID", "PRELU"}) {
      test::OpTester op("Activation");
      op.Input("x", shape, x).Output("y").ArgString("activation", name);
      if (std::string(name) == "PRELU") op.Constant("alpha", {19}, alpha);
      op.Threads(2);
      ASSERT_EQ(op.Run(), MaceStatus::MACE_SUCCESS) << name;
      for (size_t i = 0; i < x.size(); ++i) {
        const double want =
            std::string(name) == "PRELU"
                ? (x[i] >= 0 ? x[i] : static_cast<float>(x[i] * alpha[i % 19]))
                : 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
        ASSERT_NEAR(op.output(0).floats[i], want, 4e-7 * std::fabs(want) + 1e-7)
            << VectorIsaName(isa) << " " << name << " at " << i;
      }
    }
  }
  SetVectorIsaForTesting(before);
}

}  // namespace
}  // namespace kernels
}  // namespace mace
