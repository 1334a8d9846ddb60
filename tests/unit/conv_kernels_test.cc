// The convolution kernels of mace/kernels (im2col + packed SGEMM, Winograd
// F(2,3) / F(4,3) / F(6,3) / F(2,5) / F(4,5), 1-D Winograd) under every
// SGEMM ISA this machine runs,
// against a float64 convolution written from the definition: edge shapes
// (sizes 1, odd sizes, channels 3 / 5 / 17, padding on every side, stride
// and dilation 2, groups, batch 2), on 1, 2 and 3 threads, where the
// result must not depend on the thread count.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mace/core/deferred_work.h"
#include "mace/kernels/conv_im2col.h"
#include "mace/kernels/conv_tasks.h"
#include "mace/kernels/sgemm_ukernel.h"
#include "mace/kernels/winograd.h"
#include "mace/kernels/winograd_1d.h"
#include "tests/common/kernel_test_util.h"

namespace mace {
namespace kernels {
namespace {

using test::RandomVector;
using test::StartPool;

struct Case {
  int64_t batch, in_h, in_w, in_c, out_c;
  int64_t kernel_h, kernel_w;
  int64_t stride = 1, dilation = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t groups = 1;
  int64_t dilation_h = 0;  // 0: `dilation` along the height too
};

int64_t DilationH(const Case &c) {
  return c.dilation_h > 0 ? c.dilation_h : c.dilation;
}

ConvGeometry GeometryOf(const Case &c) {
  ConvGeometry g;
  g.batch = c.batch;
  g.in_h = c.in_h;
  g.in_w = c.in_w;
  g.in_c = c.in_c;
  g.out_c = c.out_c;
  g.kernel_h = c.kernel_h;
  g.kernel_w = c.kernel_w;
  g.stride_h = g.stride_w = c.stride;
  g.dilation_h = DilationH(c);
  g.dilation_w = c.dilation;
  g.pad_top = c.pad_top;
  g.pad_left = c.pad_left;
  g.groups = c.groups;
  g.out_h = (c.in_h + c.pad_top + c.pad_bottom -
             (c.kernel_h - 1) * DilationH(c) - 1) /
                c.stride +
            1;
  g.out_w =
      (c.in_w + c.pad_left + c.pad_right - (c.kernel_w - 1) * c.dilation - 1) /
          c.stride +
      1;
  return g;
}

std::string Describe(const Case &c) {
  return "N" + std::to_string(c.batch) + " " + std::to_string(c.in_h) + "x" +
         std::to_string(c.in_w) + "x" + std::to_string(c.in_c) + " -> " +
         std::to_string(c.out_c) + " K" + std::to_string(c.kernel_h) + "x" +
         std::to_string(c.kernel_w) + " S" + std::to_string(c.stride) + " D" +
         std::to_string(c.dilation) + " pads " + std::to_string(c.pad_top) +
         "," + std::to_string(c.pad_left) + "," + std::to_string(c.pad_bottom) +
         "," + std::to_string(c.pad_right) + " G" + std::to_string(c.groups) +
         " Dh" + std::to_string(DilationH(c));
}

struct Problem {
  ConvGeometry geo;
  std::vector<float> input, filter, bias;
  std::vector<double> expected;   // conv + bias in float64
  std::vector<double> magnitude;  // sum of |terms|: the rounding scale
};

Problem MakeProblem(const Case &c, std::mt19937 *rng) {
  Problem p;
  p.geo = GeometryOf(c);
  const ConvGeometry &g = p.geo;
  const int64_t cpg = g.in_c / g.groups, opg = g.out_c / g.groups;
  p.input = RandomVector(g.batch * g.in_h * g.in_w * g.in_c, rng);
  p.filter = RandomVector(g.out_c * g.kernel_h * g.kernel_w * cpg, rng);
  p.bias = RandomVector(g.out_c, rng);
  const int64_t outputs = g.batch * g.out_h * g.out_w * g.out_c;
  p.expected.assign(outputs, 0.0);
  p.magnitude.assign(outputs, 0.0);
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        for (int64_t oc = 0; oc < g.out_c; ++oc) {
          const int64_t group = oc / opg;
          double sum = p.bias[oc], mag = std::fabs(p.bias[oc]);
          for (int64_t kh = 0; kh < g.kernel_h; ++kh)
            for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
              const int64_t ih =
                  oh * g.stride_h - g.pad_top + kh * g.dilation_h;
              const int64_t iw =
                  ow * g.stride_w - g.pad_left + kw * g.dilation_w;
              if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
              for (int64_t ic = 0; ic < cpg; ++ic) {
                const double term =
                    static_cast<double>(
                        p.input[((n * g.in_h + ih) * g.in_w + iw) * g.in_c +
                                group * cpg + ic]) *
                    p.filter[((oc * g.kernel_h + kh) * g.kernel_w + kw) * cpg +
                             ic];
                sum += term;
                mag += std::fabs(term);
              }
            }
          const int64_t at = ((n * g.out_h + oh) * g.out_w + ow) * g.out_c + oc;
          p.expected[at] = sum;
          p.magnitude[at] = mag;
        }
  return p;
}

// Largest |got - expected| / magnitude (0 when every value is exact).
double WorstRelativeError(const Problem &p, const std::vector<float> &got) {
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double error = std::fabs(got[i] - p.expected[i]);
    worst = std::max(worst, error / std::max(p.magnitude[i], 1e-30));
  }
  return worst;
}

// Either kernel without a clamp (only im2col takes one); out_stride 0
// means out_c.
void RunConv(const Im2colConv &kernel, const Problem &p, float *output,
             float *scratch, ThreadPool *pool, const SgemmEpilogue *epilogue,
             int64_t out_stride = 0) {
  kernel.Run(p.input.data(), p.bias.data(), nullptr, nullptr, output,
             out_stride > 0 ? out_stride : p.geo.out_c, scratch, pool,
             epilogue);
}
void RunConv(const WinogradConv &kernel, const Problem &p, float *output,
             float *scratch, ThreadPool *pool, const SgemmEpilogue *epilogue,
             int64_t out_stride = 0) {
  kernel.Run(p.input.data(), p.bias.data(), output,
             out_stride > 0 ? out_stride : p.geo.out_c, scratch, pool,
             epilogue);
}

void RunConv(const Winograd1dConv &kernel, const Problem &p, float *output,
             float *scratch, ThreadPool *pool, const SgemmEpilogue *epilogue,
             int64_t out_stride = 0) {
  kernel.Run(p.input.data(), p.bias.data(), output,
             out_stride > 0 ? out_stride : p.geo.out_c, scratch, pool,
             epilogue);
}

// The kernel writing its output inside a wider tensor (pixels out_c + 11
// floats apart, from channel 5 on, as a Concat's input written in place),
// with an epilogue that negates each block: every pixel's channels equal
// the packed run's, bit for bit, and the 11 channels around them keep
// their sentinel.
template <typename Kernel>
void ExpectStridedMatchesPacked(const Kernel &kernel, const Problem &p,
                                const std::string &what) {
  const int64_t out_c = p.geo.out_c;
  const int64_t pixels = static_cast<int64_t>(p.expected.size()) / out_c;
  const int64_t stride = out_c + 11, offset = 5;
  std::vector<float> scratch(kernel.ScratchBytes() / sizeof(float) + 1);
  auto negate = [](float *c, int64_t rows, int64_t cols, int64_t ldc) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) c[r * ldc + j] = -c[r * ldc + j];
  };
  const SgemmEpilogue epilogue(negate);
  for (int threads : {1, 2}) {
    auto pool = StartPool(threads);
    std::vector<float> packed(p.expected.size(), NAN);
    RunConv(kernel, p, packed.data(), scratch.data(), pool.get(), &epilogue);
    const float sentinel = 1234.5f;
    std::vector<float> wide(pixels * stride, sentinel);
    RunConv(kernel, p, wide.data() + offset, scratch.data(), pool.get(),
            &epilogue, stride);
    for (int64_t px = 0; px < pixels; ++px) {
      for (int64_t c = 0; c < stride; ++c) {
        const float got = wide[px * stride + c];
        if (c < offset || c >= offset + out_c) {
          ASSERT_EQ(got, sentinel) << what << " pixel " << px << " gap " << c;
        } else {
          ASSERT_EQ(got, packed[px * out_c + c - offset])
              << what << " threads=" << threads << " pixel " << px
              << " channel " << c - offset;
        }
      }
    }
  }
}

