// Deconv2D and DepthwiseDeconv2d against a float64 reference that scatters
// each input pixel into the full output, full[i * s + k * d] += x[i] * w[k],
// and then crops pad_top / pad_left off the front (output o is full index
// o + pad_begin; indices past the full output hold only the bias). A
// fused PRELU takes its slope as the last input, after the bias.

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

struct DeconvSpec {
  std::vector<int64_t> input;  // N, H, W, Cin
  int64_t out_c = 1;           // depthwise: the multiplier
  int64_t kernel_h = 1, kernel_w = 1;
  bool depthwise = false;
  int64_t group = 1;
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> dilations = {1, 1};
  int padding = 0;                      // TF mode: 0 VALID, 1 SAME
  std::vector<int64_t> pads;            // padding_values, 4 values
  std::vector<int64_t> output_padding;  // empty: default [0, 0]
  std::vector<int64_t> output_shape;    // TF output_shape, if any
  bool shape_as_input = true;           // else as an int-list argument
  bool bias = true;
  std::string activation;  // empty: none
  float max_limit = 6.0f;
  float coefficient = 0.0f;
  bool fed_weights = false;  // filter and bias as graph inputs fed at Run
  std::vector<float> slope;  // PRELU: 1 or Cout values
};

int64_t OutChannels(const DeconvSpec &s) {
  return s.depthwise ? s.input[3] * s.out_c : s.out_c;
}

std::vector<int64_t> FilterShape(const DeconvSpec &s) {
  if (s.depthwise) return {s.kernel_h, s.kernel_w, s.input[3], s.out_c};
  return {s.out_c, s.kernel_h, s.kernel_w, s.input[3] / s.group};
}

double RefActivate(const DeconvSpec &s, double v, int64_t channel) {
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

// Output size and front crop of one axis (axis 0: h, 1: w).
void RefAxis(const DeconvSpec &s, int axis, int64_t in, int64_t kernel,
             int64_t *out, int64_t *crop) {
  const int64_t stride = s.strides[axis];
  const int64_t full = (in - 1) * stride + (kernel - 1) * s.dilations[axis] + 1;
  const int64_t extra = s.output_padding.empty() ? 0 : s.output_padding[axis];
  if (!s.pads.empty()) {
    *crop = s.pads[axis];
    *out = full - s.pads[axis] - s.pads[axis + 2] + extra;
    return;
  }
  // TF: the forward conv of the output pads the smaller half at the front.
  int64_t size = s.padding == 1 ? in * stride : full;
  if (!s.output_shape.empty()) size = s.output_shape[axis + 1];
  *crop = std::max<int64_t>(full - size, 0) / 2;
  *out = size + extra;
}

std::vector<double> RefDeconv(const DeconvSpec &s, const std::vector<float> &x,
                              const std::vector<float> &w,
                              const std::vector<float> &b,
                              std::vector<int64_t> *shape) {
  const int64_t n = s.input[0], h = s.input[1], wd = s.input[2];
  const int64_t cin = s.input[3], cout = OutChannels(s);
  const int64_t kh = s.kernel_h, kw = s.kernel_w;
  int64_t oh_n, ow_n, ct, cl;
  RefAxis(s, 0, h, kh, &oh_n, &ct);
  RefAxis(s, 1, wd, kw, &ow_n, &cl);
  *shape = {n, oh_n, ow_n, cout};
  std::vector<double> y(n * oh_n * ow_n * cout, 0.0);
  const int64_t cpg = cin / s.group, opg = cout / s.group;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ih = 0; ih < h; ++ih)
      for (int64_t iw = 0; iw < wd; ++iw)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t oh = ih * s.strides[0] + i * s.dilations[0] - ct;
            const int64_t ow = iw * s.strides[1] + j * s.dilations[1] - cl;
            if (oh < 0 || oh >= oh_n || ow < 0 || ow >= ow_n) continue;
            const float *xp = &x[((in * h + ih) * wd + iw) * cin];
            double *yp = &y[((in * oh_n + oh) * ow_n + ow) * cout];
            for (int64_t oc = 0; oc < cout; ++oc) {
              if (s.depthwise) {
                const int64_t c = oc / s.out_c;
                yp[oc] += static_cast<double>(xp[c]) *
                          w[((i * kw + j) * cin) * s.out_c + oc];
                continue;
              }
              const int64_t g = oc / opg;
              for (int64_t ic = 0; ic < cpg; ++ic) {
                yp[oc] += static_cast<double>(xp[g * cpg + ic]) *
                          w[((oc * kh + i) * kw + j) * cpg + ic];
              }
            }
          }
  for (int64_t p = 0; p < n * oh_n * ow_n; ++p)
    for (int64_t oc = 0; oc < cout; ++oc) {
      double &v = y[p * cout + oc];
      v = RefActivate(s, v + (b.empty() ? 0.0 : b[oc]), oc);
    }
  return y;
}

