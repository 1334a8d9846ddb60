// The direct depthwise kernels of every ISA this machine runs, against a
// float64 depthwise convolution written from the definition: channel counts
// that are not multiples of any vector width, images of 1 pixel, odd sizes,
// every padding from none to past the kernel's reach, both strides, batch 2,
// each fused activation; 1 and 2 threads must agree bit for bit. Then the
// DepthwiseConv2d op, which picks these kernels, under every ISA.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mace/kernels/depthwise.h"
#include "tests/common/kernel_test_util.h"
#include "tests/common/op_tester.h"

namespace mace {
namespace kernels {
namespace {

using test::RandomVector;
using test::StartPool;

double RefActivate(const ActivationParams &act, double v, int64_t c) {
  switch (act.kind) {
    case ActivationKind::kNone:
      return v;
    case ActivationKind::kRelu:
      return v > 0 ? v : 0;
    case ActivationKind::kReluX:
      return std::fmin(std::fmax(v, 0.0), act.max_limit);
    case ActivationKind::kLeakyRelu:
      return v >= 0 ? v : v * act.coefficient;
    case ActivationKind::kPRelu:
      return v >= 0 ? v : v * act.slope[act.slope_size == 1 ? 0 : c];
    case ActivationKind::kSigmoid:
      return 1.0 / (1.0 + std::exp(-v));
    case ActivationKind::kTanh:
      return std::tanh(v);
    default:  // kinds the depthwise cases below do not use
      return v;
  }
}

struct Case {
  DepthwiseShape shape;
  std::vector<float> x, w, bias, slope;
  bool with_bias = true;
  ActivationParams act;
};

// Output size for symmetric pads.
int64_t OutSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad) {
  return (in + 2 * pad - kernel) / stride + 1;
}

// Checks y against the float64 definition, within 1e-5 of the sum of the
// magnitudes of the products (plus a little for the exp approximations).
void ExpectMatchesReference(const Case &k, const std::vector<float> &y,
                            const std::string &what) {
  const DepthwiseShape &s = k.shape;
  int failures = 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        for (int64_t c = 0; c < s.channels; ++c) {
          double sum = k.with_bias ? k.bias[c] : 0.0;
          double magnitude = std::fabs(sum);
          for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
            const int64_t ih = oh * s.stride_h - s.pad_top + kh;
            if (ih < 0 || ih >= s.in_h) continue;
            for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
              const int64_t iw = ow * s.stride_w - s.pad_left + kw;
              if (iw < 0 || iw >= s.in_w) continue;
              const double p =
                  static_cast<double>(
                      k.x[((n * s.in_h + ih) * s.in_w + iw) * s.channels + c]) *
                  k.w[(kh * s.kernel_w + kw) * s.channels + c];
              sum += p;
              magnitude += std::fabs(p);
            }
          }
          const double want = RefActivate(k.act, sum, c);
          const double got =
              y[((n * s.out_h + oh) * s.out_w + ow) * s.channels + c];
          const double tol = 1e-5 * magnitude + 2e-6;
          if (!(std::fabs(got - want) <= tol) && ++failures <= 3) {
            ADD_FAILURE() << what << " at n=" << n << " oh=" << oh
                          << " ow=" << ow << " c=" << c << ": got " << got
                          << ", want " << want;
          }
        }
      }
    }
  }
}

// One image, pads of kernel / 2 on every side, random inputs, weights,
// bias and slope.
Case HalfPaddedCase(int64_t kernel, int64_t stride, int64_t channels,
                    int64_t in_h, int64_t in_w, std::mt19937 *rng) {
  Case k;
  DepthwiseShape &s = k.shape;
  s.batch = 1;
  s.in_h = in_h;
  s.in_w = in_w;
  s.channels = channels;
  s.kernel_h = s.kernel_w = kernel;
  s.stride_h = s.stride_w = stride;
  s.pad_top = s.pad_left = kernel / 2;
  s.out_h = OutSize(s.in_h, kernel, stride, kernel / 2);
  s.out_w = OutSize(s.in_w, kernel, stride, kernel / 2);
  k.x = RandomVector(s.in_h * s.in_w * channels, rng);
  k.w = RandomVector(kernel * kernel * channels, rng);
  k.bias = RandomVector(channels, rng);
  k.slope = RandomVector(channels, rng);
  return k;
}

