// LocalResponseNorm against a float64 reference (TensorFlow semantics):
// y[c] = x[c] / (bias + alpha * sum of x^2 over [c - r, c + r])^beta.

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

using Shape = std::vector<int64_t>;

struct LrnArgs {
  int64_t radius = 5;
  double bias = 1.0, alpha = 1.0, beta = 0.5;
};

std::vector<double> ReferenceLrn(const std::vector<float> &x, int64_t channels,
                                 const LrnArgs &a) {
  std::vector<double> y(x.size());
  for (size_t base = 0; base < x.size(); base += channels) {
    for (int64_t c = 0; c < channels; ++c) {
      double sqr_sum = 0.0;
      const int64_t first = std::max<int64_t>(0, c - a.radius);
      const int64_t last = std::min<int64_t>(channels - 1, c + a.radius);
      for (int64_t k = first; k <= last; ++k) {
        sqr_sum += static_cast<double>(x[base + k]) * x[base + k];
      }
      y[base + c] = x[base + c] / std::pow(a.bias + a.alpha * sqr_sum, a.beta);
    }
  }
  return y;
}

void CheckLrn(const Shape &shape, const LrnArgs &a, bool set_args,
              int threads) {
  const auto x = RandomFloats(Product(shape), -2, 2, 101);
  OpTester t("LocalResponseNorm");
  t.Input("x", shape, x).Output("y").Threads(threads);
  if (set_args) {
    t.Arg("depth_radius", a.radius)
        .ArgFloat("bias", static_cast<float>(a.bias))
        .ArgFloat("alpha", static_cast<float>(a.alpha))
        .ArgFloat("beta", static_cast<float>(a.beta));
  }
  MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  EXPECT_EQ(t.output(0).shape, shape);
  EXPECT_TRUE(AllClose(t.output(0).floats, ReferenceLrn(x, shape[3], a)));
}

TEST(LocalResponseNormTest, ArgumentsMatchReference) {
  LrnArgs a;
  a.radius = 2;
  a.bias = 2.0;
  a.alpha = 0.1;
  a.beta = 0.75;
  for (int threads : {1, 2}) {
    CheckLrn({2, 5, 7, 17}, a, true, threads);
    CheckLrn({1, 3, 3, 4}, a, true, threads);
  }
}

TEST(LocalResponseNormTest, DefaultsWithRadiusBeyondChannels) {
  for (int threads : {1, 2}) {
    CheckLrn({2, 3, 5, 3}, LrnArgs(), false, threads);
    CheckLrn({1, 4, 4, 13}, LrnArgs(), false, threads);
  }
}

TEST(LocalResponseNormTest, RadiusZeroUsesOwnChannelOnly) {
  LrnArgs a;
  a.radius = 0;
  a.alpha = 0.5;
  CheckLrn({2, 3, 3, 5}, a, true, 1);
}

TEST(LocalResponseNormTest, HugeRadiusIsClipped) {
  LrnArgs a;
  a.radius = int64_t{1} << 40;
  a.alpha = 1e-2;
  CheckLrn({1, 2, 3, 7}, a, true, 2);
}

MaceStatus RunLrn(const Shape &shape, std::string *message,
                  int64_t radius = 5) {
  OpTester t("LocalResponseNorm", "lrn1");
  t.Input("x", shape, RandomFloats(Product(shape)))
      .Output("y")
      .Arg("depth_radius", radius);
  MaceStatus status = t.Run();
  *message = status.information();
  return status;
}

TEST(LocalResponseNormTest, NonFourDInputIsAnError) {
  std::string msg;
  EXPECT_NE(RunLrn({2, 3, 5}, &msg).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("rank 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("lrn1"), std::string::npos) << msg;
}

TEST(LocalResponseNormTest, NegativeRadiusIsAnError) {
  std::string msg;
  EXPECT_NE(RunLrn({1, 2, 2, 3}, &msg, -1).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("depth_radius"), std::string::npos) << msg;
}

TEST(LocalResponseNormTest, FloatRadiusIsAnError) {
  OpTester t("LocalResponseNorm");
  t.Input("x", {1, 2, 2, 3}, RandomFloats(12))
      .Output("y")
      .ArgFloat("depth_radius", 2.0f);
  MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("depth_radius"), std::string::npos)
      << status.information();
}

TEST(LocalResponseNormTest, NchwDataFormatIsUnsupported) {
  OpTester t("LocalResponseNorm");
  t.Input("x", {1, 2, 2, 3}, RandomFloats(12))
      .Output("y")
      .Arg("data_format", 2);
  MaceStatus status = t.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  EXPECT_NE(status.information().find("data_format"), std::string::npos)
      << status.information();
}

}  // namespace
}  // namespace test
}  // namespace mace