// Adds the inputs after the filter and the arguments.
void AddRest(const DeconvSpec &s, const std::vector<float> &b, OpTester *t) {
  if (!s.output_shape.empty()) {
    if (s.shape_as_input) {
      t->ConstantInt(
          "shape", {4},
          std::vector<int32_t>(s.output_shape.begin(), s.output_shape.end()));
    } else {
      t->ArgInts("output_shape", s.output_shape);
    }
  }
  if (s.bias && s.fed_weights) {
    t->Input("b", {OutChannels(s)}, b);
  } else if (s.bias) {
    t->Constant("b", {OutChannels(s)}, b);
  }
  const int64_t slope_size = static_cast<int64_t>(s.slope.size());
  if (slope_size > 0 && s.fed_weights) {
    t->Input("slope", {slope_size}, s.slope);
  } else if (slope_size > 0) {
    t->Constant("slope", {slope_size}, s.slope);
  }
  if (s.strides != std::vector<int64_t>{1, 1}) t->ArgInts("strides", s.strides);
  if (s.dilations != std::vector<int64_t>{1, 1}) {
    t->ArgInts("dilations", s.dilations);
  }
  if (s.padding != 0) t->Arg("padding", s.padding);
  if (!s.pads.empty()) t->ArgInts("padding_values", s.pads);
  if (!s.output_padding.empty()) {
    t->ArgInts("output_padding", s.output_padding);
  }
  if (s.group != 1) t->Arg("group", s.group);
  if (!s.activation.empty()) {
    t->ArgString("activation", s.activation);
    t->ArgFloat("max_limit", s.max_limit);
    t->ArgFloat("activation_coefficient", s.coefficient);
  }
}

const char *TypeOf(const DeconvSpec &s) {
  return s.depthwise ? "DepthwiseDeconv2d" : "Deconv2D";
}

void CheckDeconv(const DeconvSpec &s, int threads = 1,
                 WeightStorage storage = WeightStorage::kFloat32) {
  const auto x = RandomFloats(Product(s.input), -1, 1, 41);
  const auto w = RandomFloats(Product(FilterShape(s)), -1, 1, 42);
  const std::vector<float> b =
      s.bias ? RandomFloats(OutChannels(s), -1, 1, 43) : std::vector<float>();
  OpTester t(TypeOf(s));
  t.Input("x", s.input, x);
  if (s.fed_weights) {
    t.Input("w", FilterShape(s), w);
  } else {
    t.Constant("w", FilterShape(s), w);
  }
  AddRest(s, b, &t);
  t.Output("y").Threads(threads).Storage(storage);
  const MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  std::vector<int64_t> shape;
  const std::vector<double> expected = RefDeconv(s, x, w, b, &shape);
  EXPECT_EQ(t.output(0).shape, shape);
  // Each output sums at most kh * kw * Cin / group float products (fewer
  // with stride > 1); fp16 weights err by up to 2^-11 each.
  const int64_t cpg = s.depthwise ? 1 : s.input[3] / s.group;
  const double terms = static_cast<double>(s.kernel_h * s.kernel_w * cpg);
  const bool fp32 = storage == WeightStorage::kFloat32;
  const double tol = fp32 ? 1e-5 : 1e-3;
  EXPECT_TRUE(
      AllClose(t.output(0).floats, expected, tol, tol * std::sqrt(terms)));
}

// Runs a spec expected to fail at init; returns the message.
std::string DeconvError(const DeconvSpec &s,
                        const std::vector<int64_t> &w_shape) {
  OpTester t(TypeOf(s), "deconv");
  t.Input("x", s.input, RandomFloats(Product(s.input)))
      .Constant("w", w_shape, RandomFloats(Product(w_shape)));
  AddRest(s, RandomFloats(OutChannels(s)), &t);
  t.Output("y");
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  return status.information();
}

