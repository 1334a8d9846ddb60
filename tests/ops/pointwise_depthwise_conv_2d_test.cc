// PointwiseDepthwiseConv2d against a float64 reference written from its
// definition: z[n, h, w, c] = pw_act(pw_b[c] + sum over i of
// x[n, h, w, i] * pw[c, 0, 0, i]), then y[n, oh, ow, c] = act(dw_b[c] +
// sum over kh, kw of z[n, oh * sh - pad_top + kh, ow * sw - pad_left + kw,
// c] * dw[kh, kw, c, 0]), cells outside z reading zero. The shapes make the
// op cut its rows into several strips and bands (rows kept from one strip
// to the next), strips of one row, and windows that read only padding.

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "mace/kernels/activation.h"
#include "mace/kernels/sgemm.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

struct Spec {
  std::vector<int64_t> input;  // N, H, W, Cin
  int64_t channels = 8;        // C, the pointwise outputs
  int64_t kernel = 3;
  int64_t stride = 1;
  int padding = 1;            // 0 VALID, 1 SAME
  std::vector<int64_t> pads;  // padding_values [top, left, bottom, right]
  std::string pointwise_activation = "RELUX";
  std::string activation = "RELUX";
};

double RefActivate(const std::string &name, double v) {
  if (name == "RELUX") return std::min(std::max(v, 0.0), 6.0);
  if (name == "RELU") return std::max(v, 0.0);
  if (name == "HARDSWISH") return v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
  if (name == "SIGMOID") return 1 / (1 + std::exp(-v));
  return v;
}

// Output size and leading pad of one axis.
void RefAxis(const Spec &s, int axis, int64_t in, int64_t *out,
             int64_t *pad_begin) {
  int64_t begin = 0, end = 0;
  if (s.pads.size() == 4) {
    begin = s.pads[axis];
    end = s.pads[axis + 2];
  } else if (s.padding == 1) {
    const int64_t o = (in + s.stride - 1) / s.stride;
    const int64_t total =
        std::max<int64_t>((o - 1) * s.stride + s.kernel - in, 0);
    begin = total / 2;
    end = total - begin;
  }
  *out = (in + begin + end - s.kernel) / s.stride + 1;
  *pad_begin = begin;
}

std::vector<double> Reference(const Spec &s, const std::vector<float> &x,
                              const std::vector<float> &pw,
                              const std::vector<float> &pw_b,
                              const std::vector<float> &dw,
                              const std::vector<float> &dw_b,
                              std::vector<int64_t> *shape) {
  const int64_t n = s.input[0], h = s.input[1], w = s.input[2];
  const int64_t in_c = s.input[3], c = s.channels, k = s.kernel;
  std::vector<double> z(n * h * w * c);
  for (int64_t p = 0; p < n * h * w; ++p)
    for (int64_t o = 0; o < c; ++o) {
      double sum = pw_b[o];
      for (int64_t i = 0; i < in_c; ++i) {
        sum += static_cast<double>(x[p * in_c + i]) * pw[o * in_c + i];
      }
      z[p * c + o] = RefActivate(s.pointwise_activation, sum);
    }
  int64_t out_h, out_w, pad_top, pad_left;
  RefAxis(s, 0, h, &out_h, &pad_top);
  RefAxis(s, 1, w, &out_w, &pad_left);
  *shape = {n, out_h, out_w, c};
  std::vector<double> y(n * out_h * out_w * c);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oh = 0; oh < out_h; ++oh)
      for (int64_t ow = 0; ow < out_w; ++ow)
        for (int64_t o = 0; o < c; ++o) {
          double sum = dw_b[o];
          for (int64_t i = 0; i < k; ++i)
            for (int64_t j = 0; j < k; ++j) {
              const int64_t ih = oh * s.stride - pad_top + i;
              const int64_t iw = ow * s.stride - pad_left + j;
              if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
              sum += z[((b * h + ih) * w + iw) * c + o] * dw[(i * k + j) * c + o];
            }
          y[((b * out_h + oh) * out_w + ow) * c + o] =
              RefActivate(s.activation, sum);
        }
  return y;
}

void AddArgs(const Spec &s, OpTester *t) {
  t->ArgInts("strides", {s.stride, s.stride});
  if (s.padding != 0) t->Arg("padding", s.padding);
  if (!s.pads.empty()) t->ArgInts("padding_values", s.pads);
  if (!s.activation.empty()) t->ArgString("activation", s.activation);
  if (!s.pointwise_activation.empty()) {
    t->ArgString("pointwise_activation", s.pointwise_activation);
  }
}

