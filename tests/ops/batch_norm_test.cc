// BatchNorm against a float64 reference, channel = last axis:
//   y = act(scale * (x - mean) / sqrt(var + eps) + offset), or with folded
//   parameters y = act(scale * x + offset). A fused PRELU takes its slope
//   as the last input.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

struct BnParams {
  std::vector<float> scale, offset, mean, var;  // mean, var empty: folded
};

BnParams RandomParams(int64_t channels, bool folded) {
  BnParams p;
  p.scale = RandomFloats(channels, -2, 2, 51);
  p.offset = RandomFloats(channels, -1, 1, 52);
  if (!folded) {
    p.mean = RandomFloats(channels, -1, 1, 53);
    p.var = RandomFloats(channels, 0.01f, 2, 54);
  }
  return p;
}

std::vector<double> ReferenceBn(const std::vector<float> &x, const BnParams &p,
                                double eps, double relux_limit) {
  const size_t channels = p.scale.size();
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = i % channels;
    double v = x[i];
    if (!p.mean.empty()) v = (v - p.mean[c]) / std::sqrt(p.var[c] + eps);
    v = v * p.scale[c] + p.offset[c];
    if (relux_limit > 0) v = std::min(std::max(v, 0.0), relux_limit);
    y[i] = v;
  }
  return y;
}

void AddParams(OpTester *t, const BnParams &p) {
  const int64_t c = static_cast<int64_t>(p.scale.size());
  t->Constant("scale", {c}, p.scale).Constant("offset", {c}, p.offset);
  if (!p.mean.empty())
    t->Constant("mean", {c}, p.mean).Constant("var", {c}, p.var);
}

void CheckBn(const std::vector<int64_t> &shape, bool folded, int threads) {
  const auto x = RandomFloats(Product(shape), -3, 3, 50);
  const BnParams p = RandomParams(shape.back(), folded);
  OpTester t("BatchNorm");
  t.Input("x", shape, x);
  AddParams(&t, p);
  t.Output("y").ArgFloat("epsilon", 1e-3f).Threads(threads);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(t.output(0).shape, shape);
  EXPECT_TRUE(AllClose(t.output(0).floats, ReferenceBn(x, p, 1e-3, 0)));
}

TEST(BatchNormTest, FourInputsNhwcMatchReference) {
  for (int threads : {1, 2}) {
    CheckBn({2, 5, 7, 3}, false, threads);
    CheckBn({1, 3, 2, 17}, false, threads);
    CheckBn({1, 1, 1, 1}, false, threads);
    CheckBn({2, 24, 24, 5}, false, threads);  // enough work to split
  }
}

TEST(BatchNormTest, FoldedTwoParametersMatchReference) {
  for (int threads : {1, 2}) {
    CheckBn({4, 17}, true, threads);
    CheckBn({2, 6, 5, 7}, true, threads);
  }
}

TEST(BatchNormTest, AnyRankUsesTheLastAxis) {
  CheckBn({5}, false, 1);
  CheckBn({3, 4, 5}, false, 2);
}

TEST(BatchNormTest, DefaultEpsilonIsMaces) {
  const std::vector<int64_t> shape = {2, 3, 3, 5};
  const auto x = RandomFloats(Product(shape), -3, 3, 55);
  BnParams p = RandomParams(5, false);
  // Tiny variances make the epsilon visible in the result.
  p.var = RandomFloats(5, 0.0f, 1e-4f, 56);
  OpTester t("BatchNorm");
  t.Input("x", shape, x);
  AddParams(&t, p);
  t.Output("y");
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(AllClose(t.output(0).floats, ReferenceBn(x, p, 1e-4, 0)));
}

// The second shape spans several thread chunks of rows, with channels
// that are not a multiple of any vector width.
TEST(BatchNormTest, FusedReluXClampsResult) {
  for (const std::vector<int64_t> &shape :
       {std::vector<int64_t>{2, 4, 3, 7},
        std::vector<int64_t>{1, 19, 23, 37}}) {
    const auto x = RandomFloats(Product(shape), -3, 3, 57);
    const BnParams p = RandomParams(shape.back(), false);
    OpTester t("BatchNorm");
    t.Input("x", shape, x);
    AddParams(&t, p);
    t.Output("y")
        .ArgFloat("epsilon", 1e-3f)
        .ArgString("activation", "RELUX")
        .ArgFloat("max_limit", 1.5f)
        .Threads(2);
    ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
    EXPECT_TRUE(AllClose(t.output(0).floats, ReferenceBn(x, p, 1e-3, 1.5)));
  }
}

TEST(BatchNormTest, Float16ParametersCloseToReference) {
  const std::vector<int64_t> shape = {1, 5, 5, 9};
  const auto x = RandomFloats(Product(shape), -3, 3, 58);
  const BnParams p = RandomParams(9, false);
  OpTester t("BatchNorm");
  t.Input("x", shape, x);
  AddParams(&t, p);
  t.Output("y").ArgFloat("epsilon", 1e-3f).Storage(WeightStorage::kFloat16);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  // Each parameter is rounded by up to 2^-11 relative, and a rounded mean
  // is amplified by scale / sqrt(var) (up to 20).
  EXPECT_TRUE(
      AllClose(t.output(0).floats, ReferenceBn(x, p, 1e-3, 0), 5e-3, 2e-2));
}

