// DeferredWork: every task runs once, on any pool size, and a Net leaves
// its convolutions' packing to one loop at the end of the load, or before
// a constant op it folds (which runs the op, and so needs the packing).

#include "mace/core/deferred_work.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "mace/core/net.h"
#include "mace/model/model_builder.h"
#include "tests/common/net_test_util.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

class DeferredWorkTest : public ::testing::TestWithParam<int> {};

// Threads 0 means no pool.
TEST_P(DeferredWorkTest, EveryTaskRunsOnceAndIsForgotten) {
  std::unique_ptr<ThreadPool> pool;
  if (GetParam() > 0) {
    pool = std::make_unique<ThreadPool>(GetParam(), AFFINITY_NONE);
    ASSERT_EQ(pool->Init(), MaceStatus::MACE_SUCCESS);
  }
  DeferredWork work;
  work.RunAll(pool.get());  // nothing to do
  constexpr int kTasks = 257;
  std::vector<std::atomic<int>> runs(kTasks);
  for (int t = 0; t < kTasks; ++t) {
    // Uneven tasks, so that threads finish out of step.
    work.Add([&runs, t] {
      if (t % 17 == 0)
        std::this_thread::sleep_for(std::chrono::microseconds(300));
      runs[t].fetch_add(1);
    });
  }
  EXPECT_FALSE(work.empty());
  work.RunAll(pool.get());
  EXPECT_TRUE(work.empty());
  for (int t = 0; t < kTasks; ++t) ASSERT_EQ(runs[t].load(), 1) << "task " << t;
  work.RunAll(pool.get());
  for (int t = 0; t < kTasks; ++t) ASSERT_EQ(runs[t].load(), 1) << "task " << t;
}

INSTANTIATE_TEST_SUITE_P(Threads, DeferredWorkTest,
                         ::testing::Values(0, 1, 2, 4));

constexpr int64_t kH = 7, kW = 9, kC = 5, kOut = 33;

// out = conv(constant) + conv(input): the first convolution has only
// constant inputs and is folded at load, the second runs; both 3x3 SAME,
// one through Winograd and one through im2col, with kOut output channels
// (more than one packed panel).
NetDef BuildNet(const std::vector<float> &filter, const std::vector<float> &x,
                int winograd, std::string *weights) {
  ModelBuilder builder("deferred_packing");
  builder.AddInput("input", {1, kH, kW, kC}, DT_FLOAT, 1);
  builder.AddFloatTensor("w", {kOut, 3, 3, kC}, filter);
  builder.AddFloatTensor("x", {1, kH, kW, kC}, x);
  for (const char *name : {"folded", "live"}) {
    const std::string input = std::string(name) == "folded" ? "x" : "input";
    OperatorDef *conv = builder.AddOp("Conv2D", name, {input, "w"},
                                      {std::string(name) + "_out"});
    ModelBuilder::AddIntsArg(conv, "strides", {1, 1});
    ModelBuilder::AddIntArg(conv, "padding", 1);  // SAME
    ModelBuilder::AddIntArg(conv, "winograd", winograd);
  }
  OperatorDef *sum =
      builder.AddOp("Eltwise", "sum", {"folded_out", "live_out"}, {"out"});
  ModelBuilder::AddIntArg(sum, "type", 0);
  builder.AddOutput("out", {1, kH, kW, kOut}, DT_FLOAT, 1);
  return BuildNetDef(builder, weights);
}

// A 3x3 SAME convolution of `in` in float64, at (h, w, oc).
double ConvAt(const std::vector<float> &in, const std::vector<float> &filter,
              int64_t h, int64_t w, int64_t oc) {
  double sum = 0.0;
  for (int64_t kh = 0; kh < 3; ++kh)
    for (int64_t kw = 0; kw < 3; ++kw) {
      const int64_t ih = h + kh - 1, iw = w + kw - 1;
      if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
      for (int64_t c = 0; c < kC; ++c) {
        sum += static_cast<double>(in[(ih * kW + iw) * kC + c]) *
               filter[((oc * 3 + kh) * 3 + kw) * kC + c];
      }
    }
  return sum;
}

class NetDeferredPackingTest
    : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(NetDeferredPackingTest, FoldedAndRunConvolutionsSeePackedFilters) {
  const auto [threads, winograd] = GetParam();
  const std::vector<float> filter =
      RandomFloats(kOut * 9 * kC, -0.5f, 0.5f, 11);
  const std::vector<float> x = RandomFloats(kH * kW * kC, -1.0f, 1.0f, 12);
  std::string weights;
  NetDef def = BuildNet(filter, x, winograd, &weights);
  BoundNet bound;
  ASSERT_EQ(bound.Init(std::move(def), weights, threads),
            MaceStatus::MACE_SUCCESS);
  Net &net = bound.net();
  std::vector<float> input = RandomFloats(kH * kW * kC, -1.0f, 1.0f, 13);
  net.input("input")->BindData(input.data());
  ASSERT_EQ(net.Run(nullptr), MaceStatus::MACE_SUCCESS);
  std::vector<double> expected(kH * kW * kOut);
  for (int64_t h = 0; h < kH; ++h)
    for (int64_t w = 0; w < kW; ++w)
      for (int64_t oc = 0; oc < kOut; ++oc) {
        expected[(h * kW + w) * kOut + oc] =
            ConvAt(x, filter, h, w, oc) + ConvAt(input, filter, h, w, oc);
      }
  const float *got = net.output("out")->data<float>();
  EXPECT_TRUE(AllClose(std::vector<float>(got, got + expected.size()), expected,
                       1e-4, 1e-4));
}

// Winograd 0 (im2col) and 2 (F(2,3)), at 1 and 2 threads.
INSTANTIATE_TEST_SUITE_P(ThreadsAndKernels, NetDeferredPackingTest,
                         ::testing::Combine(::testing::Values(1, 2),
                                            ::testing::Values(0, 2)));

}  // namespace
}  // namespace test
}  // namespace mace