ActivationParams ActivationNumber(int index, const std::vector<float> &slope) {
  ActivationParams act;
  switch (index % 8) {
    case 0:
      act.kind = ActivationKind::kNone;
      break;
    case 1:
      act.kind = ActivationKind::kRelu;
      break;
    case 2:
      act.kind = ActivationKind::kReluX;
      act.max_limit = 0.4f;
      break;
    case 3:
      act.kind = ActivationKind::kLeakyRelu;
      act.coefficient = 0.1f;
      break;
    case 4:
      act.kind = ActivationKind::kPRelu;
      act.slope = slope.data();
      act.slope_size = static_cast<int64_t>(slope.size());
      break;
    case 5:
      act.kind = ActivationKind::kPRelu;
      act.slope = slope.data();
      act.slope_size = 1;
      break;
    case 6:
      act.kind = ActivationKind::kSigmoid;
      break;
    default:
      act.kind = ActivationKind::kTanh;
      break;
  }
  return act;
}

TEST(DepthwiseKernelsTest, SupportsOnlyTheDirectShapes) {
  DepthwiseShape s;
  s.batch = 1;
  s.in_h = s.in_w = 8;
  s.channels = 4;
  s.kernel_h = s.kernel_w = 3;
  EXPECT_TRUE(DepthwiseKernelSupports(s));
  s.kernel_h = s.kernel_w = 5;
  s.stride_h = 2;
  EXPECT_TRUE(DepthwiseKernelSupports(s));
  s.stride_w = 3;
  EXPECT_FALSE(DepthwiseKernelSupports(s));
  s.stride_w = 1;
  s.dilation_h = 2;
  EXPECT_FALSE(DepthwiseKernelSupports(s));
  s.dilation_h = 1;
  s.kernel_w = 3;
  EXPECT_FALSE(DepthwiseKernelSupports(s));
  s.kernel_h = s.kernel_w = 7;
  EXPECT_FALSE(DepthwiseKernelSupports(s));
}

TEST(DepthwiseKernelsTest, EveryIsaMatchesFloat64OnEdgeShapes) {
  std::mt19937 rng(20261121);
  auto pool1 = StartPool(1);
  auto pool2 = StartPool(2);
  const int64_t kChannels[] = {1, 3, 5, 17, 33};
  const int64_t kSpatial[][2] = {{1, 1}, {2, 3}, {7, 5}, {6, 12},
                                 {4, 19}, {7, 7}, {3, 8}};
  const int64_t kStrides[][2] = {{1, 1}, {2, 2}, {1, 2}, {2, 1}};
  int counter = 0;
  for (int64_t kernel : {3, 5}) {
    for (int64_t pad : {int64_t{0}, kernel / 2, kernel - 1}) {
      for (const auto &stride : kStrides) {
        for (const auto &hw : kSpatial) {
          if (hw[0] + 2 * pad < kernel || hw[1] + 2 * pad < kernel) continue;
          for (int64_t channels : kChannels) {
            Case k;
            DepthwiseShape &s = k.shape;
            s.batch = 2;
            s.in_h = hw[0];
            s.in_w = hw[1];
            s.channels = channels;
            s.kernel_h = s.kernel_w = kernel;
            s.stride_h = stride[0];
            s.stride_w = stride[1];
            s.pad_top = pad;
            s.pad_left = pad;
            s.out_h = OutSize(s.in_h, kernel, s.stride_h, pad);
            s.out_w = OutSize(s.in_w, kernel, s.stride_w, pad);
            ASSERT_TRUE(DepthwiseKernelSupports(s));
            k.x = RandomVector(s.batch * s.in_h * s.in_w * channels, &rng);
            k.w = RandomVector(kernel * kernel * channels, &rng);
            k.bias = RandomVector(channels, &rng);
            k.slope = RandomVector(channels, &rng);
            k.with_bias = counter % 3 != 0;
            k.act = ActivationNumber(counter++, k.slope);
            const int64_t out_size = s.batch * s.out_h * s.out_w * channels;
            for (VectorIsa isa : AvailableVectorIsas()) {
              const std::string what =
                  std::string(VectorIsaName(isa)) +
                  " k=" + std::to_string(kernel) +
                  " pad=" + std::to_string(pad) +
                  " stride=" + std::to_string(s.stride_h) + "x" +
                  std::to_string(s.stride_w) + " in=" + std::to_string(s.in_h) +
                  "x" + std::to_string(s.in_w) +
                  " c=" + std::to_string(channels) +
                  " act=" + std::to_string(static_cast<int>(k.act.kind));
              std::vector<float> y1(out_size, NAN), y2(out_size, NAN);
              const float *bias = k.with_bias ? k.bias.data() : nullptr;
              DepthwiseConv2d(isa, s, k.x.data(), k.w.data(), bias, k.act,
                              y1.data(), pool1.get());
              DepthwiseConv2d(isa, s, k.x.data(), k.w.data(), bias, k.act,
                              y2.data(), pool2.get());
              ExpectMatchesReference(k, y1, what);
              ASSERT_EQ(0, std::memcmp(y1.data(), y2.data(),
                                       out_size * sizeof(float)))
                  << what << ": 1 and 2 threads differ";
              if (HasFailure()) return;
            }
          }
        }
      }
    }
  }
}

