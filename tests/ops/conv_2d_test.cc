// Conv2D against a float64 reference written from the definition:
// y[n, oh, ow, oc] = act(b[oc] + sum over kh, kw, ic of
//   x[n, oh * sh - pad_top + kh * dh, ow * sw - pad_left + kw * dw,
//     g * Cin/group + ic] * w[oc, kh, kw, ic]), g = oc / (Cout / group),
// cells outside the input reading zero.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/kernels/winograd_1d.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

struct ConvSpec {
  std::vector<int64_t> input;  // N, H, W, Cin
  int64_t out_c = 1, kernel_h = 1, kernel_w = 1;
  int64_t group = 1;
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> dilations = {1, 1};
  int padding = 0;            // 0 VALID, 1 SAME
  std::vector<int64_t> pads;  // padding_values: 2 or 4 values
  bool bias = true;
  std::string activation;  // empty: none
  float max_limit = 6.0f;
  float coefficient = 0.0f;
  bool fed_weights = false;  // filter and bias as graph inputs fed at Run
  int winograd = -1;         // the `winograd` arg; -1: not given
};

double RefActivate(const ConvSpec &s, double v) {
  if (s.activation == "RELU") return std::max(v, 0.0);
  if (s.activation == "RELUX") {
    return std::min(std::max(v, 0.0), static_cast<double>(s.max_limit));
  }
  if (s.activation == "LEAKYRELU") return v >= 0 ? v : v * s.coefficient;
  return v;
}

// Output size and leading pad of one axis (axis 0: h, 1: w).
void RefAxis(const ConvSpec &s, int axis, int64_t in, int64_t kernel,
             int64_t *out, int64_t *pad_begin) {
  const int64_t stride = s.strides[axis];
  const int64_t extent = (kernel - 1) * s.dilations[axis] + 1;
  int64_t begin = 0, end = 0;
  if (s.pads.size() == 4) {
    begin = s.pads[axis];
    end = s.pads[axis + 2];
  } else if (s.pads.size() == 2) {
    begin = s.pads[axis] / 2;
    end = s.pads[axis] - begin;
  } else if (s.padding == 1) {
    const int64_t o = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((o - 1) * stride + extent - in, 0);
    begin = total / 2;
    end = total - begin;
  }
  *out = (in + begin + end - extent) / stride + 1;
  *pad_begin = begin;
}

std::vector<double> RefConv(const ConvSpec &s, const std::vector<float> &x,
                            const std::vector<float> &w,
                            const std::vector<float> &b,
                            std::vector<int64_t> *shape) {
  const int64_t n = s.input[0], h = s.input[1], wd = s.input[2];
  const int64_t cin = s.input[3], cout = s.out_c;
  const int64_t kh = s.kernel_h, kw = s.kernel_w;
  const int64_t cpg = cin / s.group, opg = cout / s.group;
  int64_t oh_n, ow_n, pt, pl;
  RefAxis(s, 0, h, kh, &oh_n, &pt);
  RefAxis(s, 1, wd, kw, &ow_n, &pl);
  *shape = {n, oh_n, ow_n, cout};
  std::vector<double> y(n * oh_n * ow_n * cout);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oh = 0; oh < oh_n; ++oh)
      for (int64_t ow = 0; ow < ow_n; ++ow)
        for (int64_t oc = 0; oc < cout; ++oc) {
          const int64_t g = oc / opg;
          double sum = b.empty() ? 0.0 : b[oc];
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t ih = oh * s.strides[0] - pt + i * s.dilations[0];
              const int64_t iw = ow * s.strides[1] - pl + j * s.dilations[1];
              if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
              for (int64_t ic = 0; ic < cpg; ++ic) {
                sum += static_cast<double>(
                           x[((in * h + ih) * wd + iw) * cin + g * cpg + ic]) *
                       w[((oc * kh + i) * kw + j) * cpg + ic];
              }
            }
          y[((in * oh_n + oh) * ow_n + ow) * cout + oc] = RefActivate(s, sum);
        }
  return y;
}