TEST(BatchNormTest, FourInputsAreAnError) {
  OpTester t("BatchNorm", "bn1");
  t.Input("x", {1, 2, 2, 3}, RandomFloats(12))
      .Constant("scale", {3}, RandomFloats(3))
      .Constant("offset", {3}, RandomFloats(3))
      .Constant("mean", {3}, RandomFloats(3))
      .Output("y");
  MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("bn1"), std::string::npos)
      << status.information();
}

TEST(BatchNormTest, ParameterSizeMismatchIsAnError) {
  OpTester t("BatchNorm");
  t.Input("x", {1, 2, 2, 3}, RandomFloats(12))
      .Constant("scale", {3}, RandomFloats(3))
      .Constant("offset", {3}, RandomFloats(3))
      .Constant("mean", {3}, RandomFloats(3))
      .Constant("var", {4}, RandomFloats(4, 0.1f, 1))
      .Output("y");
  MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("var"), std::string::npos)
      << status.information();
}

TEST(BatchNormTest, BadEpsilonIsAnError) {
  for (bool wrong_kind : {false, true}) {
    OpTester t("BatchNorm");
    t.Input("x", {2, 3}, RandomFloats(6))
        .Constant("scale", {3}, RandomFloats(3))
        .Constant("offset", {3}, RandomFloats(3))
        .Output("y");
    if (wrong_kind) {
      t.ArgString("epsilon", "small");
    } else {
      t.ArgFloat("epsilon", -1.0f);
    }
    MaceStatus status = t.Run();
    EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
    EXPECT_NE(status.information().find("epsilon"), std::string::npos)
        << status.information();
  }
}

TEST(BatchNormTest, ScalarInputIsAnError) {
  OpTester t("BatchNorm");
  t.Input("x", {}, {1.0f})
      .Constant("scale", {1}, {1.0f})
      .Constant("offset", {1}, {0.0f})
      .Output("y");
  MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("rank"), std::string::npos)
      << status.information();
}

// The reference followed by PRELU with `slope` (1 or C values).
std::vector<double> ReferencePReluBn(const std::vector<float> &x,
                                     const BnParams &p, double eps,
                                     const std::vector<float> &slope) {
  std::vector<double> y = ReferenceBn(x, p, eps, 0);
  const size_t channels = p.scale.size();
  for (size_t i = 0; i < y.size(); ++i) {
    const double a = slope[slope.size() == 1 ? 0 : i % channels];
    if (y[i] < 0) y[i] *= a;
  }
  return y;
}

TEST(BatchNormTest, FusedPReluMatchesReference) {
  const std::vector<int64_t> shape = {2, 5, 4, 7};
  const auto x = RandomFloats(Product(shape), -3, 3, 59);
  for (bool folded : {false, true}) {
    for (int slope_size : {7, 1}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(folded ? "folded" : "statistics") +
                     ", slope size " + std::to_string(slope_size));
        const BnParams p = RandomParams(7, folded);
        const auto slope = RandomFloats(slope_size, -0.5f, 0.5f, 60);
        OpTester t("BatchNorm");
        t.Input("x", shape, x);
        AddParams(&t, p);
        t.Constant("slope", {slope_size}, slope);
        t.Output("y")
            .ArgFloat("epsilon", 1e-3f)
            .ArgString("activation", "PRELU")
            .Threads(threads);
        const MaceStatus status = t.Run();
        ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS)
            << status.information();
        EXPECT_TRUE(
            AllClose(t.output(0).floats, ReferencePReluBn(x, p, 1e-3, slope)));
      }
    }
  }
}

TEST(BatchNormTest, FusedPReluSlopeSizeMismatchIsAnError) {
  OpTester t("BatchNorm", "bn2");
  t.Input("x", {1, 2, 2, 3}, RandomFloats(12))
      .Constant("scale", {3}, RandomFloats(3))
      .Constant("offset", {3}, RandomFloats(3))
      .Constant("slope", {2}, RandomFloats(2))
      .Output("y")
      .ArgString("activation", "PRELU");
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("slope"), std::string::npos)
      << status.information();
  EXPECT_NE(status.information().find("bn2"), std::string::npos)
      << status.information();
}

TEST(BatchNormTest, FusedPReluWithoutSlopeIsAnError) {
  OpTester t("BatchNorm");
  t.Input("x", {1, 2, 2, 3}, RandomFloats(12))
      .Constant("scale", {3}, RandomFloats(3))
      .Constant("offset", {3}, RandomFloats(3))
      .Output("y")
      .ArgString("activation", "PRELU");
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("PRELU"), std::string::npos)
      << status.information();
}

}  // namespace
}  // namespace test
}  // namespace mace
