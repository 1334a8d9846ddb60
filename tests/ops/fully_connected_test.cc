// FullyConnected against a float64 reference: y[n, o] = sum_k x[n, k] w[o, k]
// + b[o], with x flattened per batch in NHWC order.

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

std::vector<double> ReferenceFc(const std::vector<float> &x, int64_t batch,
                                int64_t depth, const std::vector<float> &w,
                                int64_t out_channels,
                                const std::vector<float> &bias, bool relu) {
  std::vector<double> y(batch * out_channels);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < out_channels; ++o) {
      double sum = bias.empty() ? 0.0 : bias[o];
      for (int64_t k = 0; k < depth; ++k) {
        sum += static_cast<double>(x[n * depth + k]) * w[o * depth + k];
      }
      y[n * out_channels + o] = relu ? std::max(sum, 0.0) : sum;
    }
  }
  return y;
}

// Products summed in float: error grows like sqrt(K).
double SumTolerance(int64_t depth) {
  return 1e-5 * std::sqrt(static_cast<double>(depth));
}

struct FcCase {
  std::vector<int64_t> input_shape;
  int64_t out_channels;
  bool with_bias;
  bool fed_weights = false;  // weight and bias as graph inputs fed at Run
};

void CheckFc(const FcCase &fc, int threads) {
  const int64_t batch = fc.input_shape[0];
  const int64_t depth = Product(fc.input_shape) / batch;
  const auto x = RandomFloats(Product(fc.input_shape), -1, 1, 11);
  const auto w = RandomFloats(fc.out_channels * depth, -1, 1, 12);
  const std::vector<float> bias = fc.with_bias
                                      ? RandomFloats(fc.out_channels, -1, 1, 13)
                                      : std::vector<float>();
  OpTester t("FullyConnected");
  t.Input("x", fc.input_shape, x);
  if (fc.fed_weights) {
    t.Input("w", {fc.out_channels, depth}, w);
    if (fc.with_bias) t.Input("b", {fc.out_channels}, bias);
  } else {
    t.Constant("w", {fc.out_channels, depth}, w);
    if (fc.with_bias) t.Constant("b", {fc.out_channels}, bias);
  }
  t.Output("y").Threads(threads);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(t.output(0).shape, (std::vector<int64_t>{batch, fc.out_channels}));
  EXPECT_TRUE(
      AllClose(t.output(0).floats,
               ReferenceFc(x, batch, depth, w, fc.out_channels, bias, false),
               1e-5, SumTolerance(depth)));
}

TEST(FullyConnectedTest, TwoDInputOddDepthMatchesReference) {
  for (int threads : {1, 2}) {
    CheckFc({{3, 13}, 7, true}, threads);
    CheckFc({{1, 1}, 5, true}, threads);
    CheckFc({{2, 17}, 1, false}, threads);
  }
}

TEST(FullyConnectedTest, WorkSplitAcrossThreadsMatchesReference) {
  for (int threads : {1, 2}) CheckFc({{4, 17}, 300, true}, threads);
}

// Batch 1 takes the matrix-vector kernel on the weights in place.
TEST(FullyConnectedTest, OneSampleMatchesReference) {
  for (int threads : {1, 2}) {
    CheckFc({{1, 1031}, 300, true}, threads);
    CheckFc({{1, 2, 2, 9}, 17, false}, threads);
  }
}

TEST(FullyConnectedTest, FourDInputFlattensInNhwcOrder) {
  for (int threads : {1, 2}) {
    CheckFc({{2, 3, 5, 7}, 5, true}, threads);
    CheckFc({{3, 1, 1, 9}, 17, false}, threads);
  }
}

TEST(FullyConnectedTest, FusedReluWithoutBias) {
  const auto x = RandomFloats(2 * 11, -1, 1, 21);
  const auto w = RandomFloats(6 * 11, -1, 1, 22);
  OpTester t("FullyConnected");
  t.Input("x", {2, 11}, x)
      .Constant("w", {6, 11}, w)
      .Output("y")
      .ArgString("activation", "RELU");
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(AllClose(t.output(0).floats,
                       ReferenceFc(x, 2, 11, w, 6, {}, true), 1e-5,
                       SumTolerance(11)));
}

TEST(FullyConnectedTest, Float16WeightsCloseToReference) {
  const auto x = RandomFloats(2 * 3 * 3 * 5, -1, 1, 31);
  const auto w = RandomFloats(7 * 45, -1, 1, 32);
  const auto b = RandomFloats(7, -1, 1, 33);
  OpTester t("FullyConnected");
  t.Input("x", {2, 3, 3, 5}, x)
      .Constant("w", {7, 45}, w)
      .Constant("b", {7}, b)
      .Output("y")
      .Storage(WeightStorage::kFloat16);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  // fp16 rounds each weight by up to 2^-11 relative; K of them add up.
  EXPECT_TRUE(AllClose(t.output(0).floats,
                       ReferenceFc(x, 2, 45, w, 7, b, false), 1e-3,
                       1e-3 * std::sqrt(45.0)));
}

MaceStatus RunFc(const std::vector<int64_t> &x_shape,
                 const std::vector<int64_t> &w_shape,
                 const std::vector<int64_t> &b_shape, std::string *message,
                 const std::string &activation = "NOOP") {
  OpTester t("FullyConnected", "fc1");
  t.Input("x", x_shape, RandomFloats(Product(x_shape)));
  t.Constant("w", w_shape, RandomFloats(Product(w_shape)));
  if (!b_shape.empty())
    t.Constant("b", b_shape, RandomFloats(Product(b_shape)));
  t.Output("y").ArgString("activation", activation);
  MaceStatus status = t.Run();
  *message = status.information();
  return status;
}

TEST(FullyConnectedTest, DepthMismatchIsAnError) {
  std::string msg;
  EXPECT_NE(RunFc({2, 13}, {4, 12}, {4}, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("13"), std::string::npos) << msg;
}

TEST(FullyConnectedTest, BiasSizeMismatchIsAnError) {
  std::string msg;
  EXPECT_NE(RunFc({2, 13}, {4, 13}, {5}, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("bias"), std::string::npos) << msg;
}

TEST(FullyConnectedTest, WrongRanksAreErrors) {
  std::string msg;
  EXPECT_NE(RunFc({13}, {4, 13}, {4}, &msg).code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
  EXPECT_NE(RunFc({2, 13}, {4, 13, 1}, {4}, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
}

TEST(FullyConnectedTest, WeightAndBiasFedAtRunTimeMatchReference) {
  for (int threads : {1, 2}) {
    CheckFc({{3, 13}, 5, true, true}, threads);
    CheckFc({{2, 3, 2, 5}, 7, false, true}, threads);
  }
}

TEST(FullyConnectedTest, BadActivationIsAnError) {
  std::string msg;
  EXPECT_NE(RunFc({2, 13}, {4, 13}, {4}, &msg, "PRELU").code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("PRELU"), std::string::npos) << msg;
  EXPECT_NE(RunFc({2, 13}, {4, 13}, {4}, &msg, "SOFTPLUS").code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("SOFTPLUS"), std::string::npos) << msg;
}

TEST(FullyConnectedTest, NchwDataFormatIsUnsupported) {
  OpTester t("FullyConnected");
  t.Input("x", {1, 4}, RandomFloats(4))
      .Constant("w", {2, 4}, RandomFloats(8))
      .Output("y")
      .Arg("data_format", 2);
  MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("data_format"), std::string::npos)
      << status.information();
}

}  // namespace
}  // namespace test
}  // namespace mace