void Check(const Spec &s, int threads) {
  const int64_t in_c = s.input[3], c = s.channels, k = s.kernel;
  const auto x = RandomFloats(Product(s.input), -1, 1, 41);
  const auto pw = RandomFloats(c * in_c, -1, 1, 42);
  const auto pw_b = RandomFloats(c, -1, 1, 43);
  const auto dw = RandomFloats(k * k * c, -1, 1, 44);
  const auto dw_b = RandomFloats(c, -1, 1, 45);
  OpTester t("PointwiseDepthwiseConv2d");
  t.Input("x", s.input, x)
      .Constant("pw", {c, 1, 1, in_c}, pw)
      .Constant("pw_b", {c}, pw_b)
      .Constant("dw", {k, k, c, 1}, dw)
      .Constant("dw_b", {c}, dw_b)
      .Output("y")
      .Threads(threads);
  AddArgs(s, &t);
  const MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  std::vector<int64_t> shape;
  const std::vector<double> expected =
      Reference(s, x, pw, pw_b, dw, dw_b, &shape);
  EXPECT_EQ(t.output(0).shape, shape);
  const double terms = static_cast<double>(in_c + k * k);
  EXPECT_TRUE(AllClose(t.output(0).floats, expected, 1e-5,
                       1e-5 * std::sqrt(terms)))
      << "threads " << threads;
}

Spec Make(std::vector<int64_t> input, int64_t channels, int64_t kernel,
          int64_t stride) {
  Spec s;
  s.input = std::move(input);
  s.channels = channels;
  s.kernel = kernel;
  s.stride = stride;
  return s;
}

// 41 x 100 floats a row: strips of 17 rows for stride 1 and 9 for stride 2,
// so 53 rows take several strips, in one band or in three.
TEST(PointwiseDepthwiseConv2dTest, SeveralStripsMatchReference) {
  for (int threads : {1, 2, 3}) {
    Check(Make({1, 53, 41, 7}, 100, 3, 1), threads);
    Check(Make({2, 53, 41, 7}, 100, 3, 2), threads);
  }
}

// Bands of fewer than 8 output rows cost more in rows computed twice
// than the cache saves: stride 1's 53 output rows go in bands at 4
// threads and as the two ops at 8, stride 2's 27 as the two ops at both.
TEST(PointwiseDepthwiseConv2dTest, ThinBandsRunAsTheTwoOps) {
  for (int threads : {4, 8}) {
    Check(Make({1, 53, 41, 7}, 100, 3, 1), threads);
    Check(Make({1, 53, 41, 7}, 100, 5, 2), threads);
  }
}

// The strips' offsets do not depend on the kernels, but their panel
// widths (SGEMM: 8, 16 or 64 columns) and vector widths do: every SGEMM
// ISA and every vector ISA the machine has, on a channel count that is
// no multiple of any of them.
TEST(PointwiseDepthwiseConv2dTest, EveryKernelIsaMatchesReference) {
  const kernels::SgemmIsa sgemm_default = kernels::SelectedSgemmIsa();
  const kernels::VectorIsa vector_default = kernels::SelectedVectorIsa();
  for (kernels::SgemmIsa sgemm : kernels::AvailableSgemmIsas()) {
    for (kernels::VectorIsa vector : kernels::AvailableVectorIsas()) {
      SCOPED_TRACE(std::string(kernels::SgemmIsaName(sgemm)) + " / " +
                   kernels::VectorIsaName(vector));
      ASSERT_TRUE(kernels::SetSgemmIsaForTesting(sgemm));
      ASSERT_TRUE(kernels::SetVectorIsaForTesting(vector));
      Check(Make({1, 23, 41, 5}, 299, 3, 1), 2);
    }
  }
  kernels::SetSgemmIsaForTesting(sgemm_default);
  kernels::SetVectorIsaForTesting(vector_default);
}

// 27 x 1024 floats a row (the re-laid filter of 1024 channels): strips of
// one output row, each keeping two pointwise rows of the strip before.
TEST(PointwiseDepthwiseConv2dTest, StripsOfOneRowMatchReference) {
  for (int threads : {1, 2}) {
    Check(Make({1, 7, 27, 3}, 1024, 3, 1), threads);
    Check(Make({1, 8, 27, 3}, 1024, 3, 2), threads);
  }
}

TEST(PointwiseDepthwiseConv2dTest, FiveByFiveAndOtherActivationsMatch) {
  for (int threads : {1, 2}) {
    Spec s = Make({1, 30, 33, 5}, 300, 5, 2);
    s.padding = 0;
    s.pads = {2, 1, 2, 2};
    s.pointwise_activation = "HARDSWISH";
    s.activation = "";
    Check(s, threads);
    s = Make({1, 31, 29, 9}, 19, 5, 1);
    s.pointwise_activation = "";
    s.activation = "SIGMOID";
    Check(s, threads);
  }
}

