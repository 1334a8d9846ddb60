// The pooling kernels of every ISA this machine runs, against a float64
// max / average written from the definition, on channel counts that are not
// multiples of any vector width (and one spanning several vector groups),
// 1-pixel images, odd sizes, padding, strides, dilation, global windows,
// both count_include_pad rules, batch 2. The kernels keep the reference
// op's order of operations, so every ISA and thread count must also give
// the same bits. Then the Pooling op under every ISA.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mace/kernels/pooling.h"
#include "tests/common/kernel_test_util.h"
#include "tests/common/op_tester.h"

namespace mace {
namespace kernels {
namespace {

using test::RandomVector;
using test::StartPool;

// Along one axis: how many window cells of each output lie in [low, high).
std::vector<int64_t> CountCells(int64_t out, int64_t kernel, int64_t stride,
                                int64_t dilation, int64_t pad, int64_t low,
                                int64_t high) {
  std::vector<int64_t> counts(out, 0);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < kernel; ++k) {
      const int64_t i = o * stride - pad + k * dilation;
      if (i >= low && i < high) ++counts[o];
    }
  }
  return counts;
}

struct Case {
  PoolShape shape;
  std::vector<float> x;
  std::vector<int64_t> row_counts, col_counts;
};

void ExpectMatchesReference(const Case &k, PoolKind kind,
                            const std::vector<float> &y,
                            const std::string &what) {
  const PoolShape &s = k.shape;
  int failures = 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        for (int64_t c = 0; c < s.channels; ++c) {
          double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
          for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
            const int64_t ih = oh * s.stride_h - s.pad_top + kh * s.dilation_h;
            if (ih < 0 || ih >= s.in_h) continue;
            for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
              const int64_t iw =
                  ow * s.stride_w - s.pad_left + kw * s.dilation_w;
              if (iw < 0 || iw >= s.in_w) continue;
              const double v =
                  k.x[((n * s.in_h + ih) * s.in_w + iw) * s.channels + c];
              max = std::max(max, v);
              sum += v;
            }
          }
          const double want = kind == PoolKind::kMax
                                  ? max
                                  : sum / static_cast<double>(k.row_counts[oh] *
                                                              k.col_counts[ow]);
          const double got =
              y[((n * s.out_h + oh) * s.out_w + ow) * s.channels + c];
          const bool ok = kind == PoolKind::kMax
                              ? got == want
                              : std::fabs(got - want) <= 1e-5;
          if (!ok && ++failures <= 3) {
            ADD_FAILURE() << what << " at n=" << n << " oh=" << oh
                          << " ow=" << ow << " c=" << c << ": got " << got
                          << ", want " << want;
          }
        }
      }
    }
  }
}

TEST(PoolingKernelsTest, EveryIsaMatchesFloat64AndGivesTheSameBits) {
  std::mt19937 rng(20261121);
  auto pool1 = StartPool(1);
  auto pool2 = StartPool(2);
  auto pool3 = StartPool(3);
  const int64_t kChannels[] = {1, 3, 5, 17, 33, 70, 130};
  const int64_t kSpatial[][2] = {{1, 1}, {2, 3}, {7, 5}, {9, 12}};
  struct Window {
    int64_t kernel, stride, dilation, pad;
  };
  const Window kWindows[] = {{1, 1, 1, 0}, {2, 2, 1, 0}, {3, 1, 1, 1},
                             {3, 2, 1, 1}, {3, 2, 1, 0}, {3, 1, 2, 2},
                             {5, 2, 1, 2}, {0, 1, 1, 0}};  // 0: global
  for (const Window &win : kWindows) {
    for (const auto &hw : kSpatial) {
      const bool global = win.kernel == 0;
      const int64_t kh = global ? hw[0] : win.kernel;
      const int64_t kw = global ? hw[1] : win.kernel;
      const int64_t extent_h = (kh - 1) * win.dilation + 1;
      const int64_t extent_w = (kw - 1) * win.dilation + 1;
      if (hw[0] + 2 * win.pad < extent_h || hw[1] + 2 * win.pad < extent_w) {
        continue;
      }
      for (int64_t channels : kChannels) {
        for (int include_pad : {0, 1}) {
          Case k;
          PoolShape &s = k.shape;
          s.batch = 2;
          s.in_h = hw[0];
          s.in_w = hw[1];
          s.channels = channels;
          s.kernel_h = kh;
          s.kernel_w = kw;
          s.stride_h = s.stride_w = win.stride;
          s.dilation_h = s.dilation_w = win.dilation;
          s.pad_top = s.pad_left = win.pad;
          s.out_h = (s.in_h + 2 * win.pad - extent_h) / win.stride + 1;
          s.out_w = (s.in_w + 2 * win.pad - extent_w) / win.stride + 1;
          const int64_t pad_h = include_pad ? win.pad : 0;
          k.row_counts = CountCells(s.out_h, kh, win.stride, win.dilation,
                                    win.pad, -pad_h, s.in_h + pad_h);
          k.col_counts = CountCells(s.out_w, kw, win.stride, win.dilation,
                                    win.pad, -pad_h, s.in_w + pad_h);
          bool empty = false;
          for (int64_t v : k.row_counts) empty |= v == 0;
          for (int64_t v : k.col_counts) empty |= v == 0;
          if (empty) continue;
          k.x = RandomVector(s.batch * s.in_h * s.in_w * channels, &rng);
          const int64_t out_size = s.batch * s.out_h * s.out_w * channels;
          for (PoolKind kind : {PoolKind::kMax, PoolKind::kAvg}) {
            std::vector<float> first;
            for (VectorIsa isa : AvailableVectorIsas()) {
              const std::string what =
                  std::string(VectorIsaName(isa)) +
                  (kind == PoolKind::kMax ? " max" : " avg") +
                  " k=" + std::to_string(win.kernel) +
                  " s=" + std::to_string(win.stride) +
                  " d=" + std::to_string(win.dilation) +
                  " pad=" + std::to_string(win.pad) +
                  " include_pad=" + std::to_string(include_pad) +
                  " in=" + std::to_string(s.in_h) + "x" +
                  std::to_string(s.in_w) + " c=" + std::to_string(channels);
              for (ThreadPool *pool : {pool1.get(), pool2.get(), pool3.get()}) {
                std::vector<float> y(out_size, NAN);
                Pool2d(isa, kind, s, k.x.data(), k.row_counts.data(),
                       k.col_counts.data(), y.data(), pool);
                if (first.empty()) {
                  ExpectMatchesReference(k, kind, y, what);
                  first = y;
                } else {
                  ASSERT_EQ(0, std::memcmp(first.data(), y.data(),
                                           out_size * sizeof(float)))
                      << what << " threads=" << pool->num_threads()
                      << " differs from generic on 1 thread";
                }
              }
              if (HasFailure()) return;
            }
          }
        }
      }
    }
  }
}