void AddArgs(const ConvSpec &s, OpTester *t) {
  if (s.strides != std::vector<int64_t>{1, 1}) t->ArgInts("strides", s.strides);
  if (s.dilations != std::vector<int64_t>{1, 1}) {
    t->ArgInts("dilations", s.dilations);
  }
  if (s.padding != 0) t->Arg("padding", s.padding);
  if (!s.pads.empty()) t->ArgInts("padding_values", s.pads);
  if (s.group != 1) t->Arg("group", s.group);
  if (s.winograd != -1) t->Arg("winograd", s.winograd);
  if (!s.activation.empty()) {
    t->ArgString("activation", s.activation);
    t->ArgFloat("max_limit", s.max_limit);
    t->ArgFloat("activation_coefficient", s.coefficient);
  }
}

// Products summed in float: rounding error grows like sqrt(terms).
double SumTolerance(const ConvSpec &s, double per_term) {
  const int64_t terms = s.kernel_h * s.kernel_w * s.input[3] / s.group;
  return per_term * std::sqrt(static_cast<double>(terms));
}

// per_term: the float32 error allowed per summed product (Winograd F(6,3)
// needs more: its transforms amplify rounding, see mace/kernels/winograd.h).
void CheckConv(const ConvSpec &s, int threads = 1,
               WeightStorage storage = WeightStorage::kFloat32,
               double per_term = 1e-5) {
  const std::vector<int64_t> w_shape = {s.out_c, s.kernel_h, s.kernel_w,
                                        s.input[3] / s.group};
  const auto x = RandomFloats(Product(s.input), -1, 1, 21);
  const auto w = RandomFloats(Product(w_shape), -1, 1, 22);
  const std::vector<float> b =
      s.bias ? RandomFloats(s.out_c, -1, 1, 23) : std::vector<float>();
  OpTester t("Conv2D");
  t.Input("x", s.input, x);
  if (s.fed_weights) {
    t.Input("w", w_shape, w);
    if (s.bias) t.Input("b", {s.out_c}, b);
  } else {
    t.Constant("w", w_shape, w);
    if (s.bias) t.Constant("b", {s.out_c}, b);
  }
  t.Output("y").Threads(threads).Storage(storage);
  AddArgs(s, &t);
  const MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  std::vector<int64_t> shape;
  const std::vector<double> expected = RefConv(s, x, w, b, &shape);
  EXPECT_EQ(t.output(0).shape, shape);
  // fp16 weights carry a relative error of up to 2^-11 each.
  const bool fp32 = storage == WeightStorage::kFloat32;
  EXPECT_TRUE(AllClose(t.output(0).floats, expected, fp32 ? per_term : 1e-3,
                       SumTolerance(s, fp32 ? per_term : 1e-3)));
}

// Runs a spec expected to fail at init and returns the message.
std::string ConvError(const ConvSpec &s, const std::vector<int64_t> &w_shape,
                      const std::vector<int64_t> &b_shape = {}) {
  OpTester t("Conv2D", "conv");
  t.Input("x", s.input, RandomFloats(Product(s.input)))
      .Constant("w", w_shape, RandomFloats(Product(w_shape)));
  if (!b_shape.empty()) t.Constant("b", b_shape, RandomFloats(b_shape[0]));
  t.Output("y");
  AddArgs(s, &t);
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  return status.information();
}

ConvSpec Spec(std::vector<int64_t> input, int64_t out_c, int64_t kernel_h,
              int64_t kernel_w) {
  ConvSpec s;
  s.input = std::move(input);
  s.out_c = out_c;
  s.kernel_h = kernel_h;
  s.kernel_w = kernel_w;
  return s;
}

TEST(Conv2dTest, SamePaddingOddSizeMatchesReference) {
  for (int threads : {1, 2}) {
    ConvSpec s = Spec({2, 7, 9, 3}, 5, 3, 3);
    s.padding = 1;
    CheckConv(s, threads);
    s = Spec({1, 5, 6, 17}, 3, 5, 5);
    s.padding = 1;
    CheckConv(s, threads);
  }
}

TEST(Conv2dTest, ValidPaddingStrideAndDilationMatchReference) {
  ConvSpec s = Spec({1, 13, 11, 5}, 17, 3, 3);
  s.strides = {2, 2};
  s.dilations = {2, 2};
  CheckConv(s);
  s = Spec({2, 9, 8, 3}, 5, 3, 3);
  s.strides = {2, 1};
  s.padding = 1;
  CheckConv(s, 2);
  s = Spec({1, 7, 12, 4}, 3, 3, 3);
  s.dilations = {1, 2};
  s.padding = 1;
  CheckConv(s);
}