// Runs `kernel` (Im2colConv or WinogradConv, initialised for 3 threads)
// on 1, 2 and 3 threads; checks the outputs against the reference and
// against each other, bit for bit.
template <typename Kernel>
void ExpectMatches(const Kernel &kernel, const Problem &p, double tolerance,
                   const std::string &what) {
  std::vector<float> scratch(kernel.ScratchBytes() / sizeof(float) + 1);
  std::vector<float> first;
  for (int threads : {1, 2, 3}) {
    auto pool = StartPool(threads);
    std::vector<float> output(p.expected.size(), NAN);
    RunConv(kernel, p, output.data(), scratch.data(), pool.get(), nullptr);
    const double worst = WorstRelativeError(p, output);
    EXPECT_LE(worst, tolerance) << what << " threads=" << threads;
    if (first.empty()) {
      first = output;
    } else {
      EXPECT_TRUE(std::equal(first.begin(), first.end(), output.begin()))
          << what << ": threads=" << threads << " differs from 1 thread";
    }
  }
}

std::vector<Case> Im2colCases() {
  std::vector<Case> cases;
  cases.push_back({1, 1, 1, 1, 1, 1, 1});
  cases.push_back({2, 7, 9, 3, 5, 3, 3, 1, 1, 1, 1, 1, 1});
  cases.push_back({1, 5, 6, 17, 3, 5, 5, 1, 1, 2, 2, 2, 2});
  cases.push_back({1, 13, 11, 5, 17, 3, 3, 2, 2});
  cases.push_back({2, 9, 8, 3, 5, 3, 3, 2, 1, 1, 1, 1, 0});
  cases.push_back({1, 8, 6, 3, 5, 7, 1, 1, 1, 1, 0, 2, 3});
  cases.push_back({2, 5, 7, 17, 40, 1, 1});    // read in place
  cases.push_back({1, 5, 7, 17, 9, 1, 1, 2});  // 1x1 stride 2
  cases.push_back({1, 7, 7, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, 3});
  cases.push_back({2, 5, 6, 5, 10, 3, 3, 1, 1, 0, 0, 0, 0, 5});
  cases.push_back({1, 9, 9, 4, 6, 3, 3, 2, 2, 2, 1, 1, 2, 2});
  cases.push_back({1, 6, 6, 8, 8, 1, 1, 1, 1, 0, 0, 0, 0, 2});  // grouped 1x1
  cases.push_back({1, 3, 4, 33, 70, 3, 3, 1, 1, 1, 1, 1, 1});   // K > tile
  cases.push_back({3, 1, 1, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1});     // size 1
  // An RGB stem's shape with 16 outputs: one half-width panel, stored whole.
  cases.push_back({2, 9, 11, 3, 16, 3, 3, 2, 1, 1, 1, 1, 1});
  // Gathered tiles (dilated along the width) of 90 rows (K = 360) that
  // start inside an image and cross into the next: the gathering's running
  // pixel coordinates.
  cases.push_back({2, 23, 29, 40, 48, 3, 3, 1, 2, 2, 2, 2, 2});
  // Window rows read in place, in bands of rows that share each pass over
  // a filter panel: bands of 8 rows crossing from one image into the next,
  // padded edges on both sides, five panels (the last an edge) in column
  // blocks that reuse a slot's padded copies;
  cases.push_back({3, 7, 9, 20, 70, 3, 3, 1, 1, 1, 1, 1, 1});
  // bands of kMaxBandRows rows of 4 pixels;
  cases.push_back({1, 100, 4, 5, 9, 3, 3, 1, 1, 1, 1, 1, 1});
  // Inception's 7x1 on 17x17, and strided 3x3s padded on the right only
  // (ResNet-50's stride-2 layers, SAME): rows of 28 pixels by bands, rows
  // of 7, too narrow for whole micro-kernel tiles, gathered;
  cases.push_back({1, 17, 17, 24, 40, 7, 1, 1, 1, 3, 0, 3, 0});
  cases.push_back({1, 8, 56, 24, 20, 3, 3, 2, 1, 0, 0, 1, 1});
  cases.push_back({1, 14, 14, 24, 20, 3, 3, 2, 1, 0, 0, 1, 1});
  // one row of 64 pixels or more a band: an RGB stem, stride 2, 16 outputs;
  cases.push_back({1, 4, 110, 3, 16, 3, 3, 2, 1, 1, 1, 1, 1});
  // a 7x7/2 stem of 70 outputs (a full panel, a half one, an edge), batch 2;
  cases.push_back({2, 5, 110, 3, 70, 7, 7, 2, 1, 3, 3, 3, 3});
  // padding past the kernel's height: rows whose every window row is
  // padding (bias and addend only), others with one;
  cases.push_back({1, 1, 52, 2, 17, 3, 3, 1, 1, 3, 1, 3, 1});
  // dilation along the height only, unpadded top, padded width;
  cases.push_back({2, 9, 54, 5, 40, 3, 3, 1, 1, 0, 1, 2, 1, 1, 2});
  // a strided 1x1 (one run of in_c a pixel) and a 1x7.
  cases.push_back({1, 3, 100, 6, 33, 1, 1, 2});
  cases.push_back({1, 3, 60, 4, 20, 1, 7, 1, 1, 0, 3, 0, 3});
  // Window rows with padded edge blocks: padding on the right only, and
  // on the left only;
  cases.push_back({1, 4, 50, 5, 12, 3, 3, 1, 1, 0, 0, 2, 2});
  cases.push_back({1, 4, 50, 5, 12, 3, 3, 1, 1, 2, 2, 0, 0});
  // a left pad wider than a tile (its block spans two), stride 2 with a
  // right edge, and windows wider than the input (edge blocks of zeros).
  cases.push_back({1, 3, 50, 4, 10, 1, 11, 1, 1, 0, 10, 0, 10});
  cases.push_back({1, 5, 99, 3, 33, 5, 5, 2, 1, 2, 2, 2, 2});
  cases.push_back({1, 2, 5, 2, 6, 1, 11, 1, 1, 0, 27, 0, 27});
  return cases;
}