// Rows too few for the threads (global pooling: one a image) share out
// their channels in groups of four vectors, or in single vectors when the
// groups are fewer than the threads; enough rows keep every channel
// together.
TEST(PoolingKernelsTest, ChannelsAreSplitOnlyWhenRowsAreTooFew) {
  EXPECT_EQ(PoolChannelBlock(56, 32, 16, 2), 32);
  EXPECT_EQ(PoolChannelBlock(1, 1280, 16, 1), 1280);
  EXPECT_EQ(PoolChannelBlock(1, 32, 16, 2), 16);
  EXPECT_EQ(PoolChannelBlock(1, 1280, 16, 2), 192);  // 7 blocks of 3 groups
  EXPECT_EQ(PoolChannelBlock(1, 72, 16, 2), 64);     // a group, a vector
  EXPECT_EQ(PoolChannelBlock(2, 1000, 8, 16), 32);   // 32 blocks a row
  EXPECT_EQ(PoolChannelBlock(1, 5, 16, 4), 16);      // one partial vector
  EXPECT_EQ(PoolChannelBlock(1, 0, 16, 4), 16);      // never an empty block
}

// Global average pooling (the classifier head of ResNet, MobileNet and
// SqueezeNet) and a padded max pooling through the op, under every ISA.
TEST(PoolingKernelsTest, OpMatchesFloat64UnderEveryIsa) {
  std::mt19937 rng(5);
  const std::vector<int64_t> shape = {2, 7, 6, 37};
  const std::vector<float> x = RandomVector(2 * 7 * 6 * 37, &rng);
  const VectorIsa before = SelectedVectorIsa();
  for (VectorIsa isa : AvailableVectorIsas()) {
    ASSERT_TRUE(SetVectorIsaForTesting(isa));
    for (int threads : {1, 2}) {
      const std::string what = std::string(VectorIsaName(isa)) +
                               " threads=" + std::to_string(threads);
      test::OpTester avg("Pooling");
      avg.Input("x", shape, x)
          .Output("y")
          .Arg("pooling_type", 1)
          .Arg("global_pooling", 1)
          .Threads(threads);
      ASSERT_EQ(avg.Run(), MaceStatus::MACE_SUCCESS) << what;
      ASSERT_EQ(avg.output(0).shape, (std::vector<int64_t>{2, 1, 1, 37}));
      for (int64_t n = 0; n < 2; ++n) {
        for (int64_t c = 0; c < 37; ++c) {
          double sum = 0.0;
          for (int64_t p = 0; p < 42; ++p) sum += x[(n * 42 + p) * 37 + c];
          ASSERT_NEAR(avg.output(0).floats[n * 37 + c], sum / 42.0, 1e-5)
              << what << " n=" << n << " c=" << c;
        }
      }

      // 3x3 stride 2 SAME: out 4x3, pads (top, left) = (1, 0).
      test::OpTester max("Pooling");
      max.Input("x", shape, x)
          .Output("y")
          .Arg("pooling_type", 2)
          .ArgInts("kernels", {3, 3})
          .ArgInts("strides", {2, 2})
          .Arg("padding", 1)
          .Threads(threads);
      ASSERT_EQ(max.Run(), MaceStatus::MACE_SUCCESS) << what;
      ASSERT_EQ(max.output(0).shape, (std::vector<int64_t>{2, 4, 3, 37}));
      for (int64_t n = 0; n < 2; ++n) {
        for (int64_t oh = 0; oh < 4; ++oh) {
          for (int64_t ow = 0; ow < 3; ++ow) {
            for (int64_t c = 0; c < 37; ++c) {
              float want = -std::numeric_limits<float>::infinity();
              for (int64_t ih = oh * 2 - 1; ih < oh * 2 + 2; ++ih) {
                for (int64_t iw = ow * 2; iw < ow * 2 + 3; ++iw) {
                  if (ih < 0 || ih >= 7 || iw >= 6) continue;
                  want = std::max(want, x[((n * 7 + ih) * 6 + iw) * 37 + c]);
                }
              }
              ASSERT_EQ(max.output(0).floats[((n * 4 + oh) * 3 + ow) * 37 + c],
                        want)
                  << what << " at " << n << "," << oh << "," << ow << "," << c;
            }
          }
        }
      }
    }
  }
  SetVectorIsaForTesting(before);
}

}  // namespace
}  // namespace kernels
}  // namespace mace