TEST(Conv2dTest, ExplicitAsymmetricPadsMatchReference) {
  ConvSpec s = Spec({1, 8, 6, 3}, 5, 7, 1);
  s.pads = {1, 0, 2, 3};
  CheckConv(s);
  s = Spec({2, 7, 9, 5}, 7, 5, 5);
  s.pads = {0, 2, 1, 0};
  s.strides = {2, 1};
  CheckConv(s, 2);
}

TEST(Conv2dTest, TwoPaddingValuesAreTotalsWithTheSmallerHalfFirst) {
  ConvSpec s = Spec({1, 6, 5, 3}, 4, 3, 3);
  s.pads = {3, 1};
  CheckConv(s);
}

TEST(Conv2dTest, OneByOneKernelWithoutBiasMatchesReference) {
  ConvSpec s = Spec({2, 5, 7, 17}, 7, 1, 1);
  s.bias = false;
  CheckConv(s);
  s.strides = {2, 2};
  CheckConv(s, 2);
}

TEST(Conv2dTest, SizeOneInputsMatchReference) {
  CheckConv(Spec({1, 1, 1, 1}, 1, 1, 1));
  ConvSpec s = Spec({3, 1, 1, 5}, 3, 3, 3);
  s.padding = 1;
  CheckConv(s);
}

TEST(Conv2dTest, GroupsMatchReference) {
  for (int threads : {1, 2}) {
    ConvSpec s = Spec({1, 7, 7, 6}, 9, 3, 3);
    s.group = 3;
    s.padding = 1;
    CheckConv(s, threads);
    s = Spec({2, 5, 6, 5}, 10, 3, 3);  // one input channel per group
    s.group = 5;
    s.bias = false;
    CheckConv(s, threads);
    s = Spec({1, 9, 9, 4}, 6, 3, 3);
    s.group = 2;
    s.dilations = {2, 2};
    s.strides = {2, 2};
    s.pads = {2, 1, 1, 2};
    CheckConv(s, threads);
  }
}

TEST(Conv2dTest, FusedActivationsMatchReference) {
  ConvSpec s = Spec({1, 6, 7, 3}, 5, 3, 3);
  s.padding = 1;
  s.activation = "RELU";
  CheckConv(s);
  s.activation = "RELUX";
  s.max_limit = 0.5f;
  CheckConv(s);
  s.activation = "LEAKYRELU";
  s.coefficient = 0.1f;
  CheckConv(s, 2);
}

// 1 x r and r x 1 windows with channels enough for Winograd along one axis
// (mace/kernels/winograd_1d.h), with fused activations, on 1 and 2
// threads; the `winograd` arg 0 keeps them on im2col.
TEST(Conv2dTest, FactorisedWindowsMatchReference) {
  struct Window {
    std::vector<int64_t> input;
    int64_t out_c, kernel_h, kernel_w;
  };
  const Window windows[] = {{{1, 17, 13, 64}, 64, 1, 7},
                            {{2, 13, 17, 64}, 64, 7, 1},
                            {{1, 9, 12, 96}, 96, 1, 3},
                            {{1, 12, 9, 96}, 96, 3, 1},
                            {{1, 11, 10, 48}, 32, 5, 1}};
  for (const Window &window : windows) {
    kernels::ConvGeometry g;
    g.batch = window.input[0];
    g.in_h = g.out_h = window.input[1];
    g.in_w = g.out_w = window.input[2];
    g.in_c = window.input[3];
    g.out_c = window.out_c;
    g.kernel_h = window.kernel_h;
    g.kernel_w = window.kernel_w;
    g.pad_top = (g.kernel_h - 1) / 2;
    g.pad_left = (g.kernel_w - 1) / 2;
    ASSERT_NE(kernels::Winograd1dTilePoints(g), 0);
    for (int threads : {1, 2}) {
      ConvSpec s =
          Spec(window.input, window.out_c, window.kernel_h, window.kernel_w);
      s.padding = 1;
      CheckConv(s, threads);
      s.activation = "LEAKYRELU";
      s.coefficient = 0.1f;
      CheckConv(s, threads);
      s.activation = "RELU";
      s.winograd = 0;
      CheckConv(s, threads);
    }
  }
}

TEST(Conv2dTest, Fp16WeightsMatchReferenceLoosely) {
  ConvSpec s = Spec({1, 7, 6, 5}, 7, 3, 3);
  s.padding = 1;
  CheckConv(s, 1, WeightStorage::kFloat16);
}