// A fused ReLU6-like clamp applied inside the GEMM, on every edge shape.
TEST(ConvKernelsTest, Im2colClampMatchesClampedFloat64) {
  std::mt19937 rng(15);
  auto pool = StartPool(2);
  const float clamp[2] = {0.0f, 0.3f};
  for (const Case &c : Im2colCases()) {
    const Problem p = MakeProblem(c, &rng);
    for (SgemmIsa isa : AvailableSgemmIsas()) {
      Im2colConv conv;
      ASSERT_TRUE(conv.Init(p.geo, p.filter.data(), isa, 2));
      std::vector<float> scratch(conv.ScratchBytes() / sizeof(float) + 1);
      std::vector<float> output(p.expected.size(), NAN);
      conv.Run(p.input.data(), p.bias.data(), clamp, nullptr, output.data(),
               p.geo.out_c, scratch.data(), pool.get(), nullptr);
      for (size_t i = 0; i < output.size(); ++i) {
        const double want = std::fmin(std::fmax(p.expected[i], 0.0), 0.3);
        ASSERT_NEAR(output[i], want, 1e-6 * p.magnitude[i] + 1e-30)
            << SgemmIsaName(isa) << " " << Describe(c) << " at " << i;
      }
    }
  }
}

// A fused residual addend added in the GEMM's registers before the clamp,
// on every edge shape (edge columns go through the stack tile), with and
// without a clamp.
TEST(ConvKernelsTest, Im2colAddendMatchesFloat64) {
  std::mt19937 rng(16);
  auto pool = StartPool(2);
  const float clamp[2] = {0.0f, 0.3f};
  for (const Case &c : Im2colCases()) {
    const Problem p = MakeProblem(c, &rng);
    const std::vector<float> addend = RandomVector(p.expected.size(), &rng);
    for (SgemmIsa isa : AvailableSgemmIsas()) {
      Im2colConv conv;
      ASSERT_TRUE(conv.Init(p.geo, p.filter.data(), isa, 2));
      std::vector<float> scratch(conv.ScratchBytes() / sizeof(float) + 1);
      for (const float *bounds : {static_cast<const float *>(nullptr),
                                  static_cast<const float *>(clamp)}) {
        std::vector<float> output(p.expected.size(), NAN);
        conv.Run(p.input.data(), p.bias.data(), bounds, addend.data(),
                 output.data(), p.geo.out_c, scratch.data(), pool.get(),
                 nullptr);
        for (size_t i = 0; i < output.size(); ++i) {
          double want = p.expected[i] + addend[i];
          if (bounds != nullptr) want = std::fmin(std::fmax(want, 0.0), 0.3);
          ASSERT_NEAR(output[i], want,
                      1e-6 * (p.magnitude[i] + std::fabs(addend[i])) + 1e-30)
              << SgemmIsaName(isa) << " " << Describe(c) << " at " << i
              << (bounds != nullptr ? " clamped" : "");
        }
      }
    }
  }
}

TEST(ConvKernelsTest, Im2colEveryIsaMatchesFloat64OnEdgeShapes) {
  std::mt19937 rng(11);
  for (const Case &c : Im2colCases()) {
    const Problem p = MakeProblem(c, &rng);
    for (SgemmIsa isa : AvailableSgemmIsas()) {
      Im2colConv conv;
      conv.Init(p.geo, p.filter.data(), isa, 3);
      ExpectMatches(conv, p, 1e-6,
                    std::string(SgemmIsaName(isa)) + " " + Describe(c));
    }
  }
}

// A Kernel set up by init(kernel, threads), as an engine sets its ops up
// for its pool, and run on a pool of that many threads.
template <typename Kernel, typename InitFn>
std::vector<float> OutputSetUpFor(int threads, const Problem &p,
                                  const InitFn &init) {
  Kernel conv;
  EXPECT_TRUE(init(conv, threads));
  auto pool = StartPool(threads);
  std::vector<float> scratch(conv.ScratchBytes() / sizeof(float) + 1);
  std::vector<float> output(p.expected.size(), NAN);
  RunConv(conv, p, output.data(), scratch.data(), pool.get(), nullptr);
  return output;
}

// Set up for and run on 2 to 4 threads: the bits of 1 thread.
template <typename Kernel, typename InitFn>
void ExpectSameBitsOnAnyThreadCount(const Problem &p, const std::string &what,
                                    const InitFn &init) {
  const std::vector<float> first = OutputSetUpFor<Kernel>(1, p, init);
  for (int threads = 2; threads <= 4; ++threads) {
    const std::vector<float> output = OutputSetUpFor<Kernel>(threads, p, init);
    ASSERT_TRUE(std::equal(first.begin(), first.end(), output.begin()))
        << what << ": set up for " << threads << " threads, differs from 1";
  }
}

// Filters larger than kPixelSplitMatrixBytes with a smaller input, where
// threads split the output channels first (SplitColumnsFirst): a stride-2
// 3x3 read by window rows, a 1x1 read in place, a width-dilated 3x3
// through gathered tiles; on 2 and 3 threads each matches float64 and the
// 1-thread result bit for bit (ExpectMatches).
TEST(ConvKernelsTest, LargeFiltersSplitByChannelsMatchFloat64) {
  std::mt19937 rng(13);
  const Case cases[] = {
      {1, 9, 10, 160, 224, 3, 3, 2, 1, 1, 1, 1, 1},  // 1.3 MB of filter
      {1, 7, 7, 512, 300, 1, 1},                     // 0.6 MB
      {1, 9, 9, 96, 200, 3, 3, 1, 2, 2, 2, 2, 2},    // 0.7 MB
  };
  for (const Case &c : cases) {
    const Problem p = MakeProblem(c, &rng);
    const int64_t k = c.kernel_h * c.kernel_w * c.in_c;
    ASSERT_GT(PackedBSize(k, c.out_c, SelectedSgemmIsa()) *
                  static_cast<int64_t>(sizeof(float)),
              kPixelSplitMatrixBytes)
        << Describe(c);
    Im2colConv conv;
    ASSERT_TRUE(conv.Init(p.geo, p.filter.data(), SelectedSgemmIsa(), 3));
    ExpectMatches(conv, p, 1e-5, Describe(c));
  }
}

// The task grid: columns first where the filter outweighs the input as
// SplitColumnsFirst counts (a column block a thread's share of the tasks,
// each task one (row task, column block) pair), rows first otherwise.
TEST(ConvKernelsTest, TaskGridSplitsColumnsFirstWhereTheFilterOutweighsInput) {
  constexpr int64_t kMiB = 1 << 20;
  // ResNet-50's 3x3 stride 2 on 56x56: 1.6 MB of input, 0.6 MB of filter.
  EXPECT_TRUE(SplitColumnsFirst(1605632, 589824, 2));
  EXPECT_FALSE(SplitColumnsFirst(1605632, 589824, 8));
  EXPECT_FALSE(SplitColumnsFirst(1605632, 589824, 1));
  EXPECT_FALSE(SplitColumnsFirst(64 * 1024, kPixelSplitMatrixBytes, 2));
  EXPECT_TRUE(SplitColumnsFirst(401408, 9 * kMiB, 16));

  auto pool = test::StartPool(2);
  const ConvTaskGrid grid =
      PlanConvTasks(pool.get(), 2, 128, 16, 14, 1605632, 589824);
  EXPECT_TRUE(grid.columns_first);
  EXPECT_EQ(grid.col_blocks % 2, 0);
  EXPECT_EQ(grid.row_tasks, 14);
  std::vector<int> seen(grid.row_tasks * grid.col_blocks, 0);
  for (int64_t task = 0; task < grid.tasks(); ++task) {
    ++seen[grid.RowTask(task) * grid.col_blocks + grid.ColBlock(task)];
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(),
                          [](int count) { return count == 1; }));
  // Each thread's half of the tasks is whole column blocks.
  const int64_t half = grid.tasks() / 2;
  EXPECT_EQ(grid.ColBlock(half - 1) + 1, grid.ColBlock(half));
  EXPECT_EQ(grid.RowTask(half), 0);

  const ConvTaskGrid rows =
      PlanConvTasks(pool.get(), 2, 128, 16, 14, 1605632, 256 * 1024);
  EXPECT_FALSE(rows.columns_first);
  EXPECT_EQ(rows.RowTask(1), rows.col_blocks > 1 ? 0 : 1);
}

