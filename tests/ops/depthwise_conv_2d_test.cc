// DepthwiseConv2d against a float64 reference written from the definition:
// y[n, oh, ow, c * M + m] = act(b[c * M + m] + sum over kh, kw of
//   x[n, oh * sh - pad_top + kh * dh, ow * sw - pad_left + kw * dw, c] *
//   w[kh, kw, c, m]), cells outside the input reading zero. A fused PRELU
//   takes its slope as input 3, after the bias.

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

struct DwSpec {
  std::vector<int64_t> input;  // N, H, W, C
  int64_t multiplier = 1, kernel_h = 1, kernel_w = 1;
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> dilations = {1, 1};
  int padding = 0;            // 0 VALID, 1 SAME
  std::vector<int64_t> pads;  // padding_values: 2 or 4 values
  bool bias = true;
  std::string activation;  // empty: none
  float max_limit = 6.0f;
  float coefficient = 0.0f;
  bool fed_weights = false;  // filter and bias as graph inputs fed at Run
  std::vector<float> slope;  // PRELU: 1 or C * multiplier values
};

double RefActivate(const DwSpec &s, double v, int64_t channel) {
  if (s.activation == "PRELU") {
    const size_t c = s.slope.size() == 1 ? 0 : static_cast<size_t>(channel);
    return v >= 0 ? v : v * s.slope[c];
  }
  if (s.activation == "RELU") return std::max(v, 0.0);
  if (s.activation == "RELUX") {
    return std::min(std::max(v, 0.0), static_cast<double>(s.max_limit));
  }
  if (s.activation == "LEAKYRELU") return v >= 0 ? v : v * s.coefficient;
  return v;
}

// Output size and leading pad of one axis (axis 0: h, 1: w).
void RefAxis(const DwSpec &s, int axis, int64_t in, int64_t kernel,
             int64_t *out, int64_t *pad_begin) {
  const int64_t stride = s.strides[axis];
  const int64_t extent = (kernel - 1) * s.dilations[axis] + 1;
  int64_t begin = 0, end = 0;
  if (s.pads.size() == 4) {
    begin = s.pads[axis];
    end = s.pads[axis + 2];
  } else if (s.padding == 1) {
    const int64_t o = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((o - 1) * stride + extent - in, 0);
    begin = total / 2;
    end = total - begin;
  }
  *out = (in + begin + end - extent) / stride + 1;
  *pad_begin = begin;
}

std::vector<double> RefDepthwise(const DwSpec &s, const std::vector<float> &x,
                                 const std::vector<float> &w,
                                 const std::vector<float> &b,
                                 std::vector<int64_t> *shape) {
  const int64_t n = s.input[0], h = s.input[1], wd = s.input[2];
  const int64_t ch = s.input[3], mult = s.multiplier;
  const int64_t kh = s.kernel_h, kw = s.kernel_w;
  int64_t oh_n, ow_n, pt, pl;
  RefAxis(s, 0, h, kh, &oh_n, &pt);
  RefAxis(s, 1, wd, kw, &ow_n, &pl);
  *shape = {n, oh_n, ow_n, ch * mult};
  std::vector<double> y(n * oh_n * ow_n * ch * mult);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oh = 0; oh < oh_n; ++oh)
      for (int64_t ow = 0; ow < ow_n; ++ow)
        for (int64_t c = 0; c < ch; ++c)
          for (int64_t m = 0; m < mult; ++m) {
            double sum = b.empty() ? 0.0 : b[c * mult + m];
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t ih = oh * s.strides[0] - pt + i * s.dilations[0];
                const int64_t iw = ow * s.strides[1] - pl + j * s.dilations[1];
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                sum +=
                    static_cast<double>(x[((in * h + ih) * wd + iw) * ch + c]) *
                    w[((i * kw + j) * ch + c) * mult + m];
              }
            y[(((in * oh_n + oh) * ow_n + ow) * ch + c) * mult + m] =
                RefActivate(s, sum, c * mult + m);
          }
  return y;
}