// At 3 threads the 19 output rows are too few for bands: the whole
// pointwise output, its unread last row included, goes into scratch.
TEST(PointwiseDepthwiseConv2dTest, ValidPaddingSkipsUnreadRows) {
  for (int threads : {1, 2, 3}) {
    Spec s = Make({1, 40, 12, 4}, 1024, 3, 2);
    s.padding = 0;
    Check(s, threads);
  }
}

// Pads at least a window high at the bottom: the last output rows read
// only padding.
TEST(PointwiseDepthwiseConv2dTest, WindowsInTheBottomPaddingMatch) {
  for (int threads : {1, 2}) {
    Spec s = Make({1, 5, 27, 3}, 1024, 3, 1);
    s.padding = 0;
    s.pads = {1, 1, 4, 1};
    Check(s, threads);
  }
}

std::string Error(const std::vector<int64_t> &pw_shape,
                  const std::vector<int64_t> &dw_shape, bool fed = false,
                  const std::string &activation = "RELU") {
  OpTester t("PointwiseDepthwiseConv2d", "fused");
  t.Input("x", {1, 6, 6, 4}, RandomFloats(144));
  if (fed) {
    t.Input("pw", pw_shape, RandomFloats(Product(pw_shape)));
  } else {
    t.Constant("pw", pw_shape, RandomFloats(Product(pw_shape)));
  }
  t.Constant("pw_b", {pw_shape[0]}, RandomFloats(pw_shape[0]))
      .Constant("dw", dw_shape, RandomFloats(Product(dw_shape)))
      .Constant("dw_b", {pw_shape[0]}, RandomFloats(pw_shape[0]))
      .ArgString("activation", activation)
      .Output("y");
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  return status.information();
}

TEST(PointwiseDepthwiseConv2dTest, BadFiltersAndWindowsAreClearErrors) {
  EXPECT_NE(Error({8, 1, 1, 5}, {3, 3, 8, 1}).find("[C, 1, 1, 4]"),
            std::string::npos);
  EXPECT_NE(Error({8, 3, 3, 4}, {3, 3, 8, 1}).find("pointwise filter"),
            std::string::npos);
  EXPECT_NE(Error({8, 1, 1, 4}, {3, 3, 6, 1}).find("[Kh, Kw, 8, 1]"),
            std::string::npos);
  EXPECT_NE(Error({8, 1, 1, 4}, {3, 3, 8, 2}).find("depthwise filter"),
            std::string::npos);
  EXPECT_NE(Error({8, 1, 1, 4}, {4, 4, 8, 1}).find("3x3 or 5x5"),
            std::string::npos);
  EXPECT_NE(Error({8, 1, 1, 4}, {3, 3, 8, 1}, true).find("constant"),
            std::string::npos);
  EXPECT_NE(Error({8, 1, 1, 4}, {3, 3, 8, 1}, false, "PRELU").find("PRELU"),
            std::string::npos);
}

// An unknown pointwise activation and a missing depthwise bias.
TEST(PointwiseDepthwiseConv2dTest, BadArgumentsAndInputCountAreClearErrors) {
  OpTester bad_activation("PointwiseDepthwiseConv2d", "fused");
  bad_activation.Input("x", {1, 6, 6, 4}, RandomFloats(144))
      .Constant("pw", {8, 1, 1, 4}, RandomFloats(32))
      .Constant("pw_b", {8}, RandomFloats(8))
      .Constant("dw", {3, 3, 8, 1}, RandomFloats(72))
      .Constant("dw_b", {8}, RandomFloats(8))
      .ArgString("pointwise_activation", "RELU7")
      .Output("y");
  MaceStatus status = bad_activation.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("unknown pointwise_activation 'RELU7'"),
            std::string::npos)
      << status.information();

  OpTester four_inputs("PointwiseDepthwiseConv2d", "fused");
  four_inputs.Input("x", {1, 6, 6, 4}, RandomFloats(144))
      .Constant("pw", {8, 1, 1, 4}, RandomFloats(32))
      .Constant("pw_b", {8}, RandomFloats(8))
      .Constant("dw", {3, 3, 8, 1}, RandomFloats(72))
      .Output("y");
  status = four_inputs.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("expects 5 inputs, got 4"),
            std::string::npos)
      << status.information();
}

}  // namespace
}  // namespace test
}  // namespace mace