TEST(Conv2dTest, FilterChannelMismatchIsAnError) {
  const std::string msg = ConvError(Spec({1, 5, 5, 3}, 4, 3, 3), {4, 3, 3, 2});
  EXPECT_NE(msg.find("filter"), std::string::npos) << msg;
  EXPECT_NE(msg.find("conv"), std::string::npos) << msg;
}

TEST(Conv2dTest, GroupNotDividingChannelsIsAnError) {
  ConvSpec s = Spec({1, 5, 5, 6}, 5, 3, 3);
  s.group = 2;
  const std::string msg = ConvError(s, {5, 3, 3, 3});
  EXPECT_NE(msg.find("group"), std::string::npos) << msg;
  s.group = 0;
  EXPECT_NE(ConvError(s, {5, 3, 3, 6}).find("group"), std::string::npos);
}

TEST(Conv2dTest, KernelLargerThanPaddedInputIsAnError) {
  ConvSpec s = Spec({1, 3, 3, 2}, 2, 5, 5);
  s.pads = {1, 0, 0, 0};
  const std::string msg = ConvError(s, {2, 5, 5, 2});
  EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
}

TEST(Conv2dTest, BadPaddingArgumentsAreErrors) {
  ConvSpec s = Spec({1, 5, 5, 2}, 2, 3, 3);
  s.padding = 7;
  EXPECT_NE(ConvError(s, {2, 3, 3, 2}).find("padding"), std::string::npos);
  s.padding = 0;
  s.pads = {1, -1, 0, 0};
  EXPECT_NE(ConvError(s, {2, 3, 3, 2}).find("padding_values"),
            std::string::npos);
  s.pads = {1, 1, 1};
  EXPECT_NE(ConvError(s, {2, 3, 3, 2}).find("padding_values"),
            std::string::npos);
  s.pads = {};
  s.strides = {0, 1};
  EXPECT_NE(ConvError(s, {2, 3, 3, 2}).find("strides"), std::string::npos);
}

TEST(Conv2dTest, WrongRankIsAnError) {
  OpTester t("Conv2D", "conv");
  t.Input("x", {5, 5, 3}, RandomFloats(75))
      .Constant("w", {2, 3, 3, 3}, RandomFloats(54))
      .Output("y");
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("rank"), std::string::npos)
      << status.information();
}

TEST(Conv2dTest, BiasOfWrongSizeIsAnError) {
  const std::string msg =
      ConvError(Spec({1, 5, 5, 3}, 4, 3, 3), {4, 3, 3, 3}, {5});
  EXPECT_NE(msg.find("bias"), std::string::npos) << msg;
}

TEST(Conv2dTest, WrongArgumentKindIsAnError) {
  OpTester t("Conv2D", "conv");
  t.Input("x", {1, 5, 5, 3}, RandomFloats(75))
      .Constant("w", {2, 3, 3, 3}, RandomFloats(54))
      .Output("y")
      .Arg("strides", 2);
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("strides"), std::string::npos)
      << status.information();
}

TEST(Conv2dTest, NchwIsUnsupportedAndFusedPreluNeedsASlope) {
  ConvSpec s = Spec({1, 5, 5, 3}, 2, 3, 3);
  s.activation = "PRELU";
  EXPECT_NE(ConvError(s, {2, 3, 3, 3}).find("PRELU"), std::string::npos);
  OpTester t("Conv2D", "conv");
  t.Input("x", {1, 5, 5, 3}, RandomFloats(75))
      .Constant("w", {2, 3, 3, 3}, RandomFloats(54))
      .Output("y")
      .Arg("data_format", 2);
  const MaceStatus status = t.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  EXPECT_NE(status.information().find("NCHW"), std::string::npos)
      << status.information();
}

TEST(Conv2dTest, FilterAndBiasFedAtRunTimeMatchReference) {
  for (int threads : {1, 2}) {
    ConvSpec s = Spec({2, 7, 6, 6}, 9, 3, 3);
    s.group = 3;
    s.pads = {1, 0, 2, 1};
    s.fed_weights = true;
    CheckConv(s, threads);
    s = Spec({1, 5, 5, 3}, 4, 1, 1);
    s.bias = false;
    s.fed_weights = true;
    CheckConv(s, threads);
  }
}