void AddArgs(const DwSpec &s, OpTester *t) {
  if (s.strides != std::vector<int64_t>{1, 1}) t->ArgInts("strides", s.strides);
  if (s.dilations != std::vector<int64_t>{1, 1}) {
    t->ArgInts("dilations", s.dilations);
  }
  if (s.padding != 0) t->Arg("padding", s.padding);
  if (!s.pads.empty()) t->ArgInts("padding_values", s.pads);
  if (!s.activation.empty()) {
    t->ArgString("activation", s.activation);
    t->ArgFloat("max_limit", s.max_limit);
    t->ArgFloat("activation_coefficient", s.coefficient);
  }
}

std::vector<int64_t> FilterShape(const DwSpec &s) {
  return {s.kernel_h, s.kernel_w, s.input[3], s.multiplier};
}

void CheckDepthwise(const DwSpec &s, int threads = 1,
                    WeightStorage storage = WeightStorage::kFloat32) {
  const int64_t out_c = s.input[3] * s.multiplier;
  const auto x = RandomFloats(Product(s.input), -1, 1, 31);
  const auto w = RandomFloats(Product(FilterShape(s)), -1, 1, 32);
  const std::vector<float> b =
      s.bias ? RandomFloats(out_c, -1, 1, 33) : std::vector<float>();
  OpTester t("DepthwiseConv2d");
  t.Input("x", s.input, x);
  const int64_t slope_size = static_cast<int64_t>(s.slope.size());
  if (s.fed_weights) {
    t.Input("w", FilterShape(s), w);
    if (s.bias) t.Input("b", {out_c}, b);
    if (slope_size > 0) t.Input("slope", {slope_size}, s.slope);
  } else {
    t.Constant("w", FilterShape(s), w);
    if (s.bias) t.Constant("b", {out_c}, b);
    if (slope_size > 0) t.Constant("slope", {slope_size}, s.slope);
  }
  t.Output("y").Threads(threads).Storage(storage);
  AddArgs(s, &t);
  const MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  std::vector<int64_t> shape;
  const std::vector<double> expected = RefDepthwise(s, x, w, b, &shape);
  EXPECT_EQ(t.output(0).shape, shape);
  // Sums of kh * kw float products; fp16 weights err by up to 2^-11 each.
  const double terms = static_cast<double>(s.kernel_h * s.kernel_w);
  const bool fp32 = storage == WeightStorage::kFloat32;
  const double tol = fp32 ? 1e-5 : 1e-3;
  EXPECT_TRUE(
      AllClose(t.output(0).floats, expected, tol, tol * std::sqrt(terms)));
}

DwSpec Spec(std::vector<int64_t> input, int64_t multiplier, int64_t kernel_h,
            int64_t kernel_w) {
  DwSpec s;
  s.input = std::move(input);
  s.multiplier = multiplier;
  s.kernel_h = kernel_h;
  s.kernel_w = kernel_w;
  return s;
}

// Runs a spec with the given filter shape, expected to fail; the message.
std::string DepthwiseError(const DwSpec &s,
                           const std::vector<int64_t> &w_shape) {
  OpTester t("DepthwiseConv2d", "dw");
  t.Input("x", s.input, RandomFloats(Product(s.input)))
      .Constant("w", w_shape, RandomFloats(Product(w_shape)))
      .Output("y");
  AddArgs(s, &t);
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  return status.information();
}

TEST(DepthwiseConv2dTest, SamePaddingOddSizeMatchesReference) {
  for (int threads : {1, 2}) {
    DwSpec s = Spec({2, 7, 9, 5}, 1, 3, 3);
    s.padding = 1;
    CheckDepthwise(s, threads);
    s = Spec({1, 6, 5, 17}, 1, 5, 5);
    s.padding = 1;
    CheckDepthwise(s, threads);
  }
}