// Largest error / magnitude allowed for F(tile_m, r): F(6,3)'s matrices
// hold values up to 32 and 21/4, which amplify float rounding, and F(4,5)
// shares its points; F(2,5) shares F(4,3)'s.
double WinogradTolerance(int tile_m, int64_t kernel = 3) {
  const int64_t side = tile_m + kernel - 1;
  return side <= 4 ? 1e-6 : side <= 6 ? 1e-5 : 2e-5;
}

// The output tiles WinogradConv has for a case's window.
std::vector<int> WinogradTiles(const Case &c) {
  if (c.kernel_h == 5) return {2, 4};
  return {2, 4, 6};
}

// "F(m,r)" of a tile and window.
std::string WinogradName(int tile_m, const Case &c) {
  return "F(" + std::to_string(tile_m) + "," + std::to_string(c.kernel_h) + ")";
}

// Output channels whose last panel is narrow (40, 48, 80, 112 of
// AVX-512's 64; 24 and 40 of AVX2's 16) on pixel counts whose blocks of
// rows differ with the threads: 1x1 convolutions read in place, a 3x3 by
// window rows, and Winograd.
TEST(ConvKernelsTest, ThreadCountsAtInitNeverChangeABit) {
  std::mt19937 rng(43);
  std::vector<Case> im2col_cases;
  im2col_cases.push_back({1, 13, 13, 64, 48, 1, 1});
  im2col_cases.push_back({1, 14, 14, 40, 80, 1, 1});
  im2col_cases.push_back({1, 7, 7, 96, 112, 1, 1});
  im2col_cases.push_back({1, 28, 28, 16, 24, 1, 1});
  im2col_cases.push_back({1, 27, 27, 16, 40, 3, 3, 1, 1, 1, 1, 1, 1});
  for (const Case &c : im2col_cases) {
    const Problem p = MakeProblem(c, &rng);
    for (SgemmIsa isa : AvailableSgemmIsas()) {
      ExpectSameBitsOnAnyThreadCount<Im2colConv>(
          p, std::string(SgemmIsaName(isa)) + " " + Describe(c),
          [&](Im2colConv &conv, int threads) {
            return conv.Init(p.geo, p.filter.data(), isa, threads);
          });
    }
  }
  const Case winograd{1, 27, 27, 16, 48, 3, 3, 1, 1, 1, 1, 1, 1};
  const Problem p = MakeProblem(winograd, &rng);
  for (SgemmIsa isa : AvailableSgemmIsas()) {
    for (int tile_m : {2, 4, 6}) {
      ExpectSameBitsOnAnyThreadCount<WinogradConv>(
          p,
          std::string(SgemmIsaName(isa)) + " " + WinogradName(tile_m, winograd),
          [&](WinogradConv &conv, int threads) {
            return conv.Init(p.geo, tile_m, p.filter.data(), isa, threads);
          });
    }
  }
}

std::vector<Case> WinogradCases() {
  std::vector<Case> cases;
  cases.push_back({1, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1});
  cases.push_back({2, 7, 9, 3, 5, 3, 3, 1, 1, 1, 1, 1, 1});
  cases.push_back({1, 13, 11, 17, 16, 3, 3});  // valid
  cases.push_back({1, 8, 8, 16, 33, 3, 3, 1, 1, 1, 1, 1, 1});
  cases.push_back({2, 6, 13, 5, 3, 3, 3, 1, 1, 0, 2, 1, 0});  // asymmetric
  cases.push_back({1, 15, 14, 32, 20, 3, 3, 1, 1, 1, 1, 1, 1});
  // 480 F(2,3) tiles over two images: four blocks of 120, the block edges
  // inside an image.
  cases.push_back({2, 29, 31, 8, 24, 3, 3, 1, 1, 1, 1, 1, 1});
  // 5x5: one pixel (every tap but the centre in the padding), odd sizes
  // and channels off the 16 lanes, valid, asymmetric padding, pads as
  // deep as the window (edge outputs see one row of the input; past that,
  // an output of bias alone takes its tile's rounding, which the
  // per-output tolerance does not allow), Inception's 48 -> 64 on a
  // smaller image.
  cases.push_back({1, 1, 1, 1, 1, 5, 5, 1, 1, 2, 2, 2, 2});
  cases.push_back({2, 7, 9, 3, 5, 5, 5, 1, 1, 2, 2, 2, 2});
  cases.push_back({1, 13, 11, 17, 16, 5, 5});  // valid
  cases.push_back({2, 6, 13, 5, 3, 5, 5, 1, 1, 0, 4, 3, 1});
  cases.push_back({1, 5, 6, 33, 18, 5, 5, 1, 1, 4, 1, 0, 4});
  cases.push_back({1, 17, 15, 48, 64, 5, 5, 1, 1, 2, 2, 2, 2});
  return cases;
}

// A filter every thread can keep in its L2 gives each thread pixels of its
// own: a 14x14 64->384 1x1 (MobileNet-v2's expansion, 96 KiB packed) has
// one pixel tile per thread, where one thread keeps a single tile of the
// 196 pixels. A larger filter (14x14 512->512, 1 MiB) keeps the tiles that
// fit L2 next to it.
TEST(ConvKernelsTest, SmallFiltersGiveEachThreadItsOwnPixels) {
  std::mt19937 rng(5);
  auto tiles = [&](int64_t in_c, int64_t out_c, int threads) {
    const Problem p = MakeProblem({1, 14, 14, in_c, out_c, 1, 1}, &rng);
    Im2colConv conv;
    EXPECT_TRUE(conv.Init(p.geo, p.filter.data(), SelectedSgemmIsa(), threads));
    return conv.tiles();
  };
  EXPECT_EQ(tiles(64, 384, 1).blocks(), 1);
  EXPECT_EQ(tiles(64, 384, 2).blocks(), 2);
  EXPECT_LE(tiles(64, 384, 2).max_rows(), 104);
  EXPECT_EQ(tiles(64, 384, 3).blocks(), 3);
  EXPECT_LE(tiles(64, 384, 3).max_rows(), 72);
  EXPECT_EQ(tiles(512, 512, 2).blocks(), tiles(512, 512, 1).blocks());
  EXPECT_EQ(tiles(512, 512, 2).max_rows(), tiles(512, 512, 1).max_rows());
}

