// In-place concatenation: convolutions whose only reader is a Concat along
// channels write straight into the joined tensor (Net::PlanInPlaceJoins);
// the result must equal a float64 reference, and only the eligible inputs
// may be written in place.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/core/net.h"
#include "mace/model/model_builder.h"
#include "tests/common/net_test_util.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

constexpr int64_t kH = 9, kW = 10, kC = 6;

// A convolution branch: OHWI filter, bias, window size, ReLU or not,
// `winograd` as the op's argument (-1: automatic).
struct Branch {
  std::string name;
  int64_t out_c;
  int64_t kernel;
  bool relu;
  int winograd;
  std::vector<float> filter, bias;
};

std::vector<Branch> MakeBranches() {
  std::vector<Branch> branches = {
      {"pointwise", 5, 1, false, -1, {}, {}},  // im2col, input in place
      {"winograd", 7, 3, true, 2, {}, {}},     // Winograd F(2,3)
      {"windowed", 4, 3, true, 0, {}, {}},     // im2col, 3x3
      {"shared", 3, 1, false, -1, {}, {}},     // also read by another op
  };
  uint32_t seed = 40;
  for (Branch &b : branches) {
    b.filter =
        RandomFloats(b.out_c * b.kernel * b.kernel * kC, -0.5f, 0.5f, ++seed);
    b.bias = RandomFloats(b.out_c, -0.2f, 0.2f, ++seed);
  }
  return branches;
}

// input -> [pointwise, max pool 3x3/1, winograd, windowed, shared] joined
// along channels ("joined"), and relu(shared) ("side"): the pool is no
// convolution and `shared` has a second reader, so both are copied.
NetDef BuildNet(const std::vector<Branch> &branches, std::string *weights) {
  ModelBuilder builder("in_place_join");
  builder.AddInput("input", {1, kH, kW, kC}, DT_FLOAT, 1);
  std::vector<std::string> joined;
  int64_t joined_c = 0;
  for (const Branch &b : branches) {
    builder.AddFloatTensor(b.name + "_w", {b.out_c, b.kernel, b.kernel, kC},
                           b.filter);
    builder.AddFloatTensor(b.name + "_b", {b.out_c}, b.bias);
    OperatorDef *conv =
        builder.AddOp("Conv2D", b.name, {"input", b.name + "_w", b.name + "_b"},
                      {b.name + "_out"});
    ModelBuilder::AddIntsArg(conv, "strides", {1, 1});
    ModelBuilder::AddIntArg(conv, "padding", 1);  // SAME
    ModelBuilder::AddIntArg(conv, "winograd", b.winograd);
    if (b.relu) ModelBuilder::AddStringArg(conv, "activation", "RELU");
    joined.push_back(b.name + "_out");
    joined_c += b.out_c;
    if (b.name == "pointwise") {
      OperatorDef *pool = builder.AddOp("Pooling", "pool", {"input"}, {"pool"});
      ModelBuilder::AddIntArg(pool, "pooling_type", 2);  // max
      ModelBuilder::AddIntsArg(pool, "kernels", {3, 3});
      ModelBuilder::AddIntsArg(pool, "strides", {1, 1});
      ModelBuilder::AddIntArg(pool, "padding", 1);
      joined.push_back("pool");
      joined_c += kC;
    }
  }
  OperatorDef *concat = builder.AddOp("Concat", "concat", joined, {"joined"});
  ModelBuilder::AddIntArg(concat, "axis", 3);
  OperatorDef *relu =
      builder.AddOp("Activation", "side_relu", {"shared_out"}, {"side"});
  ModelBuilder::AddStringArg(relu, "activation", "RELU");
  builder.AddOutput("joined", {1, kH, kW, joined_c}, DT_FLOAT, 1);
  builder.AddOutput("side", {1, kH, kW, 3}, DT_FLOAT, 1);
  return BuildNetDef(builder, weights);
}