TEST(DepthwiseConv2dTest, MultiplierTwoMatchesReference) {
  for (int threads : {1, 2}) {
    DwSpec s = Spec({1, 8, 7, 3}, 2, 5, 5);
    s.strides = {2, 2};
    s.padding = 1;
    CheckDepthwise(s, threads);
    s = Spec({2, 11, 9, 17}, 2, 3, 3);
    s.dilations = {2, 2};
    s.bias = false;
    CheckDepthwise(s, threads);
  }
}

TEST(DepthwiseConv2dTest, ValidStrideTwoMatchesReference) {
  DwSpec s = Spec({1, 13, 10, 7}, 1, 3, 3);
  s.strides = {2, 2};
  CheckDepthwise(s);
}

TEST(DepthwiseConv2dTest, ExplicitAsymmetricPadsMatchReference) {
  DwSpec s = Spec({1, 8, 6, 5}, 1, 7, 1);
  s.pads = {2, 1, 3, 0};
  CheckDepthwise(s);
  s = Spec({2, 5, 7, 3}, 2, 3, 3);
  s.pads = {0, 2, 1, 1};
  s.strides = {1, 2};
  CheckDepthwise(s, 2);
}

TEST(DepthwiseConv2dTest, OneByOneKernelAndSizeOneInputMatchReference) {
  DwSpec s = Spec({2, 5, 7, 17}, 2, 1, 1);
  s.bias = false;
  CheckDepthwise(s);
  s = Spec({1, 1, 1, 3}, 1, 3, 3);
  s.padding = 1;
  CheckDepthwise(s);
}

TEST(DepthwiseConv2dTest, FusedActivationsMatchReference) {
  DwSpec s = Spec({1, 6, 7, 5}, 2, 3, 3);
  s.padding = 1;
  s.activation = "RELU";
  CheckDepthwise(s);
  s.activation = "RELUX";
  s.max_limit = 0.4f;
  CheckDepthwise(s);
  s.activation = "LEAKYRELU";
  s.coefficient = 0.2f;
  CheckDepthwise(s, 2);
}

TEST(DepthwiseConv2dTest, Fp16WeightsMatchReferenceLoosely) {
  DwSpec s = Spec({1, 7, 6, 5}, 2, 3, 3);
  s.padding = 1;
  CheckDepthwise(s, 1, WeightStorage::kFloat16);
}

TEST(DepthwiseConv2dTest, GroupEqualToChannelsIsAccepted) {
  const DwSpec s = Spec({1, 5, 5, 3}, 1, 3, 3);
  const auto x = RandomFloats(75, -1, 1, 31);
  const auto w = RandomFloats(27, -1, 1, 32);
  OpTester t("DepthwiseConv2d");
  t.Input("x", s.input, x).Constant("w", FilterShape(s), w).Output("y");
  t.Arg("group", 3);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  std::vector<int64_t> shape;
  EXPECT_TRUE(AllClose(t.output(0).floats, RefDepthwise(s, x, w, {}, &shape),
                       1e-5, 3e-5));
}

