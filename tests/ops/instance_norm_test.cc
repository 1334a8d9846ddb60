// InstanceNorm against a float64 reference: NHWC input, mean and variance
// over H and W for each (n, c), then scale[c], bias[c] and the activation.

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

std::vector<double> ReferenceInstanceNorm(const std::vector<float> &x,
                                          const Shape &shape,
                                          const std::vector<float> &scale,
                                          const std::vector<float> &bias,
                                          double eps, bool relu) {
  const int64_t batch = shape[0], pixels = shape[1] * shape[2],
                channels = shape[3];
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      auto at = [&](int64_t p) { return (n * pixels + p) * channels + c; };
      double mean = 0.0;
      for (int64_t p = 0; p < pixels; ++p) mean += x[at(p)];
      mean /= pixels;
      double var = 0.0;
      for (int64_t p = 0; p < pixels; ++p) {
        var += (x[at(p)] - mean) * (x[at(p)] - mean);
      }
      var /= pixels;
      for (int64_t p = 0; p < pixels; ++p) {
        double v = (x[at(p)] - mean) / std::sqrt(var + eps);
        if (!scale.empty()) v = v * scale[c] + bias[c];
        y[at(p)] = relu ? std::max(v, 0.0) : v;
      }
    }
  }
  return y;
}

void CheckInstanceNorm(const Shape &shape, bool affine, int threads,
                       bool relu = false) {
  const auto x = RandomFloats(Product(shape), -2, 2, 91);
  std::vector<float> scale, bias;
  OpTester t("InstanceNorm");
  t.Input("x", shape, x);
  if (affine) {
    scale = RandomFloats(shape[3], 0.5f, 2, 92);
    bias = RandomFloats(shape[3], -1, 1, 93);
    t.Constant("scale", {shape[3]}, scale).Constant("bias", {shape[3]}, bias);
  }
  t.Output("y").ArgFloat("epsilon", 1e-3f).Threads(threads);
  if (relu) t.ArgString("activation", "RELU");
  MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  EXPECT_EQ(t.output(0).shape, shape);
  EXPECT_TRUE(
      AllClose(t.output(0).floats,
               ReferenceInstanceNorm(x, shape, scale, bias, 1e-3, relu)));
}

TEST(InstanceNormTest, AffineMatchesReference) {
  for (int threads : {1, 2}) {
    CheckInstanceNorm({2, 5, 7, 3}, true, threads);
    CheckInstanceNorm({1, 6, 5, 17}, true, threads);
    CheckInstanceNorm({3, 1, 9, 5}, true, threads);
    CheckInstanceNorm({2, 4, 4, 131}, true, threads);  // enough to split
  }
}

TEST(InstanceNormTest, WithoutScaleAndBiasMatchesReference) {
  for (int threads : {1, 2}) {
    CheckInstanceNorm({2, 4, 3, 7}, false, threads);
  }
}

TEST(InstanceNormTest, FusedReluMatchesReference) {
  CheckInstanceNorm({2, 5, 5, 3}, true, 2, true);
}

TEST(InstanceNormTest, SinglePixelGivesBias) {
  CheckInstanceNorm({2, 1, 1, 5}, true, 1);
}

TEST(InstanceNormTest, AffineOffIgnoresScaleAndBias) {
  const Shape shape = {1, 3, 4, 5};
  const auto x = RandomFloats(Product(shape), -2, 2, 94);
  OpTester t("InstanceNorm");
  t.Input("x", shape, x)
      .Constant("scale", {5}, RandomFloats(5, 0.5f, 2, 95))
      .Constant("bias", {5}, RandomFloats(5, -1, 1, 96))
      .Output("y")
      .Arg("affine", 0);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  // Default epsilon 1e-5.
  EXPECT_TRUE(AllClose(t.output(0).floats,
                       ReferenceInstanceNorm(x, shape, {}, {}, 1e-5, false)));
}

TEST(InstanceNormTest, Float16ScaleCloseToReference) {
  const Shape shape = {1, 4, 4, 9};
  const auto x = RandomFloats(Product(shape), -2, 2, 97);
  const auto scale = RandomFloats(9, 0.5f, 2, 98);
  const auto bias = RandomFloats(9, -1, 1, 99);
  OpTester t("InstanceNorm");
  t.Input("x", shape, x)
      .Constant("scale", {9}, scale)
      .Constant("bias", {9}, bias)
      .Output("y")
      .Storage(WeightStorage::kFloat16);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  // fp16 rounds scale and bias by up to 2^-11 relative; |y| stays below ~8.
  EXPECT_TRUE(AllClose(
      t.output(0).floats,
      ReferenceInstanceNorm(x, shape, scale, bias, 1e-5, false), 1e-3, 2e-3));
}

MaceStatus RunInstanceNorm(const Shape &shape, int num_params,
                           int64_t param_size, std::string *message,
                           int64_t affine = -1) {
  OpTester t("InstanceNorm", "in1");
  t.Input("x", shape, RandomFloats(Product(shape)));
  if (num_params > 0)
    t.Constant("scale", {param_size}, RandomFloats(param_size));
  if (num_params > 1)
    t.Constant("bias", {param_size}, RandomFloats(param_size));
  t.Output("y");
  if (affine >= 0) t.Arg("affine", affine);
  MaceStatus status = t.Run();
  *message = status.information();
  return status;
}

TEST(InstanceNormTest, NonFourDInputIsAnError) {
  std::string msg;
  EXPECT_NE(RunInstanceNorm({2, 3, 5}, 2, 5, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("rank 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in1"), std::string::npos) << msg;
}

TEST(InstanceNormTest, ScaleSizeMismatchIsAnError) {
  std::string msg;
  EXPECT_NE(RunInstanceNorm({1, 2, 2, 3}, 2, 4, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("scale"), std::string::npos) << msg;
}

TEST(InstanceNormTest, MissingParametersAreAnError) {
  std::string msg;
  EXPECT_NE(RunInstanceNorm({1, 2, 2, 3}, 1, 3, &msg).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("got 2"), std::string::npos) << msg;
  EXPECT_NE(RunInstanceNorm({1, 2, 2, 3}, 0, 3, &msg, 1).code(),
            MaceStatus::MACE_SUCCESS);
  EXPECT_NE(msg.find("affine"), std::string::npos) << msg;
}

}  // namespace
}  // namespace test
}  // namespace mace