DeconvSpec Spec(std::vector<int64_t> input, int64_t out_c, int64_t kernel_h,
                int64_t kernel_w) {
  DeconvSpec s;
  s.input = std::move(input);
  s.out_c = out_c;
  s.kernel_h = kernel_h;
  s.kernel_w = kernel_w;
  return s;
}

// Big enough for the packed GEMM path to take several pixel tiles and to
// scatter in several channel blocks (80 = 64 + 16 output channels), with
// overlapping taps (kernel 4 > stride 2) and cropped borders.
TEST(Deconv2dTest, ManyTilesAndChannelBlocksMatchReference) {
  DeconvSpec s = Spec({2, 11, 13, 19}, 80, 4, 4);
  s.strides = {2, 2};
  s.pads = {1, 2, 1, 0};
  for (int threads : {1, 2}) CheckDeconv(s, threads);
  s.activation = "RELUX";
  s.max_limit = 0.5f;
  CheckDeconv(s, 2);
}

// Fewer output channels than a scatter block: on two threads the scatter
// goes by bands of output rows, through tiles spanning several images,
// with taps overlapping across bands (kernel and dilation over the stride).
TEST(Deconv2dTest, FewChannelsScatterByRowBandsMatchReference) {
  for (int64_t out_c : {1, 2, 64}) {
    DeconvSpec s = Spec({3, 17, 9, 4}, out_c, 3, 3);
    s.strides = {2, 2};
    s.dilations = {2, 1};
    s.pads = {2, 1, 0, 1};
    for (int threads : {1, 2}) CheckDeconv(s, threads);
    s = Spec({2, 23, 5, 6}, out_c, 4, 2);
    s.strides = {1, 2};
    CheckDeconv(s, 2);
  }
}

TEST(Deconv2dTest, ExplicitAsymmetricPadsMatchReference) {
  for (int threads : {1, 2}) {
    DeconvSpec s = Spec({1, 5, 4, 3}, 5, 3, 3);
    s.strides = {2, 2};
    s.pads = {1, 0, 2, 1};
    CheckDeconv(s, threads);
    s = Spec({2, 3, 5, 17}, 3, 5, 5);
    s.pads = {2, 2, 2, 2};
    CheckDeconv(s, threads);
  }
}

TEST(Deconv2dTest, OutputPaddingMatchesReference) {
  DeconvSpec s = Spec({1, 4, 5, 3}, 5, 3, 3);
  s.strides = {2, 2};
  s.pads = {1, 1, 1, 1};
  s.output_padding = {1, 1};
  CheckDeconv(s);
  s.strides = {3, 2};
  s.pads = {0, 1, 2, 0};
  s.output_padding = {2, 0};
  CheckDeconv(s, 2);
  s = Spec({1, 5, 3, 5}, 3, 3, 3);  // output_padding below the dilation
  s.dilations = {2, 2};
  s.pads = {1, 1, 1, 1};
  s.output_padding = {1, 1};
  CheckDeconv(s);
}

TEST(Deconv2dTest, DilationAndGroupsMatchReference) {
  for (int threads : {1, 2}) {
    DeconvSpec s = Spec({1, 5, 6, 4}, 6, 3, 3);
    s.group = 2;
    s.dilations = {2, 2};
    s.strides = {2, 1};
    s.pads = {1, 2, 0, 1};
    CheckDeconv(s, threads);
    s = Spec({2, 4, 3, 3}, 6, 3, 3);  // one input channel per group
    s.group = 3;
    s.bias = false;
    CheckDeconv(s, threads);
  }
}

TEST(Deconv2dTest, TfSameAndValidWithoutOutputShapeMatchReference) {
  DeconvSpec s = Spec({1, 5, 7, 3}, 5, 3, 3);
  s.strides = {2, 2};
  s.padding = 1;
  CheckDeconv(s);
  s.padding = 0;
  CheckDeconv(s);
  s = Spec({2, 3, 4, 5}, 7, 5, 5);
  s.padding = 1;
  CheckDeconv(s, 2);
  s = Spec({1, 4, 4, 3}, 2, 3, 3);  // stride 4 > kernel: gaps hold bias
  s.strides = {4, 4};
  s.padding = 1;
  CheckDeconv(s);
}