double InputAt(const std::vector<float> &in, int64_t h, int64_t w, int64_t c) {
  if (h < 0 || h >= kH || w < 0 || w >= kW) return NAN;  // padding
  return in[(h * kW + w) * kC + c];
}

// The joined tensor in float64: each branch's SAME convolution (or the max
// pool) at its channel offset.
std::vector<double> Reference(const std::vector<Branch> &branches,
                              const std::vector<float> &in, int64_t joined_c,
                              std::vector<double> *shared) {
  std::vector<double> out(kH * kW * joined_c);
  int64_t offset = 0;
  auto conv = [&](const Branch &b, int64_t h, int64_t w, int64_t oc) {
    const int64_t pad = b.kernel / 2;
    double sum = b.bias[oc];
    for (int64_t kh = 0; kh < b.kernel; ++kh)
      for (int64_t kw = 0; kw < b.kernel; ++kw)
        for (int64_t c = 0; c < kC; ++c) {
          const double x = InputAt(in, h + kh - pad, w + kw - pad, c);
          if (std::isnan(x)) continue;
          sum += x * b.filter[((oc * b.kernel + kh) * b.kernel + kw) * kC + c];
        }
    return b.relu ? std::max(sum, 0.0) : sum;
  };
  for (const Branch &b : branches) {
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t w = 0; w < kW; ++w)
        for (int64_t oc = 0; oc < b.out_c; ++oc) {
          const double value = conv(b, h, w, oc);
          out[(h * kW + w) * joined_c + offset + oc] = value;
          if (b.name == "shared") {
            (*shared)[(h * kW + w) * b.out_c + oc] = std::max(value, 0.0);
          }
        }
    offset += b.out_c;
    if (b.name != "pointwise") continue;
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t w = 0; w < kW; ++w)
        for (int64_t c = 0; c < kC; ++c) {
          double best = -INFINITY;
          for (int64_t dh = -1; dh <= 1; ++dh)
            for (int64_t dw = -1; dw <= 1; ++dw) {
              const double x = InputAt(in, h + dh, w + dw, c);
              if (!std::isnan(x)) best = std::max(best, x);
            }
          out[(h * kW + w) * joined_c + offset + c] = best;
        }
    offset += kC;
  }
  return out;
}

class NetInPlaceJoinTest : public ::testing::TestWithParam<int> {};

TEST_P(NetInPlaceJoinTest, ConvolutionsWriteIntoTheJoinedTensor) {
  const std::vector<Branch> branches = MakeBranches();
  std::string weights;
  NetDef def = BuildNet(branches, &weights);
  BoundNet bound;
  ASSERT_EQ(bound.Init(std::move(def), weights, GetParam()),
            MaceStatus::MACE_SUCCESS);
  Net &net = bound.net();
  // pointwise, winograd and windowed; not the pool (no convolution) nor
  // `shared` (read by side_relu too).
  EXPECT_EQ(net.inputs_written_in_place(), 3);

  std::vector<float> input = RandomFloats(kH * kW * kC, -1.0f, 1.0f, 7);
  net.input("input")->BindData(input.data());
  for (int run = 0; run < 2; ++run) {  // twice: nothing relies on a fresh arena
    ASSERT_EQ(net.Run(nullptr), MaceStatus::MACE_SUCCESS);
  }
  const Tensor *joined = net.output("joined");
  const int64_t joined_c = joined->dim(3);
  ASSERT_EQ(joined_c, 5 + kC + 7 + 4 + 3);
  std::vector<double> shared(kH * kW * 3);
  const std::vector<double> expected =
      Reference(branches, input, joined_c, &shared);
  const float *got = joined->data<float>();
  EXPECT_TRUE(AllClose(std::vector<float>(got, got + expected.size()), expected,
                       1e-5, 1e-5));
  const float *side = net.output("side")->data<float>();
  EXPECT_TRUE(AllClose(std::vector<float>(side, side + shared.size()), shared,
                       1e-5, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Threads, NetInPlaceJoinTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace test
}  // namespace mace