TEST(DepthwiseKernelsTest, WeightStridePadsOnlyChannelsOf256Multiples) {
  EXPECT_EQ(DepthwiseWeightStride(1), 1);
  EXPECT_EQ(DepthwiseWeightStride(960), 960);
  EXPECT_EQ(DepthwiseWeightStride(256), 256 + 16);
  EXPECT_EQ(DepthwiseWeightStride(1024), 1024 + 16);
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};  // 2 taps, 3 channels
  std::vector<float> laid(2 * 5, NAN);
  LayDepthwiseWeights(w.data(), 2, 3, 5, laid.data());
  EXPECT_EQ(laid, (std::vector<float>{1, 2, 3, 0, 0, 4, 5, 6, 0, 0}));
}

// Taps weight_stride floats apart, the padding NaN (read, it would show):
// the same results as the model's layout, on every ISA and path (narrow
// rows, tiles, borders).
TEST(DepthwiseKernelsTest, PaddedWeightStrideMatchesFloat64) {
  std::mt19937 rng(20261128);
  auto pool = StartPool(2);
  for (int64_t kernel : {3, 5}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t channels : {int64_t{5}, int64_t{33}, int64_t{256}}) {
        for (int64_t width : {int64_t{7}, int64_t{19}}) {
          Case k = HalfPaddedCase(kernel, stride, channels, 6, width, &rng);
          const DepthwiseShape &s = k.shape;
          k.act.kind = ActivationKind::kReluX;
          k.act.max_limit = 0.5f;
          const int64_t taps = kernel * kernel;
          const int64_t padded = channels + 16 + channels % 3;
          std::vector<float> laid(taps * padded, NAN);
          for (int64_t t = 0; t < taps; ++t) {
            std::copy_n(k.w.data() + t * channels, channels,
                        laid.data() + t * padded);
          }
          DepthwiseShape strided = s;
          strided.weight_stride = padded;
          ASSERT_TRUE(DepthwiseKernelSupports(strided));
          for (VectorIsa isa : AvailableVectorIsas()) {
            std::vector<float> y(s.out_h * s.out_w * channels, NAN);
            DepthwiseConv2d(isa, strided, k.x.data(), laid.data(),
                            k.bias.data(), k.act, y.data(), pool.get());
            ExpectMatchesReference(
                k, y,
                std::string(VectorIsaName(isa)) + " k=" +
                    std::to_string(kernel) + " s=" + std::to_string(stride) +
                    " c=" + std::to_string(channels) +
                    " w=" + std::to_string(width));
            if (HasFailure()) return;
          }
        }
      }
    }
  }
  DepthwiseShape narrower;
  narrower.kernel_h = narrower.kernel_w = 3;
  narrower.channels = narrower.in_h = narrower.in_w = 4;
  narrower.weight_stride = 3;
  EXPECT_FALSE(DepthwiseKernelSupports(narrower));
}