TEST(Deconv2dTest, TfSameStrideTwoCropsTheEndAsTensorFlow) {
  // 3x3 ones filter over [[1, 2], [3, 4]]: the 5x5 full output loses its
  // last row and column (TF pads the forward conv's end).
  OpTester t("Deconv2D");
  t.Input("x", {1, 2, 2, 1}, {1, 2, 3, 4})
      .Constant("w", {1, 3, 3, 1}, std::vector<float>(9, 1.0f))
      .ConstantInt("shape", {4}, {1, 4, 4, 1})
      .Output("y")
      .ArgInts("strides", {2, 2})
      .Arg("padding", 1);
  ASSERT_EQ(t.Run().code(), MaceStatus::MACE_SUCCESS);
  EXPECT_TRUE(AllClose(t.output(0).floats,
                       {1, 1, 3, 2, 1, 1, 3, 2, 4, 4, 10, 6, 3, 3, 7, 4}));
}

TEST(Deconv2dTest, TfOutputShapeMatchesReference) {
  DeconvSpec s = Spec({1, 4, 5, 3}, 5, 3, 3);
  s.strides = {2, 2};
  s.padding = 1;
  s.output_shape = {1, 7, 10, 5};  // 7 < 4 * 2 still maps back onto 4
  CheckDeconv(s);
  s.padding = 0;
  s.output_shape = {1, 10, 12, 5};  // VALID, one past the full 9 x 11
  CheckDeconv(s, 2);
  s.bias = false;
  s.shape_as_input = false;
  s.output_shape = {1, 9, 11, 5};
  CheckDeconv(s);
}

TEST(Deconv2dTest, OneByOneAndSevenByOneKernelsMatchReference) {
  DeconvSpec s = Spec({2, 3, 4, 5}, 3, 1, 1);
  s.strides = {2, 2};
  s.bias = false;
  CheckDeconv(s);
  s = Spec({1, 5, 5, 3}, 4, 7, 1);
  s.pads = {3, 0, 3, 0};
  CheckDeconv(s);
  CheckDeconv(Spec({1, 1, 1, 1}, 1, 1, 1));
}

TEST(Deconv2dTest, FusedActivationsMatchReference) {
  DeconvSpec s = Spec({1, 4, 5, 3}, 5, 3, 3);
  s.strides = {2, 2};
  s.pads = {1, 1, 1, 1};
  s.activation = "RELU";
  CheckDeconv(s);
  s.activation = "RELUX";
  s.max_limit = 0.5f;
  CheckDeconv(s);
  s.activation = "LEAKYRELU";
  s.coefficient = 0.1f;
  CheckDeconv(s, 2);
}

TEST(Deconv2dTest, Fp16WeightsMatchReferenceLoosely) {
  DeconvSpec s = Spec({1, 4, 5, 5}, 7, 3, 3);
  s.strides = {2, 2};
  s.pads = {1, 1, 1, 1};
  CheckDeconv(s, 1, WeightStorage::kFloat16);
}

TEST(Deconv2dTest, FilterChannelMismatchIsAnError) {
  const std::string msg =
      DeconvError(Spec({1, 4, 4, 3}, 5, 3, 3), {5, 3, 3, 2});
  EXPECT_NE(msg.find("filter"), std::string::npos) << msg;
  EXPECT_NE(msg.find("deconv"), std::string::npos) << msg;
}

TEST(Deconv2dTest, GroupNotDividingChannelsIsAnError) {
  DeconvSpec s = Spec({1, 4, 4, 6}, 5, 3, 3);
  s.group = 3;
  const std::string msg = DeconvError(s, {5, 3, 3, 2});
  EXPECT_NE(msg.find("group"), std::string::npos) << msg;
}

TEST(Deconv2dTest, BadOutputPaddingIsAnError) {
  DeconvSpec s = Spec({1, 4, 4, 3}, 2, 3, 3);
  s.strides = {2, 2};
  s.pads = {1, 1, 1, 1};
  s.output_padding = {2, 0};
  EXPECT_NE(DeconvError(s, {2, 3, 3, 3}).find("output_padding"),
            std::string::npos);
  s.output_padding = {1};
  EXPECT_NE(DeconvError(s, {2, 3, 3, 3}).find("output_padding"),
            std::string::npos);
}

TEST(Deconv2dTest, PadsCroppingTheWholeOutputAreAnError) {
  DeconvSpec s = Spec({1, 2, 2, 3}, 2, 3, 3);
  s.pads = {2, 0, 2, 0};  // full output is 4 rows
  const std::string msg = DeconvError(s, {2, 3, 3, 3});
  EXPECT_NE(msg.find("padding_values"), std::string::npos) << msg;
}