TEST(DepthwiseConv2dTest, FilterChannelMismatchIsAnError) {
  const std::string msg =
      DepthwiseError(Spec({1, 5, 5, 3}, 1, 3, 3), {3, 3, 4, 1});
  EXPECT_NE(msg.find("filter"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dw"), std::string::npos) << msg;
}

TEST(DepthwiseConv2dTest, GroupOtherThanChannelsIsAnError) {
  OpTester t("DepthwiseConv2d");
  t.Input("x", {1, 5, 5, 4}, RandomFloats(100))
      .Constant("w", {3, 3, 4, 1}, RandomFloats(36))
      .Output("y")
      .Arg("group", 2);
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("group"), std::string::npos)
      << status.information();
}

TEST(DepthwiseConv2dTest, KernelLargerThanPaddedInputIsAnError) {
  const std::string msg =
      DepthwiseError(Spec({1, 4, 4, 2}, 1, 5, 5), {5, 5, 2, 1});
  EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
}

TEST(DepthwiseConv2dTest, BadPaddingArgumentsAreErrors) {
  DwSpec s = Spec({1, 5, 5, 2}, 1, 3, 3);
  s.padding = -1;
  EXPECT_NE(DepthwiseError(s, {3, 3, 2, 1}).find("padding"), std::string::npos);
  s.padding = 0;
  s.pads = {0, 0, -2, 0};
  EXPECT_NE(DepthwiseError(s, {3, 3, 2, 1}).find("padding_values"),
            std::string::npos);
}

TEST(DepthwiseConv2dTest, FilterAndBiasFedAtRunTimeMatchReference) {
  for (int threads : {1, 2}) {
    DwSpec s = Spec({2, 6, 7, 5}, 2, 3, 3);
    s.strides = {2, 1};
    s.pads = {1, 1, 0, 2};
    s.fed_weights = true;
    CheckDepthwise(s, threads);
  }
}

TEST(DepthwiseConv2dTest, WrongRankIsAnError) {
  const std::string msg =
      DepthwiseError(Spec({1, 5, 5, 3}, 1, 3, 3), {3, 3, 3});
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
}

TEST(DepthwiseConv2dTest, BiasOfWrongSizeIsAnError) {
  OpTester t("DepthwiseConv2d");
  t.Input("x", {1, 5, 5, 3}, RandomFloats(75))
      .Constant("w", {3, 3, 3, 2}, RandomFloats(54))
      .Constant("b", {3}, RandomFloats(3))
      .Output("y");
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("bias"), std::string::npos)
      << status.information();
}

TEST(DepthwiseConv2dTest, FusedPReluMatchesReference) {
  for (int threads : {1, 2}) {
    DwSpec s = Spec({2, 6, 7, 5}, 2, 3, 3);
    s.padding = 1;
    s.activation = "PRELU";
    s.slope = RandomFloats(10, -0.5f, 0.5f, 34);
    CheckDepthwise(s, threads);
    s.slope = {0.25f};  // one slope shared by every channel
    CheckDepthwise(s, threads);
    s.slope = RandomFloats(10, -0.5f, 0.5f, 35);
    s.fed_weights = true;  // slope fed at run time, as filter and bias
    s.strides = {2, 1};
    CheckDepthwise(s, threads);
  }
}

// Runs a DepthwiseConv2d with a fused PRELU on input x [1, 5, 5, 3] and
// filter [3, 3, 3, 2] (6 output channels) with `extra` constants after the
// filter; returns the status.
MaceStatus RunPRelu(const std::vector<std::pair<std::string, int64_t>> &extra) {
  OpTester t("DepthwiseConv2d", "dw");
  t.Input("x", {1, 5, 5, 3}, RandomFloats(75))
      .Constant("w", {3, 3, 3, 2}, RandomFloats(54));
  for (const auto &input : extra) {
    t.Constant(input.first, {input.second}, RandomFloats(input.second));
  }
  t.Output("y").ArgString("activation", "PRELU");
  return t.Run();
}

TEST(DepthwiseConv2dTest, FusedPReluSlopeSizeMismatchIsAnError) {
  const MaceStatus status = RunPRelu({{"b", 6}, {"slope", 3}});
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("slope"), std::string::npos)
      << status.information();
  EXPECT_NE(status.information().find("dw"), std::string::npos)
      << status.information();
}

TEST(DepthwiseConv2dTest, FusedPReluWithoutBiasOrSlopeIsAnError) {
  for (const auto &extra :
       std::vector<std::vector<std::pair<std::string, int64_t>>>{
           {}, {{"slope", 6}}, {{"b", 6}}}) {
    const MaceStatus status = RunPRelu(extra);
    EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
    EXPECT_NE(status.information().find("PRELU"), std::string::npos)
        << status.information();
  }
}

}  // namespace
}  // namespace test
}  // namespace mace
