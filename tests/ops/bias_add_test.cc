// BiasAdd against a float64 reference: y = act(x + bias[c]), c = last axis.

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

std::vector<double> ReferenceBiasAdd(const std::vector<float> &x,
                                     const std::vector<float> &bias,
                                     bool tanh_activation) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = static_cast<double>(x[i]) + bias[i % bias.size()];
    y[i] = tanh_activation ? std::tanh(v) : v;
  }
  return y;
}

void CheckBiasAdd(const std::vector<int64_t> &shape, int threads,
                  bool tanh_activation = false) {
  const auto x = RandomFloats(Product(shape), -2, 2, 61);
  const auto bias = RandomFloats(shape.back(), -1, 1, 62);
  OpTester t("BiasAdd");
  t.Input("x", shape, x).Constant("bias", {shape.back()}, bias).Output("y");
  t.Threads(threads);
  if (tanh_activation) t.ArgString("activation", "TANH");
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(t.output(0).shape, shape);
  EXPECT_TRUE(
      AllClose(t.output(0).floats, ReferenceBiasAdd(x, bias, tanh_activation)));
}

TEST(BiasAddTest, NhwcAddsAlongChannels) {
  for (int threads : {1, 2}) {
    CheckBiasAdd({2, 3, 5, 7}, threads);
    CheckBiasAdd({1, 1, 1, 17}, threads);
    CheckBiasAdd({3, 9, 11, 1}, threads);
    CheckBiasAdd({2, 24, 24, 5}, threads);  // enough work to split
  }
}

TEST(BiasAddTest, OtherRanksAddAlongTheLastAxis) {
  for (int threads : {1, 2}) {
    CheckBiasAdd({5}, threads);
    CheckBiasAdd({3, 17}, threads);
    CheckBiasAdd({2, 3, 5}, threads);
  }
}

TEST(BiasAddTest, FusedTanhMatchesReference) {
  CheckBiasAdd({2, 4, 5, 3}, 2, true);
  CheckBiasAdd({2, 24, 24, 37}, 2, true);  // several chunks, odd channels
}

TEST(BiasAddTest, RuntimeBiasMatchesReference) {
  const auto x = RandomFloats(2 * 5, -2, 2, 63);
  const auto bias = RandomFloats(5, -1, 1, 64);
  OpTester t("BiasAdd");
  t.Input("x", {2, 5}, x).Input("bias", {5}, bias).Output("y");
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(AllClose(t.output(0).floats, ReferenceBiasAdd(x, bias, false)));
}

TEST(BiasAddTest, Float16BiasCloseToReference) {
  const auto x = RandomFloats(2 * 3 * 3 * 7, -2, 2, 65);
  const auto bias = RandomFloats(7, -1, 1, 66);
  OpTester t("BiasAdd");
  t.Input("x", {2, 3, 3, 7}, x)
      .Constant("bias", {7}, bias)
      .Output("y")
      .Storage(WeightStorage::kFloat16);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  // fp16 rounds each bias (|b| < 1) by up to 2^-11.
  EXPECT_TRUE(AllClose(t.output(0).floats, ReferenceBiasAdd(x, bias, false),
                       1e-5, 1e-3));
}

MaceStatus RunBiasAdd(const std::vector<int64_t> &x_shape,
                      const std::vector<int64_t> &bias_shape,
                      const std::string &activation, std::string *message) {
  OpTester t("BiasAdd", "bias1");
  t.Input("x", x_shape, RandomFloats(Product(x_shape)))
      .Constant("bias", bias_shape, RandomFloats(Product(bias_shape)))
      .Output("y")
      .ArgString("activation", activation);
  MaceStatus status = t.Run();
  *message = status.information();
  return status;
}

TEST(BiasAddTest, BiasSizeMismatchIsAnError) {
  std::string msg;
  EXPECT_NE(RunBiasAdd({1, 2, 2, 3}, {4}, "NOOP", &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("bias"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3]"), std::string::npos) << msg;
}

TEST(BiasAddTest, BiasOfRankTwoIsAnError) {
  std::string msg;
  EXPECT_NE(RunBiasAdd({1, 2, 2, 3}, {1, 3}, "NOOP", &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("bias"), std::string::npos) << msg;
}

TEST(BiasAddTest, ScalarInputIsAnError) {
  std::string msg;
  EXPECT_NE(RunBiasAdd({}, {1}, "NOOP", &msg).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
}

TEST(BiasAddTest, PreluActivationIsUnsupported) {
  std::string msg;
  EXPECT_NE(RunBiasAdd({2, 3}, {3}, "PRELU", &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("PRELU"), std::string::npos) << msg;
}

TEST(BiasAddTest, NchwDataFormatIsUnsupported) {
  OpTester t("BiasAdd");
  t.Input("x", {1, 2, 2, 3}, RandomFloats(12))
      .Constant("bias", {3}, RandomFloats(3))
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