TEST(Deconv2dTest, BadPaddingArgumentsAreErrors) {
  DeconvSpec s = Spec({1, 4, 4, 3}, 2, 3, 3);
  s.pads = {1, -1, 1, 1};
  EXPECT_NE(DeconvError(s, {2, 3, 3, 3}).find("padding_values"),
            std::string::npos);
  s.pads = {};
  s.padding = 2;
  EXPECT_NE(DeconvError(s, {2, 3, 3, 3}).find("padding"), std::string::npos);
  s.padding = 9;
  EXPECT_NE(DeconvError(s, {2, 3, 3, 3}).find("padding"), std::string::npos);
}

TEST(Deconv2dTest, InconsistentOutputShapeIsAnError) {
  DeconvSpec s = Spec({1, 4, 4, 3}, 2, 3, 3);
  s.strides = {2, 2};
  s.padding = 1;
  s.output_shape = {1, 10, 8, 2};  // SAME: ceil(10 / 2) != 4
  EXPECT_NE(DeconvError(s, {2, 3, 3, 3}).find("output_shape"),
            std::string::npos);
  s.output_shape = {1, 8, 8, 3};  // channels differ from the filter's
  EXPECT_NE(DeconvError(s, {2, 3, 3, 3}).find("output_shape"),
            std::string::npos);
  s.shape_as_input = false;
  s.output_shape = {1, 8, 8};
  EXPECT_NE(DeconvError(s, {2, 3, 3, 3}).find("output_shape"),
            std::string::npos);
}

TEST(Deconv2dTest, WrongRankIsAnError) {
  const std::string msg = DeconvError(Spec({1, 4, 4, 3}, 2, 3, 3), {2, 3, 3});
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
}

DeconvSpec DwSpec(std::vector<int64_t> input, int64_t multiplier,
                  int64_t kernel_h, int64_t kernel_w) {
  DeconvSpec s = Spec(std::move(input), multiplier, kernel_h, kernel_w);
  s.depthwise = true;
  return s;
}

TEST(Deconv2dTest, FilterAndBiasFedAtRunTimeMatchReference) {
  for (int threads : {1, 2}) {
    DeconvSpec s = Spec({2, 4, 5, 6}, 4, 3, 3);
    s.group = 2;
    s.strides = {2, 2};
    s.pads = {1, 0, 1, 1};
    s.output_padding = {1, 0};
    s.fed_weights = true;
    CheckDeconv(s, threads);
  }
}

// One group with the filter fed at run time: packed before each run for
// the GEMM path, over several pixel tiles and channel blocks.
TEST(Deconv2dTest, FilterFedAtRunTimeOfOneGroupMatchesReference) {
  DeconvSpec s = Spec({2, 11, 13, 19}, 80, 4, 4);
  s.strides = {2, 2};
  s.pads = {1, 2, 1, 0};
  s.fed_weights = true;
  for (int threads : {1, 2}) CheckDeconv(s, threads);
  s = Spec({1, 7, 6, 3}, 2, 3, 3);
  s.fed_weights = true;
  s.bias = false;
  CheckDeconv(s, 2);
}

TEST(DepthwiseDeconv2dTest, ExplicitPadsAndStrideMatchReference) {
  for (int threads : {1, 2}) {
    DeconvSpec s = DwSpec({2, 4, 5, 5}, 1, 3, 3);
    s.strides = {2, 2};
    s.pads = {1, 0, 0, 1};
    CheckDeconv(s, threads);
    s = DwSpec({1, 5, 3, 17}, 2, 5, 5);
    s.pads = {2, 1, 2, 3};
    s.dilations = {2, 1};
    CheckDeconv(s, threads);
  }
}

TEST(DepthwiseDeconv2dTest, MultiplierTwoWithOutputPaddingMatchesReference) {
  DeconvSpec s = DwSpec({1, 4, 5, 3}, 2, 3, 3);
  s.strides = {2, 2};
  s.pads = {1, 1, 1, 1};
  s.output_padding = {1, 0};
  s.bias = false;
  CheckDeconv(s);
  s.group = 3;  // group equal to the channels is accepted
  s.activation = "RELU";
  CheckDeconv(s, 2);
}

