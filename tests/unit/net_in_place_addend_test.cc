// A convolution with a fused residual addition may write its output over
// the addend's buffer (OutputMemory::kMayReuseLastInput): only on the GEMM
// paths, which read each addend element before writing that output
// element, and only when nothing reads the addend afterwards nor through
// another input of the same op. The result must equal a float64 reference
// whether or not the buffer was shared.

#include <algorithm>
#include <ostream>
#include <string>
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

// Odd sizes: edge row tiles, and 19 channels leave an edge column panel.
constexpr int64_t kH = 7, kW = 9, kC = 19;

struct Case {
  const char *name;
  int64_t kernel;    // of the convolution that adds
  int winograd;      // its `winograd` argument
  bool addend_read_later;  // by an op after it
  bool adds_its_input;     // conv(addend) + addend
  bool expect_shared;
};

std::ostream &operator<<(std::ostream &os, const Case &c) { return os << c.name; }

struct Weights {
  std::vector<float> filter, bias;
};

Weights RandomWeights(int64_t kernel, uint32_t seed) {
  return {RandomFloats(kC * kernel * kernel * kC, -0.5f, 0.5f, seed),
          RandomFloats(kC, -0.2f, 0.2f, seed + 1)};
}

// NHWC [kH, kW, kC] -> SAME, stride-1 convolution with an OHWI filter.
std::vector<double> RefConv(const std::vector<double> &in, const Weights &w,
                            int64_t kernel) {
  std::vector<double> out(kH * kW * kC);
  const int64_t pad = kernel / 2;
  for (int64_t h = 0; h < kH; ++h)
    for (int64_t x = 0; x < kW; ++x)
      for (int64_t oc = 0; oc < kC; ++oc) {
        double sum = w.bias[oc];
        for (int64_t kh = 0; kh < kernel; ++kh)
          for (int64_t kw = 0; kw < kernel; ++kw) {
            const int64_t ih = h + kh - pad, iw = x + kw - pad;
            if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
            for (int64_t c = 0; c < kC; ++c) {
              sum += in[(ih * kW + iw) * kC + c] *
                     w.filter[((oc * kernel + kh) * kernel + kw) * kC + c];
            }
          }
        out[(h * kW + x) * kC + oc] = sum;
      }
  return out;
}

std::vector<double> Relu(std::vector<double> v) {
  for (double &x : v) x = std::max(x, 0.0);
  return v;
}

OperatorDef *AddConv(ModelBuilder *builder, const std::string &name,
                     const std::vector<std::string> &inputs, int64_t kernel,
                     const Weights &w, int winograd, bool relu) {
  const std::vector<int64_t> filter_shape = {kC, kernel, kernel, kC};
  builder->AddFloatTensor(name + "_w", filter_shape, w.filter);
  builder->AddFloatTensor(name + "_b", {kC}, w.bias);
  std::vector<std::string> all = {inputs[0], name + "_w", name + "_b"};
  all.insert(all.end(), inputs.begin() + 1, inputs.end());
  OperatorDef *conv = builder->AddOp("Conv2D", name, all, {name + "_out"});
  ModelBuilder::AddIntsArg(conv, "strides", {1, 1});
  ModelBuilder::AddIntArg(conv, "padding", 1);  // SAME
  ModelBuilder::AddIntArg(conv, "winograd", winograd);
  if (relu) ModelBuilder::AddStringArg(conv, "activation", "RELU");
  if (inputs.size() > 1) ModelBuilder::AddIntArg(conv, "fused_add", 1);
  return conv;
}

class NetInPlaceAddendTest
    : public ::testing::TestWithParam<std::tuple<Case, int>> {};

TEST_P(NetInPlaceAddendTest, OutputTakesOverTheAddendOnlyWhereSafe) {
  const Case c = std::get<0>(GetParam());
  const Weights base_w = RandomWeights(1, 11);
  const Weights addend_w = RandomWeights(1, 21);
  const Weights sum_w = RandomWeights(c.kernel, 31);

  // x -> base = relu(conv1x1(x)), addend = conv1x1(x);
  // sum = relu(conv(base or addend) + addend); side = relu(addend) after it.
  ModelBuilder builder("in_place_addend");
  builder.AddInput("x", {1, kH, kW, kC}, DT_FLOAT, 1);
  AddConv(&builder, "base", {"x"}, 1, base_w, -1, true);
  AddConv(&builder, "addend", {"x"}, 1, addend_w, -1, false);
  const std::string sum_input = c.adds_its_input ? "addend_out" : "base_out";
  AddConv(&builder, "sum", {sum_input, "addend_out"}, c.kernel, sum_w,
          c.winograd, true);
  builder.AddOutput("sum_out", {1, kH, kW, kC}, DT_FLOAT, 1);
  if (c.addend_read_later) {
    OperatorDef *side =
        builder.AddOp("Activation", "side", {"addend_out"}, {"side"});
    ModelBuilder::AddStringArg(side, "activation", "RELU");
    builder.AddOutput("side", {1, kH, kW, kC}, DT_FLOAT, 1);
  }
  std::string weights;
  NetDef def = BuildNetDef(builder, &weights);

  BoundNet bound;
  ASSERT_EQ(bound.Init(std::move(def), weights, std::get<1>(GetParam())),
            MaceStatus::MACE_SUCCESS);
  Net &net = bound.net();
  EXPECT_EQ(net.input("sum_out")->data<float>() ==
                net.input("addend_out")->data<float>(),
            c.expect_shared);

  const std::vector<float> x = RandomFloats(kH * kW * kC, -1.0f, 1.0f, 5);
  net.input("x")->BindData(const_cast<float *>(x.data()));
  for (int run = 0; run < 2; ++run) {  // the second over the first's arena
    ASSERT_EQ(net.Run(nullptr), MaceStatus::MACE_SUCCESS);
  }

  const std::vector<double> x64 = ToDouble(x);
  const std::vector<double> addend = RefConv(x64, addend_w, 1);
  const std::vector<double> input =
      c.adds_its_input ? addend : Relu(RefConv(x64, base_w, 1));
  std::vector<double> expected = RefConv(input, sum_w, c.kernel);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] += addend[i];
  expected = Relu(expected);
  const float *got = net.output("sum_out")->data<float>();
  EXPECT_TRUE(AllClose(std::vector<float>(got, got + expected.size()), expected,
                       1e-5, 1e-4));
  if (c.addend_read_later) {
    const float *side = net.output("side")->data<float>();
    EXPECT_TRUE(AllClose(std::vector<float>(side, side + addend.size()),
                         Relu(addend), 1e-5, 1e-5));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NetInPlaceAddendTest,
    ::testing::Combine(
        ::testing::Values(
            Case{"pointwise", 1, -1, false, false, true},
            Case{"im2col_3x3", 3, 0, false, false, true},
            Case{"winograd", 3, 2, false, false, false},
            Case{"addend_read_later", 1, -1, true, false, false},
            Case{"adds_its_own_input", 1, -1, false, true, false},
            Case{"adds_its_own_input_3x3", 3, 0, false, true, false}),
        ::testing::Values(1, 2)));

}  // namespace
}  // namespace test
}  // namespace mace