// The same for Winograd, by matrix: SqueezeNet's 13x13 48->192 expansion
// (49 F(2,3) tiles, 16 matrices of 36 KiB) takes one block of tiles on one
// thread and one block a thread on two; 512->512 (1 MiB a matrix) keeps
// its blocks.
TEST(ConvKernelsTest, SmallWinogradMatricesGiveEachThreadItsOwnTiles) {
  std::mt19937 rng(6);
  auto blocks = [&](int64_t in_c, int64_t out_c, int threads) {
    const Problem p =
        MakeProblem({1, 13, 13, in_c, out_c, 3, 3, 1, 1, 1, 1, 1, 1}, &rng);
    WinogradConv conv;
    EXPECT_TRUE(
        conv.Init(p.geo, 2, p.filter.data(), SelectedSgemmIsa(), threads));
    return conv.blocks();
  };
  EXPECT_EQ(blocks(48, 192, 1).blocks(), 1);
  EXPECT_EQ(blocks(48, 192, 1).max_rows(), 49);
  EXPECT_EQ(blocks(48, 192, 2).blocks(), 2);
  EXPECT_LE(blocks(48, 192, 2).max_rows(), 32);
  EXPECT_EQ(blocks(512, 512, 2).blocks(), blocks(512, 512, 1).blocks());
}

// Where block `b` of `blocks` starts and ends, as "begin-end".
std::string BlockRange(const RowBlocks &blocks, int64_t b) {
  return std::to_string(blocks.Begin(b)) + "-" +
         std::to_string(blocks.Begin(b + 1));
}

TEST(ConvKernelsTest, RowBlocksShareWholeTilesEvenly) {
  // ResNet-50's 196 pixels of 1x1 on 14x14 (tiles of at most 60): not
  // 54 + 54 + 54 + 34, which left one of 2 threads 1.23x the other's rows.
  const RowBlocks pixels = RowBlocks::AtMost(196, 60, 6);
  ASSERT_EQ(pixels.blocks(), 4);
  EXPECT_EQ(BlockRange(pixels, 0), "0-48");
  EXPECT_EQ(BlockRange(pixels, 2), "96-144");
  EXPECT_EQ(BlockRange(pixels, 3), "144-196");
  EXPECT_EQ(pixels.max_rows(), 52);
  // 13x13's 49 Winograd tiles in blocks of at most 48: 24 + 25, not
  // 48 + 1.
  const RowBlocks tiles = RowBlocks::AtMost(49, 48, 8);
  ASSERT_EQ(tiles.blocks(), 2);
  EXPECT_EQ(BlockRange(tiles, 1), "24-49");
  // One block stays one; no more blocks than tiles of align rows.
  EXPECT_EQ(RowBlocks::AtMost(16, 128, 6).blocks(), 1);
  EXPECT_EQ(RowBlocks::Count(5, 4, 8).blocks(), 1);
  EXPECT_EQ(RowBlocks::AtMost(0, 64, 6).blocks(), 1);
  EXPECT_EQ(RowBlocks::AtMost(0, 64, 6).Rows(0), 0);

  for (int64_t count = 1; count < 300; ++count) {
    for (int64_t max_rows : {1, 7, 8, 60, 64, 128}) {
      for (int64_t align : {1, 4, 6, 8, 14}) {
        const RowBlocks blocks = RowBlocks::AtMost(count, max_rows, align);
        const int64_t units = (count + align - 1) / align;
        const std::string what = std::to_string(count) + " rows, at most " +
                                 std::to_string(max_rows) + ", align " +
                                 std::to_string(align);
        ASSERT_EQ(blocks.blocks(),
                  std::min((count + max_rows - 1) / max_rows, units))
            << what;
        ASSERT_EQ(blocks.Begin(0), 0) << what;
        ASSERT_EQ(blocks.Begin(blocks.blocks()), count) << what;
        int64_t largest = 0, fewest_units = units, most_units = 0;
        for (int64_t b = 0; b < blocks.blocks(); ++b) {
          // Only the last block may end in a partial tile.
          ASSERT_EQ(blocks.Begin(b) % align, 0) << what << ", block " << b;
          ASSERT_GT(blocks.Rows(b), 0) << what << ", block " << b;
          largest = std::max(largest, blocks.Rows(b));
          const int64_t block_units = (blocks.Rows(b) + align - 1) / align;
          fewest_units = std::min(fewest_units, block_units);
          most_units = std::max(most_units, block_units);
        }
        ASSERT_EQ(blocks.max_rows(), largest) << what;
        ASSERT_LE(most_units - fewest_units, 1) << what;
      }
    }
  }
}

// Small packed matrices: a multiple of the threads' count of blocks, so
// that each thread has as many; large ones keep the fewest blocks.
TEST(ConvKernelsTest, ThreadRowBlocksGiveEachThreadAsManyBlocks) {
  constexpr int64_t kSmall = 64 * 1024;
  constexpr int64_t kLarge = 4 * 1024 * 1024;
  EXPECT_EQ(ThreadRowBlocks(81, 36, 6, 2, kSmall).blocks(), 4);
  EXPECT_EQ(ThreadRowBlocks(81, 36, 6, 3, kSmall).blocks(), 3);
  EXPECT_EQ(ThreadRowBlocks(81, 36, 6, 2, kLarge).blocks(), 3);
  EXPECT_EQ(ThreadRowBlocks(81, 36, 6, 1, kSmall).blocks(), 3);
  EXPECT_EQ(ThreadRowBlocks(196, 512, 6, 2, kSmall).blocks(), 2);
  // Never more blocks than whole tiles.
  EXPECT_EQ(ThreadRowBlocks(5, 512, 6, 2, kSmall).blocks(), 1);
}

// Every task runs once, no two ranges that run at the same time share a
// scratch slot, also when there are fewer slots than threads, and each
// range finds what the last range on its slot left there.
TEST(ConvKernelsTest, SlotRangesCoverEveryTaskOnceWithExclusiveSlots) {
  for (int threads : {1, 2, 3}) {
    auto pool = StartPool(threads);
    for (int slots : {1, 2, 3}) {
      for (int64_t tasks : {1, 2, 5, 97}) {
        std::vector<std::atomic<int>> runs(tasks);
        std::vector<std::atomic<bool>> in_use(slots);
        std::atomic<bool> shared{false};
        std::atomic<bool> out_of_range{false};
        std::vector<int64_t> last_held(slots, -1);
        std::atomic<bool> lost{false};
        ForEachSlotRange(
            pool.get(), slots, tasks,
            [&](int slot, int64_t &held, int64_t begin, int64_t end) {
              if (slot < 0 || slot >= slots) {
                out_of_range = true;
                return;
              }
              if (in_use[slot].exchange(true)) shared = true;
              // A slot holds what the last range on it left.
              if (held != last_held[slot]) lost = true;
              held = last_held[slot] = begin;
              for (int64_t t = begin; t < end; ++t) ++runs[t];
              std::this_thread::yield();
              in_use[slot] = false;
            });
        ASSERT_FALSE(out_of_range.load());
        EXPECT_FALSE(shared.load()) << threads << " threads, " << slots
                                    << " slots, " << tasks << " tasks";
        for (int64_t t = 0; t < tasks; ++t) ASSERT_EQ(runs[t].load(), 1);
        EXPECT_FALSE(lost.load()) << threads << " threads, " << slots
                                  << " slots, " << tasks << " tasks";
      }
    }
  }
}

