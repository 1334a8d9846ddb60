#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

struct ActivationCase {
  std::string name;
  double (*reference)(double x);
  float coefficient;
};

double Relu(double x) { return x > 0 ? x : 0; }
double Relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }
double Leaky(double x) { return x >= 0 ? x : 0.1 * x; }
double Tanh(double x) { return std::tanh(x); }
double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Elu(double x) { return x >= 0 ? x : 0.5 * (std::exp(x) - 1.0); }
double HardSigmoid(double x) {
  return std::min(std::max(0.2 * x + 0.5, 0.0), 1.0);
}
double HardSwish(double x) {
  return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
}
double Gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double Swish(double x) { return x / (1.0 + std::exp(-x)); }

class ActivationTest : public ::testing::TestWithParam<int> {};

TEST_P(ActivationTest, EveryTypeMatchesReferenceOnOddShape) {
  const std::vector<ActivationCase> cases = {
      {"RELU", Relu, 0.0f},           {"RELUX", Relu6, 0.0f},
      {"LEAKYRELU", Leaky, 0.1f},     {"TANH", Tanh, 0.0f},
      {"SIGMOID", Sigmoid, 0.0f},     {"ELU", Elu, 0.5f},
      {"HARDSIGMOID", HardSigmoid, 0.0f},
      {"HARDSWISH", HardSwish, 0.0f}, {"GELU", Gelu, 0.0f},
      {"GELU_TANH", GeluTanh, 0.0f},  {"SWISH", Swish, 1.0f},
  };
  const std::vector<int64_t> shape = {2, 5, 7, 3};
  const std::vector<float> x = RandomFloats(Product(shape), -8.0f, 8.0f, 7);
  for (const ActivationCase &c : cases) {
    OpTester tester("Activation");
    tester.Input("x", shape, x)
        .Output("y")
        .ArgString("activation", c.name)
        .ArgFloat("max_limit", 6.0f)
        .Threads(GetParam());
    if (c.coefficient != 0.0f) {
      tester.ArgFloat("activation_coefficient", c.coefficient);
    }
    ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS) << c.name;
    std::vector<double> expected;
    for (float v : x) expected.push_back(c.reference(v));
    EXPECT_EQ(tester.output(0).shape, shape);
    EXPECT_TRUE(AllClose(tester.output(0).floats, expected, 1e-5, 1e-6))
        << c.name;
  }
}

TEST_P(ActivationTest, PReluAppliesPerChannelSlope) {
  const std::vector<int64_t> shape = {1, 3, 4, 5};
  const std::vector<float> x = RandomFloats(Product(shape), -2, 2, 3);
  const std::vector<float> alpha = RandomFloats(5, 0, 1, 4);
  OpTester tester("Activation");
  tester.Input("x", shape, x)
      .Constant("alpha", {5}, alpha)
      .Output("y")
      .ArgString("activation", "PRELU")
      .Threads(GetParam());
  ASSERT_EQ(tester.Run(), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected;
  for (size_t i = 0; i < x.size(); ++i) {
    expected.push_back(x[i] >= 0 ? x[i] : double(x[i]) * alpha[i % 5]);
  }
  EXPECT_TRUE(AllClose(tester.output(0).floats, expected));
}

INSTANTIATE_TEST_SUITE_P(Threads, ActivationTest, ::testing::Values(1, 2));

TEST(ActivationErrorTest, UnknownActivationNamesOpAndValue) {
  OpTester tester("Activation", "act1");
  tester.Input("x", {4}, {1, 2, 3, 4}).Output("y").ArgString("activation",
                                                             "RELU7");
  const MaceStatus status = tester.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("act1"), std::string::npos);
  EXPECT_NE(status.information().find("RELU7"), std::string::npos);
}

TEST(ActivationErrorTest, PReluSlopeOfWrongSizeIsRejected) {
  OpTester tester("Activation", "prelu");
  tester.Input("x", {1, 2, 2, 3}, RandomFloats(12))
      .Constant("alpha", {2}, {0.1f, 0.2f})
      .Output("y")
      .ArgString("activation", "PRELU");
  const MaceStatus status = tester.Run();
  EXPECT_NE(status, MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("alpha"), std::string::npos);
}

TEST(ActivationErrorTest, ActivationArgumentOfWrongKindIsRejected) {
  OpTester tester("Activation", "act2");
  tester.Input("x", {4}, {1, 2, 3, 4}).Output("y").Arg("activation", 1);
  const MaceStatus status = tester.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_INVALID_ARGS);
  EXPECT_NE(status.information().find("'activation'"), std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace mace
