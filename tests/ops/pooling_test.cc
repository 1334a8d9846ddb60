// Pooling against a float64 reference written from the definition: window
// cells i = o * stride - pad_begin + k * dilation; max over the cells
// inside the input; average = their sum divided by the cells inside the
// input (count_include_pad 0) or inside the padded input (1).

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/op_tester.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

constexpr int kAvg = 1;
constexpr int kMax = 2;

struct PoolSpec {
  std::vector<int64_t> input;  // N, H, W, C
  int type = kMax;
  std::vector<int64_t> kernels = {2, 2};
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> dilations = {1, 1};
  int padding = 0;            // 0 VALID, 1 SAME
  std::vector<int64_t> pads;  // padding_values, 4 values
  bool ceil = false;
  bool count_include_pad = false;
  bool global = false;
};

struct RefAxisInfo {
  int64_t out = 0, stride = 1, dilation = 1, kernel = 1;
  int64_t pad_begin = 0, pad_end = 0;
};

RefAxisInfo RefAxis(const PoolSpec &s, int axis, int64_t in) {
  RefAxisInfo a;
  if (s.global) {
    a.out = 1;
    a.kernel = in;
    return a;
  }
  a.kernel = s.kernels[axis];
  a.stride = s.strides[axis];
  a.dilation = s.dilations[axis];
  const int64_t extent = (a.kernel - 1) * a.dilation + 1;
  if (s.pads.size() == 4) {
    a.pad_begin = s.pads[axis];
    a.pad_end = s.pads[axis + 2];
  } else if (s.padding == 1) {
    const int64_t o = (in + a.stride - 1) / a.stride;
    const int64_t total =
        std::max<int64_t>((o - 1) * a.stride + extent - in, 0);
    a.pad_begin = total / 2;
    a.pad_end = total - a.pad_begin;
  }
  const int64_t span = in + a.pad_begin + a.pad_end - extent;
  a.out = (s.ceil ? (span + a.stride - 1) / a.stride : span / a.stride) + 1;
  // Caffe: the last window starts inside the input or the leading pad.
  if (s.ceil && (a.out - 1) * a.stride >= in + a.pad_begin) --a.out;
  return a;
}

// Cells of output o along an axis: inside the input, and inside the padded
// input (what count_include_pad = 1 divides by).
void AxisCells(const RefAxisInfo &a, int64_t in, int64_t o,
               std::vector<int64_t> *inside, int64_t *padded) {
  inside->clear();
  *padded = 0;
  for (int64_t k = 0; k < a.kernel; ++k) {
    const int64_t i = o * a.stride - a.pad_begin + k * a.dilation;
    if (i >= 0 && i < in) inside->push_back(i);
    if (i >= -a.pad_begin && i < in + a.pad_end) ++*padded;
  }
}

std::vector<double> RefPool(const PoolSpec &s, const std::vector<float> &x,
                            std::vector<int64_t> *shape) {
  const int64_t n = s.input[0], h = s.input[1], w = s.input[2];
  const int64_t ch = s.input[3];
  const RefAxisInfo ah = RefAxis(s, 0, h), aw = RefAxis(s, 1, w);
  *shape = {n, ah.out, aw.out, ch};
  std::vector<double> y;
  std::vector<int64_t> rows, cols;
  int64_t padded_rows = 0, padded_cols = 0;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oh = 0; oh < ah.out; ++oh)
      for (int64_t ow = 0; ow < aw.out; ++ow) {
        AxisCells(ah, h, oh, &rows, &padded_rows);
        AxisCells(aw, w, ow, &cols, &padded_cols);
        for (int64_t c = 0; c < ch; ++c) {
          double max = -std::numeric_limits<double>::infinity(), sum = 0;
          for (int64_t ih : rows)
            for (int64_t iw : cols) {
              const double v = x[((in * h + ih) * w + iw) * ch + c];
              max = std::max(max, v);
              sum += v;
            }
          const double count =
              s.count_include_pad
                  ? static_cast<double>(padded_rows * padded_cols)
                  : static_cast<double>(rows.size() * cols.size());
          y.push_back(s.type == kMax ? max : sum / count);
        }
      }
  return y;
}