TEST(ConvKernelsTest, WinogradEveryTileAndIsaMatchesFloat64) {
  std::mt19937 rng(12);
  for (const Case &c : WinogradCases()) {
    const Problem p = MakeProblem(c, &rng);
    ASSERT_TRUE(WinogradApplies(p.geo)) << Describe(c);
    for (SgemmIsa isa : AvailableSgemmIsas()) {
      for (int tile_m : WinogradTiles(c)) {
        WinogradConv conv;
        conv.Init(p.geo, tile_m, p.filter.data(), isa, 3);
        ASSERT_EQ(conv.tile_m(), tile_m);
        ExpectMatches(conv, p, WinogradTolerance(tile_m, c.kernel_h),
                      std::string(SgemmIsaName(isa)) + " " +
                          WinogradName(tile_m, c) + " " + Describe(c));
      }
    }
  }
}

std::vector<Case> Winograd1dCases() {
  std::vector<Case> cases;
  // Inception's factorised layers (17x17, padded to keep the size), with
  // channels off the SIMD widths; one pixel; a width the tile's m does not
  // divide; padding on one side only; taps wholly in the padding (pads
  // past the kernel); two images; rows of tiles in blocks of the SGEMM's
  // tiles and across the images' edge.
  cases.push_back({1, 17, 17, 24, 40, 1, 7, 1, 1, 0, 3, 0, 3});
  cases.push_back({1, 17, 17, 24, 40, 7, 1, 1, 1, 3, 0, 3, 0});
  cases.push_back({1, 8, 8, 33, 17, 1, 3, 1, 1, 0, 1, 0, 1});
  cases.push_back({1, 8, 8, 33, 17, 3, 1, 1, 1, 1, 0, 1, 0});
  cases.push_back({1, 1, 1, 5, 3, 1, 5, 1, 1, 0, 2, 0, 2});
  cases.push_back({1, 1, 1, 5, 3, 5, 1, 1, 1, 2, 0, 2, 0});
  cases.push_back({1, 5, 13, 9, 20, 1, 5});  // valid
  cases.push_back({1, 13, 5, 9, 20, 5, 1, 1, 1, 4, 0, 0, 0});
  cases.push_back({1, 6, 9, 7, 11, 1, 7, 1, 1, 1, 8, 2, 0});
  cases.push_back({2, 23, 19, 16, 70, 7, 1, 1, 1, 3, 0, 3, 0});
  cases.push_back({2, 19, 23, 16, 70, 1, 7, 1, 1, 0, 3, 0, 3});
  return cases;
}

TEST(ConvKernelsTest, Winograd1dEveryShapeAndIsaMatchesFloat64) {
  std::mt19937 rng(21);
  for (const Case &c : Winograd1dCases()) {
    const Problem p = MakeProblem(c, &rng);
    ASSERT_TRUE(Winograd1dApplies(p.geo)) << Describe(c);
    const int64_t r = std::max(c.kernel_h, c.kernel_w);
    for (SgemmIsa isa : AvailableSgemmIsas()) {
      for (int points : {8, 6}) {
        if (points == 6 && r > 5) continue;
        Winograd1dConv conv;
        ASSERT_TRUE(conv.Init(p.geo, p.filter.data(), isa, 3, nullptr, nullptr,
                              nullptr, points));
        ASSERT_EQ(conv.tile_points(), points);
        const std::string what = std::string(SgemmIsaName(isa)) + " 1-D F(" +
                                 std::to_string(conv.tile_m()) + "," +
                                 std::to_string(r) + ") " + Describe(c);
        ExpectMatches(conv, p, 2e-6, what);
        ExpectStridedMatchesPacked(conv, p, what);
      }
    }
  }
}

// Tiles of 6 points where they do fewer products per line: Inception's
// 1x3 / 3x1 on 8x8 (two tiles of 6 outputs or of 4), not its 1x7 on 17x17
// (no 6-point F(0,7)) nor a 1x3 on 17 pixels (3 tiles of 6 outputs
// against 5 of 4).
TEST(ConvKernelsTest, Winograd1dTakesSixPointTilesOnShortLines) {
  const struct {
    Case shape;
    int points;
  } choices[] = {
      {{1, 8, 8, 384, 384, 1, 3, 1, 1, 0, 1, 0, 1}, 6},
      {{1, 8, 8, 384, 384, 3, 1, 1, 1, 1, 0, 1, 0}, 6},
      {{1, 17, 17, 128, 128, 1, 7, 1, 1, 0, 3, 0, 3}, 8},
      {{1, 17, 17, 128, 128, 1, 3, 1, 1, 0, 1, 0, 1}, 8},
      {{1, 8, 8, 3, 4, 1, 3, 1, 1, 0, 1, 0, 1}, 0},  // few channels: im2col
  };
  for (const auto &c : choices) {
    EXPECT_EQ(Winograd1dTilePoints(GeometryOf(c.shape)), c.points)
        << Describe(c.shape);
  }
}

TEST(ConvKernelsTest, Winograd1dTakesOnlyItsWindows) {
  std::mt19937 rng(22);
  auto applies = [&](Case c) {
    return Winograd1dApplies(MakeProblem(c, &rng).geo);
  };
  EXPECT_TRUE(applies({1, 9, 9, 4, 4, 1, 3}));
  EXPECT_TRUE(applies({1, 9, 9, 4, 4, 5, 1}));
  EXPECT_FALSE(applies({1, 9, 9, 4, 4, 3, 3}));        // 2-D: WinogradConv's
  EXPECT_FALSE(applies({1, 9, 9, 4, 4, 1, 1}));        // no window
  EXPECT_FALSE(applies({1, 9, 9, 4, 4, 1, 9}));        // past the 8-point tile
  EXPECT_FALSE(applies({1, 9, 9, 4, 4, 1, 4}));        // even
  EXPECT_FALSE(applies({1, 9, 9, 4, 4, 1, 3, 2}));     // strided
  EXPECT_FALSE(applies({1, 9, 9, 4, 4, 1, 3, 1, 2}));  // dilated
  EXPECT_FALSE(applies({1, 9, 9, 4, 4, 1, 3, 1, 1, 0, 0, 0, 0, 2}));
}

// Root-mean-square error of `got` over that of the float64 outputs.
double RmsRelativeError(const Problem &p, const std::vector<float> &got) {
  double error = 0.0, norm = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    error += (got[i] - p.expected[i]) * (got[i] - p.expected[i]);
    norm += p.expected[i] * p.expected[i];
  }
  return std::sqrt(error / norm);
}

// F(4,3) is chosen automatically, so its float32 error must stay near
// F(2,3)'s on deep inputs: its points 0, +-3/2, +-2/3 give about 3x
// F(2,3)'s error here, where the usual 0, +-1, +-2 give 6-7x.
TEST(ConvKernelsTest, WinogradF43ErrorStaysNearF23s) {
  std::mt19937 rng(5);
  const Problem p =
      MakeProblem({1, 16, 16, 256, 32, 3, 3, 1, 1, 1, 1, 1, 1}, &rng);
  double error[5] = {};
  for (int tile_m : {2, 4}) {
    WinogradConv conv;
    conv.Init(p.geo, tile_m, p.filter.data(), SelectedSgemmIsa(), 1);
    std::vector<float> scratch(conv.ScratchBytes() / sizeof(float) + 1);
    std::vector<float> output(p.expected.size(), NAN);
    RunConv(conv, p, output.data(), scratch.data(), nullptr, nullptr);
    error[tile_m] = RmsRelativeError(p, output);
  }
  EXPECT_GT(error[2], 0.0);
  EXPECT_LT(error[4], 4.5 * error[2]) << "F(2,3) " << error[2];
}