TEST(Conv2dTest, WinogradArgumentForcesEachTileAndMatchesReference) {
  for (int winograd : {-1, 0, 2, 4, 6}) {
    for (int threads : {1, 2}) {
      ConvSpec s = Spec({2, 11, 9, 17}, 20, 3, 3);
      s.padding = 1;
      s.winograd = winograd;
      s.activation = "RELUX";
      CheckConv(s, threads, WeightStorage::kFloat32,
                winograd == 6 ? 5e-5 : 1e-5);
      s = Spec({1, 14, 15, 32}, 5, 3, 3);  // VALID, partial edge tiles
      s.winograd = winograd;
      CheckConv(s, threads, WeightStorage::kFloat32,
                winograd == 6 ? 5e-5 : 1e-5);
      // 5x5: F(2,5), and F(4,5) for 4 and 6.
      s = Spec({1, 13, 11, 24}, 18, 5, 5);
      s.padding = 1;
      s.winograd = winograd;
      s.activation = "RELU";
      CheckConv(s, threads, WeightStorage::kFloat32,
                winograd >= 4 ? 5e-5 : 1e-5);
    }
  }
}

TEST(Conv2dTest, WinogradArgumentOnOtherWindowsRunsIm2col) {
  ConvSpec s = Spec({1, 9, 8, 16}, 16, 3, 3);
  s.strides = {2, 2};
  s.padding = 1;
  s.winograd = 4;
  CheckConv(s);
  s = Spec({1, 9, 8, 16}, 16, 7, 7);
  s.padding = 1;
  s.winograd = 2;
  CheckConv(s);
  s = Spec({1, 9, 8, 16}, 16, 3, 3);
  s.group = 2;
  s.winograd = 6;
  CheckConv(s);
}

TEST(Conv2dTest, WinogradArgumentOutsideTheTilesIsAnError) {
  for (int winograd : {-2, 1, 3, 8}) {
    ConvSpec s = Spec({1, 6, 6, 4}, 4, 3, 3);
    s.winograd = winograd;
    const std::string message = ConvError(s, {4, 3, 3, 4});
    EXPECT_NE(message.find("winograd"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace test
}  // namespace mace

namespace mace {
namespace test {
namespace {

// Winograd and im2col apply a fused PRELU in their epilogues, per output
// row of a tile or per GEMM block: each value must get its channel's slope.
TEST(Conv2dTest, FusedPReluOnWinogradAndIm2colMatchesReference) {
  ConvSpec s = Spec({1, 9, 7, 19}, 37, 3, 3);
  s.padding = 1;
  const std::vector<int64_t> w_shape = {s.out_c, 3, 3, s.input[3]};
  const auto x = RandomFloats(Product(s.input), -1, 1, 71);
  const auto w = RandomFloats(Product(w_shape), -1, 1, 72);
  const auto b = RandomFloats(s.out_c, -0.5f, 0.5f, 73);
  const auto slope = RandomFloats(s.out_c, 0.0f, 0.5f, 74);
  std::vector<int64_t> shape;
  std::vector<double> expected = RefConv(s, x, w, b, &shape);
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] < 0) expected[i] *= slope[i % s.out_c];
  }
  for (int winograd : {0, 2, 4, 6}) {
    for (int threads : {1, 2}) {
      OpTester t("Conv2D", "conv");
      t.Input("x", s.input, x)
          .Constant("w", w_shape, w)
          .Constant("b", {s.out_c}, b)
          .Constant("slope", {s.out_c}, slope)
          .Output("y")
          .ArgString("activation", "PRELU")
          .Arg("padding", 1)
          .Arg("winograd", winograd)
          .Threads(threads);
      ASSERT_EQ(t.Run(), MaceStatus::MACE_SUCCESS);
      EXPECT_EQ(t.output(0).shape, shape);
      EXPECT_TRUE(
          AllClose(t.output(0).floats, expected, 1e-4, SumTolerance(s, 5e-5)))
          << "winograd " << winograd << " threads " << threads;
    }
  }
}

// A 1x1 convolution runs on the packed SGEMM, whose epilogue sees the
// output in column blocks: a fused PRELU must pick each block's slopes.
TEST(Conv2dTest, FusedPReluOnPointwiseGemmPathMatchesReference) {
  const int64_t h = 5, w = 4, cin = 19, cout = 70;
  const std::vector<float> x = RandomFloats(h * w * cin, -1, 1, 61);
  const std::vector<float> filter = RandomFloats(cout * cin, -1, 1, 62);
  const std::vector<float> bias = RandomFloats(cout, -0.5f, 0.5f, 63);
  const std::vector<float> slope = RandomFloats(cout, 0.0f, 0.5f, 64);
  std::vector<double> expected(h * w * cout);
  for (int64_t p = 0; p < h * w; ++p) {
    for (int64_t o = 0; o < cout; ++o) {
      double sum = bias[o];
      for (int64_t c = 0; c < cin; ++c) {
        sum += double(x[p * cin + c]) * filter[o * cin + c];
      }
      expected[p * cout + o] = sum >= 0 ? sum : sum * slope[o];
    }
  }
  for (int threads : {1, 2}) {
    OpTester t("Conv2D", "conv");
    t.Input("x", {1, h, w, cin}, x)
        .Constant("w", {cout, 1, 1, cin}, filter)
        .Constant("b", {cout}, bias)
        .Constant("slope", {cout}, slope)
        .Output("y")
        .ArgString("activation", "PRELU")
        .Threads(threads);
    ASSERT_EQ(t.Run(), MaceStatus::MACE_SUCCESS);
    EXPECT_TRUE(AllClose(t.output(0).floats, expected, 1e-5, 1e-5));
  }
}

}  // namespace
}  // namespace test
}  // namespace mace