void AddArgs(const PoolSpec &s, OpTester *t) {
  t->Arg("pooling_type", s.type);
  if (s.global) {
    t->Arg("global_pooling", 1);
  } else {
    t->ArgInts("kernels", s.kernels);
  }
  if (s.strides != std::vector<int64_t>{1, 1}) t->ArgInts("strides", s.strides);
  if (s.dilations != std::vector<int64_t>{1, 1}) {
    t->ArgInts("dilations", s.dilations);
  }
  if (s.padding != 0) t->Arg("padding", s.padding);
  if (!s.pads.empty()) t->ArgInts("padding_values", s.pads);
  if (s.ceil) t->Arg("round_mode", 1);
  if (s.count_include_pad) t->Arg("count_include_pad", 1);
}

void CheckPool(const PoolSpec &s, int threads = 1, float low = -1.0f,
               float high = 1.0f) {
  const auto x = RandomFloats(Product(s.input), low, high, 51);
  OpTester t("Pooling");
  t.Input("x", s.input, x).Output("y").Threads(threads);
  AddArgs(s, &t);
  const MaceStatus status = t.Run();
  ASSERT_EQ(status.code(), MaceStatus::MACE_SUCCESS) << status.information();
  std::vector<int64_t> shape;
  const std::vector<double> expected = RefPool(s, x, &shape);
  EXPECT_EQ(t.output(0).shape, shape);
  EXPECT_TRUE(AllClose(t.output(0).floats, expected));
}

std::string PoolError(const PoolSpec &s) {
  OpTester t("Pooling", "pool");
  t.Input("x", s.input, RandomFloats(Product(s.input))).Output("y");
  AddArgs(s, &t);
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  return status.information();
}

PoolSpec Spec(std::vector<int64_t> input, int type, int64_t kernel_h,
              int64_t kernel_w) {
  PoolSpec s;
  s.input = std::move(input);
  s.type = type;
  s.kernels = {kernel_h, kernel_w};
  return s;
}

TEST(PoolingTest, SamePaddingOddSizeMatchesReference) {
  for (int threads : {1, 2}) {
    for (int type : {kMax, kAvg}) {
      PoolSpec s = Spec({2, 7, 9, 5}, type, 3, 3);
      s.strides = {2, 2};
      s.padding = 1;
      CheckPool(s, threads);
      s = Spec({1, 6, 5, 17}, type, 5, 5);
      s.padding = 1;
      CheckPool(s, threads);
    }
  }
}

TEST(PoolingTest, MaxIgnoresPaddingCells) {
  PoolSpec s = Spec({1, 5, 6, 3}, kMax, 3, 3);
  s.pads = {1, 1, 1, 1};
  CheckPool(s, 1, -2.0f, -1.0f);  // all negative: a zero pad would win
}

TEST(PoolingTest, ValidStrideTwoMatchesReference) {
  for (int type : {kMax, kAvg}) {
    PoolSpec s = Spec({2, 13, 11, 3}, type, 3, 3);
    s.strides = {2, 2};
    CheckPool(s);
    s = Spec({1, 8, 9, 7}, type, 2, 2);
    s.strides = {2, 2};
    CheckPool(s, 2);
  }
}

TEST(PoolingTest, ExplicitAsymmetricPadsMatchReference) {
  for (int type : {kMax, kAvg}) {
    PoolSpec s = Spec({1, 8, 6, 5}, type, 7, 1);
    s.pads = {3, 0, 2, 0};
    CheckPool(s);
    s = Spec({2, 7, 9, 3}, type, 3, 5);
    s.pads = {0, 2, 1, 1};
    s.strides = {1, 2};
    CheckPool(s, 2);
  }
}

TEST(PoolingTest, AverageCountingPadsMatchesReference) {
  PoolSpec s = Spec({1, 7, 6, 5}, kAvg, 3, 3);
  s.pads = {1, 1, 1, 1};
  s.strides = {2, 2};
  s.count_include_pad = true;
  CheckPool(s);
  s.padding = 1;
  s.pads = {};
  CheckPool(s, 2);
}

TEST(PoolingTest, CeilModeMatchesCaffe) {
  for (int type : {kMax, kAvg}) {
    PoolSpec s = Spec({1, 6, 7, 3}, type, 3, 3);
    s.strides = {2, 2};
    s.ceil = true;
    CheckPool(s);
    // Windows run past the padded input; those cells are never counted.
    s.pads = {1, 1, 1, 1};
    s.count_include_pad = true;
    CheckPool(s);
    s.count_include_pad = false;
    CheckPool(s, 2);
  }
}