// F(2,5) is chosen automatically for 5x5 windows, F(4,5) only on request:
// on Inception-v3's 48 -> 64 channels F(2,5)'s float32 error is near
// im2col's and well below F(4,5)'s (root-mean-square relative errors
// 7.7e-7, 5.9e-7 and 2.8e-6 when written).
TEST(ConvKernelsTest, WinogradF25ErrorStaysNearIm2cols) {
  std::mt19937 rng(23);
  const Problem p =
      MakeProblem({1, 20, 20, 48, 64, 5, 5, 1, 1, 2, 2, 2, 2}, &rng);
  auto rms_error = [&](const auto &conv) {
    std::vector<float> scratch(conv.ScratchBytes() / sizeof(float) + 1);
    std::vector<float> output(p.expected.size(), NAN);
    RunConv(conv, p, output.data(), scratch.data(), nullptr, nullptr);
    return RmsRelativeError(p, output);
  };
  Im2colConv im2col;
  ASSERT_TRUE(im2col.Init(p.geo, p.filter.data(), SelectedSgemmIsa(), 1));
  double winograd[5] = {};
  for (int tile_m : {2, 4}) {
    WinogradConv conv;
    ASSERT_TRUE(
        conv.Init(p.geo, tile_m, p.filter.data(), SelectedSgemmIsa(), 1));
    winograd[tile_m] = rms_error(conv);
  }
  const double direct = rms_error(im2col);
  EXPECT_GT(direct, 0.0);
  EXPECT_LT(winograd[2], 2.0 * direct);
  EXPECT_LT(winograd[2], 0.5 * winograd[4]);
}

// Init shares the filter packing (and Winograd's filter transforms) among
// a pool's threads by panels: several panels, an odd edge panel, groups.
TEST(ConvKernelsTest, FilterPackedByAPoolMatchesFloat64) {
  std::mt19937 rng(14);
  const std::unique_ptr<ThreadPool> pool = StartPool(3);
  const Case winograd = {1, 9, 10, 37, 71, 3, 3, 1, 1, 1, 1, 1, 1};
  const Case grouped = {1, 6, 7, 12, 36, 3, 3, 1, 1, 1, 1, 1, 1, 3};
  for (SgemmIsa isa : AvailableSgemmIsas()) {
    const Problem w = MakeProblem(winograd, &rng);
    for (int tile_m : {2, 6}) {
      WinogradConv conv;
      ASSERT_TRUE(
          conv.Init(w.geo, tile_m, w.filter.data(), isa, 3, pool.get()));
      ExpectMatches(conv, w, WinogradTolerance(tile_m),
                    std::string(SgemmIsaName(isa)) + " pool F(" +
                        std::to_string(tile_m) + ",3) " + Describe(winograd));
    }
    for (const Case &c : {winograd, grouped}) {
      const Problem p = MakeProblem(c, &rng);
      Im2colConv conv;
      ASSERT_TRUE(conv.Init(p.geo, p.filter.data(), isa, 3, pool.get()));
      ExpectMatches(conv, p, 1e-6,
                    std::string(SgemmIsaName(isa)) + " pool " + Describe(c));
    }
    // 1-D Winograd: 1x7 with an odd last panel, 5x1 deferred to a
    // DeferredWork that the pool runs (as a load does).
    for (const Case &c : {Case{1, 9, 13, 37, 71, 1, 7, 1, 1, 0, 3, 0, 3},
                          Case{1, 11, 6, 19, 40, 5, 1, 1, 1, 2, 0, 2, 0}}) {
      const Problem p = MakeProblem(c, &rng);
      Winograd1dConv conv;
      DeferredWork deferred;
      const bool defer = c.kernel_h > 1;
      ASSERT_TRUE(conv.Init(p.geo, p.filter.data(), isa, 3, pool.get(), nullptr,
                            defer ? &deferred : nullptr));
      EXPECT_EQ(deferred.empty(), !defer);
      deferred.RunAll(pool.get());
      ExpectMatches(
          conv, p, 2e-6,
          std::string(SgemmIsaName(isa)) + " pool 1-D " + Describe(c));
    }
  }
}

// The epilogue must see every output value exactly once, after it holds
// its final value: it counts visits and applies ReLU.
template <typename Kernel>
void ExpectEpilogueCoversOutputOnce(const Kernel &kernel, const Problem &p,
                                    double tolerance, const std::string &what) {
  std::vector<float> scratch(kernel.ScratchBytes() / sizeof(float) + 1);
  std::vector<float> output(p.expected.size(), NAN);
  std::vector<int> visits(output.size(), 0);
  float *base = output.data();
  auto relu = [&](float *c, int64_t rows, int64_t cols, int64_t ldc) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < cols; ++j) {
        c[r * ldc + j] = std::max(c[r * ldc + j], 0.0f);
        ++visits[c + r * ldc + j - base];
      }
    }
  };
  const SgemmEpilogue epilogue(relu);
  auto pool = StartPool(2);
  RunConv(kernel, p, output.data(), scratch.data(), pool.get(), &epilogue);
  for (size_t i = 0; i < output.size(); ++i) {
    ASSERT_EQ(visits[i], 1) << what << " at " << i;
    ASSERT_NEAR(output[i], std::max(p.expected[i], 0.0),
                tolerance * p.magnitude[i] + 1e-30)
        << what << " at " << i;
  }
}

TEST(ConvKernelsTest, EpilogueSeesEveryOutputOnceAfterItIsFinal) {
  std::mt19937 rng(13);
  const SgemmIsa isa = SelectedSgemmIsa();
  for (const Case &c : {Case{2, 7, 9, 6, 35, 3, 3, 2, 1, 1, 1, 1, 1, 1},
                        Case{1, 9, 7, 6, 34, 3, 3, 1, 1, 1, 1, 1, 1, 2}}) {
    const Problem p = MakeProblem(c, &rng);
    Im2colConv conv;
    conv.Init(p.geo, p.filter.data(), isa, 2);
    ExpectEpilogueCoversOutputOnce(conv, p, 1e-6, "im2col " + Describe(c));
  }
  const Problem p =
      MakeProblem(Case{2, 9, 11, 7, 35, 3, 3, 1, 1, 1, 1, 1, 1}, &rng);
  for (int tile_m : {2, 4, 6}) {
    WinogradConv conv;
    conv.Init(p.geo, tile_m, p.filter.data(), isa, 2);
    ExpectEpilogueCoversOutputOnce(conv, p, WinogradTolerance(tile_m),
                                   "winograd " + std::to_string(tile_m));
  }
}

// Output inside a wider tensor (a Concat's input written in place): every
// im2col path (gathered tiles, input read in place, window rows, groups)
// and every Winograd tile, on the selected ISA.
TEST(ConvKernelsTest, StridedOutputMatchesPackedAndLeavesTheRestAlone) {
  std::mt19937 rng(17);
  const SgemmIsa isa = SelectedSgemmIsa();
  for (const Case &c : Im2colCases()) {
    const Problem p = MakeProblem(c, &rng);
    Im2colConv conv;
    ASSERT_TRUE(conv.Init(p.geo, p.filter.data(), isa, 2));
    ExpectStridedMatchesPacked(conv, p, "im2col " + Describe(c));
  }
  for (const Case &c : WinogradCases()) {
    const Problem p = MakeProblem(c, &rng);
    for (int tile_m : WinogradTiles(c)) {
      WinogradConv conv;
      ASSERT_TRUE(conv.Init(p.geo, tile_m, p.filter.data(), isa, 2));
      ExpectStridedMatchesPacked(conv, p,
                                 WinogradName(tile_m, c) + " " + Describe(c));
    }
  }
}