// Rows wide enough for the 8-pixel tiles and the 4-pixel tiles after them,
// with full (unrolled) and clipped windows, 3x3 and 5x5, under every
// activation: ReLU and ReLUX are applied in registers, the others over the
// finished row.
TEST(DepthwiseKernelsTest, WideRowsMatchFloat64UnderEveryActivation) {
  std::mt19937 rng(20261127);
  auto pool1 = StartPool(1);
  for (int activation = 0; activation < 8; ++activation) {
    for (int64_t kernel : {3, 5}) {
      for (int64_t stride : {1, 2}) {
        for (int64_t channels : {int64_t{8}, int64_t{21}}) {
          Case k = HalfPaddedCase(kernel, stride, channels, 5, 31, &rng);
          const DepthwiseShape &s = k.shape;
          k.act = ActivationNumber(activation, k.slope);
          for (VectorIsa isa : AvailableVectorIsas()) {
            const std::string what =
                std::string(VectorIsaName(isa)) +
                " act=" + std::to_string(static_cast<int>(k.act.kind)) +
                " k=" + std::to_string(kernel) +
                " stride=" + std::to_string(stride) +
                " c=" + std::to_string(channels);
            std::vector<float> y(s.out_h * s.out_w * channels, NAN);
            DepthwiseConv2d(isa, s, k.x.data(), k.w.data(), k.bias.data(),
                            k.act, y.data(), pool1.get());
            ExpectMatchesReference(k, y, what);
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

// A MobileNet-like layer through the op, under every ISA: SAME padding,
// stride 2, ReLU6, channels spanning several vectors and a tail.
void ExpectOpMatchesFloat64UnderEveryIsa(int64_t channels);

// 256 channels: the op re-lays the filter with padded taps.
TEST(DepthwiseKernelsTest, OpMatchesFloat64UnderEveryIsa) {
  for (int64_t channels : {int64_t{37}, int64_t{256}}) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    ExpectOpMatchesFloat64UnderEveryIsa(channels);
  }
}

void ExpectOpMatchesFloat64UnderEveryIsa(int64_t channels) {
  std::mt19937 rng(5);
  Case k;
  DepthwiseShape &s = k.shape;
  s.batch = 2;
  s.in_h = 13;
  s.in_w = 11;
  s.channels = channels;
  s.kernel_h = s.kernel_w = 3;
  s.stride_h = s.stride_w = 2;
  // TF SAME: out = ceil(in / 2), total pad = (out - 1) * 2 + 3 - in, the
  // smaller half first.
  s.out_h = 7;
  s.out_w = 6;
  s.pad_top = ((s.out_h - 1) * 2 + 3 - s.in_h) / 2;
  s.pad_left = ((s.out_w - 1) * 2 + 3 - s.in_w) / 2;
  k.x = RandomVector(s.batch * s.in_h * s.in_w * s.channels, &rng);
  k.w = RandomVector(9 * s.channels, &rng);
  k.bias = RandomVector(s.channels, &rng);
  k.act.kind = ActivationKind::kReluX;
  k.act.max_limit = 0.5f;
  const VectorIsa before = SelectedVectorIsa();
  for (VectorIsa isa : AvailableVectorIsas()) {
    ASSERT_TRUE(SetVectorIsaForTesting(isa));
    for (int threads : {1, 2}) {
      test::OpTester op("DepthwiseConv2d");
      op.Input("x", {s.batch, s.in_h, s.in_w, s.channels}, k.x)
          .Constant("w", {3, 3, s.channels, 1}, k.w)
          .Constant("b", {s.channels}, k.bias)
          .Output("y")
          .ArgInts("strides", {2, 2})
          .Arg("padding", 1)
          .ArgString("activation", "RELUX")
          .ArgFloat("max_limit", 0.5f)
          .Threads(threads);
      ASSERT_EQ(op.Run(), MaceStatus::MACE_SUCCESS);
      const std::vector<int64_t> want_shape = {s.batch, s.out_h, s.out_w,
                                               s.channels};
      ASSERT_EQ(op.output(0).shape, want_shape);
      ExpectMatchesReference(k, op.output(0).floats,
                             std::string("op ") + VectorIsaName(isa) +
                                 " threads=" + std::to_string(threads));
    }
  }
  SetVectorIsaForTesting(before);
}

// An activation the kernels do not implement (ELU) runs after them, on
// every output value once.
TEST(DepthwiseKernelsTest, OpAppliesOtherActivationsAfterTheKernel) {
  std::mt19937 rng(9);
  Case k;
  DepthwiseShape &s = k.shape;
  s.batch = 1;
  s.in_h = s.out_h = 6;
  s.in_w = s.out_w = 9;
  s.channels = 19;
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = 1;
  k.x = RandomVector(s.in_h * s.in_w * s.channels, &rng);
  k.w = RandomVector(9 * s.channels, &rng);
  k.bias = RandomVector(s.channels, &rng);
  test::OpTester op("DepthwiseConv2d");
  op.Input("x", {1, s.in_h, s.in_w, s.channels}, k.x)
      .Constant("w", {3, 3, s.channels, 1}, k.w)
      .Constant("b", {s.channels}, k.bias)
      .Output("y")
      .Arg("padding", 1)
      .ArgString("activation", "ELU")
      .ArgFloat("activation_coefficient", 0.5f)
      .Threads(2);
  ASSERT_EQ(op.Run(), MaceStatus::MACE_SUCCESS);
  // ELU undone (x = log(y / 0.5 + 1) where y < 0) must give the plain
  // convolution.
  std::vector<float> plain = op.output(0).floats;
  ASSERT_EQ(plain.size(), k.x.size());
  for (float &v : plain) {
    if (v < 0.0f) v = std::log1p(v / 0.5f);
  }
  ExpectMatchesReference(k, plain, "ELU undone");
}

}  // namespace
}  // namespace kernels
}  // namespace mace