namespace mace {
namespace test {
namespace {

// The fused inputs after the bias (and a PRELU's slope): with
// `input_scale`, a scale of the input's channels [scale_images, 1, 1,
// Cin] (one row for every image, or one an image; scale_images 0: none);
// with `fused_add`, the addend, of the output's shape, last:
// y = act(conv(x * scale) + b + addend).
void CheckConvWithFusedInputs(const ConvSpec &s, int threads, double per_term,
                              bool with_addend, int64_t scale_images = 0) {
  const int64_t cin = s.input[3];
  const std::vector<int64_t> w_shape = {s.out_c, s.kernel_h, s.kernel_w,
                                        cin / s.group};
  const auto x = RandomFloats(Product(s.input), -1, 1, 81);
  const auto w = RandomFloats(Product(w_shape), -1, 1, 82);
  const auto b = RandomFloats(s.out_c, -1, 1, 83);
  const auto slope = RandomFloats(s.out_c, 0.0f, 0.5f, 84);
  const auto scale =
      RandomFloats(std::max<int64_t>(scale_images, 1) * cin, -2, 2, 86);
  std::vector<float> scaled_x = x;
  const int64_t image = Product(s.input) / s.input[0];
  for (size_t i = 0; scale_images > 0 && i < x.size(); ++i) {
    const int64_t n = scale_images == 1 ? 0 : static_cast<int64_t>(i) / image;
    scaled_x[i] = x[i] * scale[n * cin + static_cast<int64_t>(i) % cin];
  }
  ConvSpec linear = s;
  linear.activation.clear();
  std::vector<int64_t> shape;
  std::vector<double> expected = RefConv(linear, scaled_x, w, b, &shape);
  const auto addend = RandomFloats(Product(shape), -2, 2, 85);
  for (size_t i = 0; i < expected.size(); ++i) {
    if (with_addend) expected[i] += addend[i];
    expected[i] =
        s.activation == "PRELU"
            ? (expected[i] < 0 ? expected[i] * slope[i % s.out_c] : expected[i])
            : RefActivate(s, expected[i]);
  }
  OpTester t("Conv2D", "conv");
  t.Input("x", s.input, x);
  if (s.fed_weights) {
    t.Input("w", w_shape, w).Input("b", {s.out_c}, b);
  } else {
    t.Constant("w", w_shape, w).Constant("b", {s.out_c}, b);
  }
  if (s.activation == "PRELU") t.Constant("slope", {s.out_c}, slope);
  if (scale_images > 0) {
    t.Input("scale", {scale_images, 1, 1, cin}, scale);
    t.Arg("input_scale", 1);
  }
  if (with_addend) {
    t.Input("addend", shape, addend);
    t.Arg("fused_add", 1);
  }
  t.Output("y").Threads(threads);
  AddArgs(s, &t);
  const MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  EXPECT_EQ(t.output(0).shape, shape);
  EXPECT_TRUE(AllClose(t.output(0).floats, expected, per_term,
                       SumTolerance(s, per_term) + 2 * per_term));
}

// Every kernel path: Winograd's epilogue (each tile), im2col's and the 1x1
// GEMM's registers (edge column panels: 37 and 70 channels), strided and
// grouped im2col, the reference loop for fed weights; activations that
// clamp in registers (RELU, RELUX) and that do not (LEAKYRELU, PRELU).
TEST(Conv2dTest, FusedAddOnEveryPathMatchesReference) {
  for (const char *activation : {"", "RELU", "RELUX", "LEAKYRELU", "PRELU"}) {
    for (int threads : {1, 2}) {
      for (int winograd : {0, 2, 4, 6}) {
        ConvSpec s = Spec({1, 9, 7, 19}, 37, 3, 3);
        s.padding = 1;
        s.winograd = winograd;
        s.activation = activation;
        s.max_limit = 0.5f;
        s.coefficient = 0.1f;
        CheckConvWithFusedInputs(s, threads, winograd == 6 ? 5e-5 : 1e-5, true);
      }
      ConvSpec s = Spec({2, 5, 4, 19}, 70, 1, 1);
      s.activation = activation;
      s.coefficient = 0.1f;
      CheckConvWithFusedInputs(s, threads, 1e-5, true);
      s = Spec({1, 9, 8, 12}, 18, 3, 3);
      s.strides = {2, 2};
      s.group = 3;
      s.padding = 1;
      s.activation = activation;
      s.coefficient = 0.1f;
      CheckConvWithFusedInputs(s, threads, 1e-5, true);
      s.fed_weights = true;
      CheckConvWithFusedInputs(s, threads, 1e-5, true);
    }
  }
}

// Runs a Conv2D with fused_add = `fused_add` whose inputs are x, w, b and,
// when `addend_shape` is not empty, an addend of that shape.
MaceStatus RunFusedAdd(int fused_add, const std::vector<int64_t> &addend_shape,
                       bool bias = true) {
  OpTester t("Conv2D", "conv");
  t.Input("x", {1, 5, 5, 3}, RandomFloats(75))
      .Constant("w", {4, 3, 3, 3}, RandomFloats(108));
  if (bias) t.Constant("b", {4}, RandomFloats(4));
  if (!addend_shape.empty()) {
    t.Input("addend", addend_shape, RandomFloats(Product(addend_shape)));
  }
  t.Output("y").Arg("fused_add", fused_add);
  return t.Run();
}

TEST(Conv2dTest, BadFusedAddIsAnError) {
  ASSERT_EQ(RunFusedAdd(1, {1, 3, 3, 4}).code(), MaceStatus::MACE_SUCCESS);
  const MaceStatus bad_value = RunFusedAdd(2, {1, 3, 3, 4});
  EXPECT_NE(bad_value.information().find("fused_add"), std::string::npos)
      << bad_value.information();
  const MaceStatus wrong_shape = RunFusedAdd(1, {1, 3, 3, 5});
  EXPECT_NE(wrong_shape.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(wrong_shape.information().find("addend"), std::string::npos)
      << wrong_shape.information();
  const MaceStatus missing = RunFusedAdd(1, {});
  EXPECT_NE(missing.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(missing.information().find("fused addition needs 4 inputs"),
            std::string::npos)
      << missing.information();
  const MaceStatus no_bias = RunFusedAdd(1, {1, 3, 3, 4}, false);
  EXPECT_NE(no_bias.code(), MaceStatus::MACE_SUCCESS);
}

// Every way the scale is applied: into a small packed filter's rows (1x1
// read in place, edge column panels of 37 channels; a strided 3x3 gathered
// into im2col tiles; a strided 1x1 over rows wide enough to go by bands;
// a batch sharing one scale row), and into a copy of the input (a filter
// past the size a Run rescales: 300 x 70; one row an image; Winograd;
// groups; weights fed at run time); with activations clamped in registers
// and not, PRELU's slope before the scale and an addend after it.
TEST(Conv2dTest, InputScaleOnEveryPathMatchesReference) {
  struct Case {
    ConvSpec spec;
    int64_t scale_images;
  };
  std::vector<Case> cases;
  cases.push_back({Spec({1, 9, 7, 19}, 37, 1, 1), 1});
  ConvSpec strided = Spec({1, 9, 8, 12}, 18, 3, 3);
  strided.strides = {2, 2};
  strided.padding = 1;
  cases.push_back({strided, 1});
  ConvSpec wide = Spec({1, 3, 140, 8}, 16, 1, 1);
  wide.strides = {2, 2};
  cases.push_back({wide, 1});
  cases.push_back({Spec({2, 5, 4, 19}, 37, 1, 1), 1});
  cases.push_back({Spec({1, 5, 4, 300}, 70, 1, 1), 1});
  cases.push_back({Spec({2, 5, 4, 19}, 37, 1, 1), 2});
  ConvSpec winograd = Spec({1, 9, 7, 19}, 37, 3, 3);
  winograd.padding = 1;
  winograd.winograd = 2;
  cases.push_back({winograd, 1});
  ConvSpec grouped = strided;
  grouped.group = 3;
  cases.push_back({grouped, 1});
  ConvSpec fed = strided;
  fed.fed_weights = true;
  cases.push_back({fed, 1});
  for (size_t i = 0; i < cases.size(); ++i) {
    for (const char *activation : {"", "RELU", "LEAKYRELU", "PRELU"}) {
      for (bool with_addend : {false, true}) {
        for (int threads : {1, 2}) {
          SCOPED_TRACE("case " + std::to_string(i) + " " + activation +
                       (with_addend ? " addend" : "") + " threads " +
                       std::to_string(threads));
          ConvSpec s = cases[i].spec;
          s.activation = activation;
          s.coefficient = 0.1f;
          // The scale goes into the filter (a product rounded
          // differently) or the input, of range 2: twice a product's error.
          CheckConvWithFusedInputs(s, threads, 4e-5, with_addend,
                                   cases[i].scale_images);
        }
      }
    }
  }
}

// Runs a 1x1 Conv2D of x [2, 4, 4, 3] with input_scale = `input_scale`
// whose inputs are x, w, b and, when `scale_shape` is not empty, a scale
// of that shape.
MaceStatus RunInputScale(int input_scale,
                         const std::vector<int64_t> &scale_shape) {
  OpTester t("Conv2D", "conv");
  t.Input("x", {2, 4, 4, 3}, RandomFloats(96))
      .Constant("w", {5, 1, 1, 3}, RandomFloats(15))
      .Constant("b", {5}, RandomFloats(5));
  if (!scale_shape.empty()) {
    t.Input("scale", scale_shape, RandomFloats(Product(scale_shape)));
  }
  t.Output("y").Arg("input_scale", input_scale);
  return t.Run();
}

TEST(Conv2dTest, BadInputScaleIsAnError) {
  ASSERT_EQ(RunInputScale(1, {1, 1, 1, 3}).code(), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(RunInputScale(1, {2, 1, 1, 3}).code(), MaceStatus::MACE_SUCCESS);
  const MaceStatus bad_value = RunInputScale(2, {1, 1, 1, 3});
  EXPECT_NE(bad_value.information().find("'input_scale' must be 0 or 1"),
            std::string::npos)
      << bad_value.information();
  for (const std::vector<int64_t> &shape : std::vector<std::vector<int64_t>>{
           {1, 1, 1, 4}, {3, 1, 1, 3}, {1, 4, 4, 3}, {1, 3}}) {
    const MaceStatus wrong_shape = RunInputScale(1, shape);
    EXPECT_NE(wrong_shape.code(), MaceStatus::MACE_SUCCESS);
    EXPECT_NE(wrong_shape.information().find(
                  "input scale 'scale' must be float [2 or 1, 1, 1, 3]"),
              std::string::npos)
        << wrong_shape.information();
  }
  const MaceStatus missing = RunInputScale(1, {});
  EXPECT_NE(missing.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(missing.information().find("an input scale needs 4 inputs"),
            std::string::npos)
      << missing.information();
  // An int32 scale of the right shape.
  OpTester t("Conv2D", "conv");
  t.Input("x", {2, 4, 4, 3}, RandomFloats(96))
      .Constant("w", {5, 1, 1, 3}, RandomFloats(15))
      .Constant("b", {5}, RandomFloats(5))
      .InputInt("scale", {1, 1, 1, 3}, {1, 2, 3});
  t.Output("y").Arg("input_scale", 1);
  const MaceStatus int_scale = t.Run();
  EXPECT_NE(int_scale.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(int_scale.information().find("input scale 'scale' must be float"),
            std::string::npos)
      << int_scale.information();
}

}  // namespace
}  // namespace test
}  // namespace mace