// A 3x3 stride-1 convolution of a size x size image, padded (SAME).
Case Same3x3(int64_t size, int64_t in_c, int64_t out_c) {
  return {1, size, size, in_c, out_c, 3, 3, 1, 1, 1, 1, 1, 1};
}

// Inception v3's first 3x3 stride-1 layer: 149x149, 32 channels, VALID.
Case InceptionStem3x3() { return {1, 149, 149, 32, 32, 3, 3}; }

// Inception v3's 73x73 80->192 layer, VALID.
Case Inception80To192() { return {1, 73, 73, 80, 192, 3, 3}; }

struct TileChoice {
  Case shape;
  int tile;
};

// Shapes of benchmarks/ops/conv_benchmark.cc (one thread) with the fastest
// of im2col (0), F(2,3), F(4,3) and F(6,3) measured where the cost model
// (winograd.cc) chose it; the ISAs not measured have none. Where the op
// benchmark (its filter hot in L2) and a model (the filter cold) disagree,
// the model's fastest: what ColdFilterCost in winograd.cc is for.
std::vector<TileChoice> MeasuredFastestTiles(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kAvx512:  // Intel Xeon, 2026-11-26 (the 6x64 kernel: the
                             // first three again on 2026-12-01)
      return {{Same3x3(56, 64, 64), 4},
              {Same3x3(14, 256, 256), 2},
              {Same3x3(7, 512, 512), 2},
              {InceptionStem3x3(), 6}};
    case SgemmIsa::kAvx2:  // AMD EPYC Zen 3, 2026-11-27; 14x14 and 7x7 in
                           // ResNet-18 (the Intel Xeon's AVX2 kernels,
                           // 2026-12-02): F(2,3) 0.78 and 0.69 of F(4,3)'s
                           // time there, F(4,3) faster in the op benchmark
      return {{Same3x3(56, 64, 64), 4},
              {Same3x3(14, 256, 256), 2},
              {Same3x3(7, 512, 512), 2},
              {Same3x3(55, 16, 64), 4},
              {Inception80To192(), 6}};
    default:
      return {};
  }
}

// The automatic choice (F(2,3) or F(4,3), never F(6,3): its error fails
// fp32 validation of deep nets, Inception-v3 against ONNX Runtime) on the
// same shapes: the measured fastest of im2col, F(2,3) and F(4,3), in a
// model where the op benchmark disagrees. SqueezeNet's 13x13 48->192
// expansion: F(4,3) 7-20% faster than F(2,3) in the op benchmark on both
// AVX-512 hosts, F(2,3) in the model (0.83 of F(4,3)'s time at 1 thread,
// 0.66 at 2), as with AVX2 on 7x7 512->512 (above).
std::vector<TileChoice> MeasuredFastestAutomaticTiles(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kAvx512:
      return {{Same3x3(56, 64, 64), 4},
              {InceptionStem3x3(), 4},
              {Same3x3(7, 512, 512), 2},
              {Same3x3(13, 48, 192), 2}};
    case SgemmIsa::kAvx2:
      return {{Same3x3(56, 64, 64), 4},
              {InceptionStem3x3(), 4},
              {Same3x3(7, 512, 512), 2},
              {Same3x3(13, 48, 192), 4},
              {Inception80To192(), 4}};
    default:
      return {};
  }
}

// The ISAs this binary has kernels for: the cost model takes their shape
// whether or not this CPU runs them.
std::vector<SgemmIsa> BuiltIsas() {
  std::vector<SgemmIsa> isas;
  for (SgemmIsa isa : {SgemmIsa::kGeneric, SgemmIsa::kAvx2, SgemmIsa::kAvx512,
                       SgemmIsa::kNeon}) {
    if (SgemmUkernelsFor(isa) != nullptr) isas.push_back(isa);
  }
  return isas;
}

TEST(ConvKernelsTest, WinogradTileIsTheMeasuredFastestOnBenchmarkedShapes) {
  int checked = 0;
  for (SgemmIsa isa : BuiltIsas()) {
    for (const TileChoice &c : MeasuredFastestTiles(isa)) {
      EXPECT_EQ(CheapestWinogradTile(GeometryOf(c.shape), isa, {2, 4, 6}),
                c.tile)
          << SgemmIsaName(isa) << " " << Describe(c.shape);
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "no measurement on this binary's ISAs";
}

TEST(ConvKernelsTest, AutomaticChoiceKeepsToTheAccurateTiles) {
  int checked = 0;
  for (SgemmIsa isa : BuiltIsas()) {
    for (const TileChoice &c : MeasuredFastestAutomaticTiles(isa)) {
      EXPECT_EQ(ChooseWinogradTile(GeometryOf(c.shape), isa), c.tile)
          << SgemmIsaName(isa) << " " << Describe(c.shape);
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "no measurement on this binary's ISAs";
}

TEST(ConvKernelsTest, WinogradIsChosenOnlyWhereItAppliesAndPays) {
  for (SgemmIsa isa : BuiltIsas()) {
    SCOPED_TRACE(SgemmIsaName(isa));
    Case resnet = Same3x3(56, 64, 64);
    EXPECT_NE(ChooseWinogradTile(GeometryOf(resnet), isa), 0);
    Case strided = resnet;
    strided.stride = 2;
    EXPECT_EQ(ChooseWinogradTile(GeometryOf(strided), isa), 0);
    Case dilated = resnet;
    dilated.dilation = 2;
    dilated.pad_top = dilated.pad_left = 2;
    dilated.pad_bottom = dilated.pad_right = 2;
    EXPECT_EQ(ChooseWinogradTile(GeometryOf(dilated), isa), 0);
    Case grouped = resnet;
    grouped.groups = 2;
    EXPECT_EQ(ChooseWinogradTile(GeometryOf(grouped), isa), 0);
    // 5x5 takes F(2,5), never the less accurate F(4,5) unasked; 7x7 and
    // 5x3 have no 2-D Winograd.
    Case five{1, 35, 35, 48, 64, 5, 5, 1, 1, 2, 2, 2, 2};
    EXPECT_EQ(ChooseWinogradTile(GeometryOf(five), isa), 2);
    EXPECT_EQ(WinogradTileFor(GeometryOf(five), 6), 4);
    Case seven{1, 35, 35, 48, 64, 7, 7, 1, 1, 3, 3, 3, 3};
    EXPECT_EQ(ChooseWinogradTile(GeometryOf(seven), isa), 0);
    Case five_by_three{1, 35, 35, 48, 64, 5, 3, 1, 1, 2, 1, 2, 1};
    EXPECT_EQ(ChooseWinogradTile(GeometryOf(five_by_three), isa), 0);
    // An RGB input layer: the transforms would cost more than the GEMM
    // saves.
    Case rgb{1, 224, 224, 3, 32, 3, 3, 1, 1, 1, 1, 1, 1};
    EXPECT_EQ(ChooseWinogradTile(GeometryOf(rgb), isa), 0);
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mace