TEST(PoolingTest, DilationTwoMatchesReference) {
  for (int type : {kMax, kAvg}) {
    PoolSpec s = Spec({1, 9, 10, 3}, type, 3, 3);
    s.dilations = {2, 2};
    s.padding = 1;
    CheckPool(s);
  }
}

TEST(PoolingTest, OneByOneKernelAndSizeOneInputMatchReference) {
  PoolSpec s = Spec({2, 5, 7, 17}, kMax, 1, 1);
  s.strides = {2, 2};
  CheckPool(s);
  s = Spec({1, 1, 1, 3}, kAvg, 3, 3);
  s.padding = 1;
  CheckPool(s);
}

TEST(PoolingTest, GlobalPoolingCoversTheWholeImage) {
  for (int type : {kMax, kAvg}) {
    PoolSpec s = Spec({2, 5, 7, 17}, type, 1, 1);
    s.global = true;
    CheckPool(s, 2);
  }
}

TEST(PoolingTest, WrongRankIsAnError) {
  OpTester t("Pooling", "pool");
  t.Input("x", {5, 5, 3}, RandomFloats(75))
      .Output("y")
      .ArgInts("kernels", {2, 2});
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("rank"), std::string::npos)
      << status.information();
}

TEST(PoolingTest, BadArgumentValuesAreErrors) {
  PoolSpec s = Spec({1, 5, 5, 3}, 3, 2, 2);
  EXPECT_NE(PoolError(s).find("pooling_type"), std::string::npos);
  s.type = kMax;
  s.kernels = {2};
  EXPECT_NE(PoolError(s).find("kernels"), std::string::npos);
  s.kernels = {0, 2};
  EXPECT_NE(PoolError(s).find("kernels"), std::string::npos);
  s.kernels = {2, 2};
  s.padding = 4;
  EXPECT_NE(PoolError(s).find("padding"), std::string::npos);
  s.padding = 0;
  s.pads = {1, 1, -1, 1};
  EXPECT_NE(PoolError(s).find("padding_values"), std::string::npos);
}

TEST(PoolingTest, BadFlagsAreErrors) {
  OpTester t("Pooling", "pool");
  t.Input("x", {1, 5, 5, 3}, RandomFloats(75))
      .Output("y")
      .ArgInts("kernels", {2, 2})
      .Arg("round_mode", 2);
  MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("round_mode"), std::string::npos);
  OpTester u("Pooling", "pool");
  u.Input("x", {1, 5, 5, 3}, RandomFloats(75))
      .Output("y")
      .ArgInts("kernels", {2, 2})
      .Arg("count_include_pad", 3);
  status = u.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("count_include_pad"), std::string::npos);
}

TEST(PoolingTest, MissingKernelsIsAnError) {
  OpTester t("Pooling", "pool");
  t.Input("x", {1, 5, 5, 3}, RandomFloats(75)).Output("y");
  const MaceStatus status = t.Run();
  EXPECT_NE(status.code(), MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find("kernels"), std::string::npos)
      << status.information();
}

TEST(PoolingTest, KernelLargerThanPaddedInputIsAnError) {
  PoolSpec s = Spec({1, 3, 4, 2}, kAvg, 5, 3);
  s.pads = {0, 0, 1, 0};
  const std::string msg = PoolError(s);
  EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pool"), std::string::npos) << msg;
}

TEST(PoolingTest, WindowOfPaddingOnlyIsAnError) {
  PoolSpec s = Spec({1, 5, 5, 2}, kMax, 2, 2);
  s.pads = {3, 0, 0, 0};
  const std::string msg = PoolError(s);
  EXPECT_NE(msg.find("padding only"), std::string::npos) << msg;
}

TEST(PoolingTest, NchwIsUnsupported) {
  OpTester t("Pooling", "pool");
  t.Input("x", {1, 5, 5, 3}, RandomFloats(75))
      .Output("y")
      .ArgInts("kernels", {2, 2})
      .Arg("data_format", 2);
  const MaceStatus status = t.Run();
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
}

}  // namespace
}  // namespace test
}  // namespace mace