TEST(DepthwiseDeconv2dTest, TfSameMatchesReference) {
  DeconvSpec s = DwSpec({1, 3, 5, 7}, 1, 3, 3);
  s.strides = {2, 2};
  s.padding = 1;
  CheckDeconv(s);
  s.output_shape = {1, 5, 9, 7};
  CheckDeconv(s);
}

TEST(DepthwiseDeconv2dTest, Fp16WeightsMatchReferenceLoosely) {
  DeconvSpec s = DwSpec({1, 4, 4, 5}, 2, 3, 3);
  s.strides = {2, 2};
  s.pads = {1, 1, 1, 1};
  CheckDeconv(s, 1, WeightStorage::kFloat16);
}

TEST(DepthwiseDeconv2dTest, FilterAndBiasFedAtRunTimeMatchReference) {
  DeconvSpec s = DwSpec({1, 4, 5, 3}, 2, 3, 3);
  s.strides = {2, 2};
  s.pads = {1, 1, 1, 1};
  s.fed_weights = true;
  CheckDeconv(s, 2);
}

TEST(DepthwiseDeconv2dTest, FilterChannelMismatchAndBadGroupAreErrors) {
  DeconvSpec s = DwSpec({1, 4, 4, 3}, 1, 3, 3);
  EXPECT_NE(DeconvError(s, {3, 3, 4, 1}).find("filter"), std::string::npos);
  s.group = 1;
  OpTester t("DepthwiseDeconv2d");
  t.Input("x", {1, 4, 4, 3}, RandomFloats(48))
      .Constant("w", {3, 3, 3, 1}, RandomFloats(27))
      .Output("y")
      .Arg("group", 2);
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("group"), std::string::npos)
      << status.information();
}

TEST(Deconv2dTest, FusedPReluMatchesReference) {
  for (int threads : {1, 2}) {
    DeconvSpec s = Spec({1, 4, 5, 4}, 6, 3, 3);
    s.strides = {2, 2};
    s.pads = {1, 1, 1, 1};
    s.group = 2;
    s.activation = "PRELU";
    s.slope = RandomFloats(6, -0.5f, 0.5f, 44);
    CheckDeconv(s, threads);
    s.slope = {-0.3f};  // one slope shared by every channel
    CheckDeconv(s, threads);
    // TF form: the slope follows output_shape and bias.
    s = Spec({1, 3, 5, 3}, 4, 3, 3);
    s.strides = {2, 2};
    s.padding = 1;
    s.output_shape = {1, 5, 9, 4};
    s.activation = "PRELU";
    s.slope = RandomFloats(4, -0.5f, 0.5f, 45);
    CheckDeconv(s, threads);
  }
}

TEST(DepthwiseDeconv2dTest, FusedPReluMatchesReference) {
  for (int threads : {1, 2}) {
    DeconvSpec s = DwSpec({1, 4, 5, 3}, 2, 3, 3);
    s.strides = {2, 2};
    s.pads = {1, 1, 1, 1};
    s.activation = "PRELU";
    s.slope = RandomFloats(6, -0.5f, 0.5f, 46);
    CheckDeconv(s, threads);
    s.fed_weights = true;  // slope fed at run time, as filter and bias
    CheckDeconv(s, threads);
    s.slope = {0.2f};
    CheckDeconv(s, threads);
  }
}

TEST(Deconv2dTest, FusedPReluSlopeSizeMismatchIsAnError) {
  for (bool depthwise : {false, true}) {
    DeconvSpec s =
        depthwise ? DwSpec({1, 4, 4, 3}, 2, 3, 3) : Spec({1, 4, 4, 3}, 6, 3, 3);
    s.activation = "PRELU";
    s.slope = RandomFloats(4);  // 6 output channels
    const std::string msg = DeconvError(s, FilterShape(s));
    EXPECT_NE(msg.find("slope"), std::string::npos) << msg;
    EXPECT_NE(msg.find("deconv"), std::string::npos) << msg;
  }
}

TEST(Deconv2dTest, FusedPReluWithoutBiasIsAnError) {
  for (bool depthwise : {false, true}) {
    DeconvSpec s =
        depthwise ? DwSpec({1, 4, 4, 3}, 2, 3, 3) : Spec({1, 4, 4, 3}, 6, 3, 3);
    s.activation = "PRELU";
    s.slope = RandomFloats(6);
    s.bias = false;
    const std::string msg = DeconvError(s, FilterShape(s));
    EXPECT_NE(msg.find("PRELU"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace test
}  // namespace mace
