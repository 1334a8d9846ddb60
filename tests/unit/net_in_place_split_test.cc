// In-place split: a ChannelShuffle of two groups whose every reader is a
// channel Slice or a channel Split writes their outputs itself and they do
// not run (Net::PlanInPlaceSplits); a Slice, or a Split's first output,
// read only by a channel Concat writes into the joined tensor. ShuffleNet's
// unit, Concat(slice, conv(slice)) of a shuffle, is the case that matters.
// Every output must equal a float64 reference, and only eligible readers may be
// skipped.

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "mace/core/net.h"
#include "mace/model/model_builder.h"
#include "mace/ops/eltwise_type.h"
#include "tests/common/net_test_util.h"
#include "tests/common/reference.h"

namespace mace {
namespace test {
namespace {

constexpr int64_t kH = 5, kW = 7, kC = 18, kConvOut = 11;

using Values = std::vector<double>;

// Channel c of the shuffle (two groups) of x is x's channel c / 2 of the
// low half (c even) or of the high half (c odd).
Values Shuffle(const std::vector<float> &x) {
  Values y(x.size());
  for (size_t p = 0; p < x.size() / kC; ++p)
    for (int64_t c = 0; c < kC; ++c)
      y[p * kC + c] = x[p * kC + (c % 2) * (kC / 2) + c / 2];
  return y;
}

// Channels [begin, end) of every pixel of `t` (kC channels).
Values Columns(const Values &t, int64_t begin, int64_t end) {
  Values out;
  for (size_t p = 0; p < t.size() / kC; ++p)
    for (int64_t c = begin; c < end; ++c) out.push_back(t[p * kC + c]);
  return out;
}

// Each pixel's channels of `parts` one after another.
Values JoinColumns(const std::vector<std::pair<Values, int64_t>> &parts) {
  Values out;
  for (int64_t p = 0; p < kH * kW; ++p)
    for (const auto &[values, width] : parts)
      for (int64_t c = 0; c < width; ++c) out.push_back(values[p * width + c]);
  return out;
}

void AddSlice(ModelBuilder *builder, const std::string &input, int64_t begin,
              int64_t end, const std::string &output) {
  OperatorDef *slice = builder->AddOp("Slice", output, {input}, {output});
  ModelBuilder::AddIntsArg(slice, "starts", {begin});
  ModelBuilder::AddIntsArg(slice, "ends", {end});
  ModelBuilder::AddIntsArg(slice, "axes", {3});
}

// A graph with input [1, kH, kW, kC] and shuffled = ChannelShuffle(
// -(-input)): the shuffle reads arena memory (two negations, so the values
// are the input's), which the planner may hand to the slices' outputs once
// its last reader has run.
ModelBuilder ShuffledGraph(const std::string &name, int64_t group) {
  ModelBuilder builder(name);
  builder.AddInput("input", {1, kH, kW, kC}, DT_FLOAT, 1);
  for (const char *step : {"negated", "restored"}) {
    OperatorDef *neg = builder.AddOp(
        "Eltwise", step, {step[0] == 'n' ? "input" : "negated"}, {step});
    ModelBuilder::AddIntArg(neg, "type", kNeg);
  }
  OperatorDef *shuffle =
      builder.AddOp("ChannelShuffle", "shuffle", {"restored"}, {"shuffled"});
  ModelBuilder::AddIntArg(shuffle, "group", group);
  return builder;
}

// Split of `input` into `outputs` along `axis`, with sizes `split` (none:
// even pieces).
void AddSplit(ModelBuilder *builder, const std::string &input, int64_t axis,
              const std::vector<int64_t> &split,
              const std::vector<std::string> &outputs) {
  OperatorDef *op =
      builder->AddOp("Split", outputs[0] + "_split", {input}, outputs);
  ModelBuilder::AddIntArg(op, "axis", axis);
  if (!split.empty()) ModelBuilder::AddIntsArg(op, "split", split);
}

class NetInPlaceSplitTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    input_ = RandomFloats(kH * kW * kC, -1.0f, 1.0f, 17);
    filter_ = RandomFloats(kConvOut * (kC / 2), -0.5f, 0.5f, 18);
    bias_ = RandomFloats(kConvOut, -0.2f, 0.2f, 19);
  }

  // Runs `builder`'s graph twice (nothing may rely on a fresh arena).
  void Run(const ModelBuilder &builder) {
    std::string weights;
    NetDef def = BuildNetDef(builder, &weights);
    bound_ = std::make_unique<BoundNet>();
    ASSERT_EQ(bound_->Init(std::move(def), weights, GetParam()),
              MaceStatus::MACE_SUCCESS);
    net_ = &bound_->net();
    net_->input("input")->BindData(input_.data());
    for (int run = 0; run < 2; ++run) {
      ASSERT_EQ(net_->Run(nullptr), MaceStatus::MACE_SUCCESS);
    }
  }

  void ExpectOutput(const std::string &name, const Values &expected,
                    double tolerance) {
    const Tensor *output = net_->output(name);
    ASSERT_NE(output, nullptr) << name;
    ASSERT_EQ(output->size(), static_cast<int64_t>(expected.size())) << name;
    const float *got = output->data<float>();
    EXPECT_TRUE(AllClose(std::vector<float>(got, got + expected.size()),
                         expected, tolerance, tolerance))
        << name;
  }

  // 1x1 convolution of the kC / 2 channels of `x`, float64.
  Values Pointwise(const Values &x) const {
    Values out;
    for (int64_t p = 0; p < kH * kW; ++p)
      for (int64_t o = 0; o < kConvOut; ++o) {
        double sum = bias_[o];
        for (int64_t c = 0; c < kC / 2; ++c) {
          sum += x[p * (kC / 2) + c] * filter_[o * (kC / 2) + c];
        }
        out.push_back(sum);
      }
    return out;
  }

  void AddPointwise(ModelBuilder *builder, const std::string &input) {
    builder->AddFloatTensor("w", {kConvOut, 1, 1, kC / 2}, filter_);
    builder->AddFloatTensor("b", {kConvOut}, bias_);
    OperatorDef *conv =
        builder->AddOp("Conv2D", "conv", {input, "w", "b"}, {"conv"});
    ModelBuilder::AddIntsArg(conv, "strides", {1, 1});
    ModelBuilder::AddIntArg(conv, "padding", 0);
  }

  std::vector<float> input_, filter_, bias_;
  std::unique_ptr<BoundNet> bound_;
  Net *net_ = nullptr;  // bound_'s
};

// ShuffleNet's unit: shuffle -> low / high halves; Concat(low,
// conv(high)). The halves are two Slices (torchvision's chunk exports so)
// or one Split (torch.split, tf.split). The shuffle writes both halves,
// low straight into the joined tensor, and the conv writes its part of it
// too.
TEST_P(NetInPlaceSplitTest, ShuffleWritesItsHalvesIntoTheJoin) {
  for (bool by_split : {false, true}) {
    SCOPED_TRACE(by_split ? "one Split" : "two Slices");
    ModelBuilder builder = ShuffledGraph("shuffle_unit", 2);
    if (by_split) {
      AddSplit(&builder, "shuffled", -1, {}, {"low", "high"});
    } else {
      AddSlice(&builder, "shuffled", 0, kC / 2, "low");
      AddSlice(&builder, "shuffled", kC / 2, kC, "high");
    }
    AddPointwise(&builder, "high");
    OperatorDef *concat =
        builder.AddOp("Concat", "concat", {"low", "conv"}, {"joined"});
    ModelBuilder::AddIntArg(concat, "axis", 3);
    builder.AddOutput("joined", {1, kH, kW, kC / 2 + kConvOut}, DT_FLOAT, 1);
    Run(builder);
    EXPECT_EQ(net_->outputs_sliced_in_place(), 2);
    EXPECT_EQ(net_->inputs_written_in_place(), 2);  // low and conv
    const Values shuffled = Shuffle(input_);
    ExpectOutput(
        "joined",
        JoinColumns({{Columns(shuffled, 0, kC / 2), kC / 2},
                     {Pointwise(Columns(shuffled, kC / 2, kC)), kConvOut}}),
        1e-5);
  }
}

// Uneven pieces, one of them empty and one starting on an odd channel,
// next to a Slice: all written by the shuffle. Along another axis the
// Split runs, and so does the Slice beside it.
TEST_P(NetInPlaceSplitTest, ShuffleWritesUnevenSplitsButNotOtherAxes) {
  ModelBuilder builder = ShuffledGraph("uneven", 2);
  AddSplit(&builder, "shuffled", 3, {5, 0, 7, 6}, {"a", "b", "c", "d"});
  AddSlice(&builder, "shuffled", 4, 9, "e");
  for (const auto &[name, width] : std::vector<std::pair<std::string, int64_t>>{
           {"a", 5}, {"c", 7}, {"d", 6}, {"e", 5}}) {
    builder.AddOutput(name, {1, kH, kW, width}, DT_FLOAT, 1);
  }
  Run(builder);
  EXPECT_EQ(net_->outputs_sliced_in_place(), 4);  // the empty one needs none
  const Values shuffled = Shuffle(input_);
  ExpectOutput("a", Columns(shuffled, 0, 5), 0);
  ExpectOutput("c", Columns(shuffled, 5, 12), 0);
  ExpectOutput("d", Columns(shuffled, 12, 18), 0);
  ExpectOutput("e", Columns(shuffled, 4, 9), 0);

  ModelBuilder by_width = ShuffledGraph("by_width", 2);
  AddSplit(&by_width, "shuffled", 2, {3, 4}, {"left", "right"});
  AddSlice(&by_width, "shuffled", 0, kC / 2, "low");
  by_width.AddOutput("left", {1, kH, 3, kC}, DT_FLOAT, 1);
  by_width.AddOutput("right", {1, kH, 4, kC}, DT_FLOAT, 1);
  by_width.AddOutput("low", {1, kH, kW, kC / 2}, DT_FLOAT, 1);
  Run(by_width);
  EXPECT_EQ(net_->outputs_sliced_in_place(), 0);
  Values left, right;
  for (int64_t p = 0; p < kH * kW; ++p)
    for (int64_t c = 0; c < kC; ++c)
      (p % kW < 3 ? left : right).push_back(shuffled[p * kC + c]);
  ExpectOutput("left", left, 0);
  ExpectOutput("right", right, 0);
  ExpectOutput("low", Columns(shuffled, 0, kC / 2), 0);
}

// A channel Split of the graph input (no shuffle): its first output, read
// only by a channel Concat, is written into the joined tensor.
TEST_P(NetInPlaceSplitTest, SplitWritesItsFirstOutputIntoTheJoin) {
  ModelBuilder builder("split_join");
  builder.AddInput("input", {1, kH, kW, kC}, DT_FLOAT, 1);
  AddSplit(&builder, "input", 3, {4, 14}, {"head", "tail"});
  OperatorDef *relu = builder.AddOp("Activation", "relu", {"tail"}, {"relu"});
  ModelBuilder::AddStringArg(relu, "activation", "RELU");
  OperatorDef *concat =
      builder.AddOp("Concat", "concat", {"relu", "head"}, {"joined"});
  ModelBuilder::AddIntArg(concat, "axis", 3);
  builder.AddOutput("joined", {1, kH, kW, kC}, DT_FLOAT, 1);
  Run(builder);
  EXPECT_EQ(net_->outputs_sliced_in_place(), 0);
  EXPECT_EQ(net_->inputs_written_in_place(), 1);  // head, not the ReLU
  const Values x(input_.begin(), input_.end());
  Values relu_tail = Columns(x, 4, kC);
  for (double &v : relu_tail) v = std::max(v, 0.0);
  ExpectOutput("joined",
               JoinColumns({{relu_tail, kC - 4}, {Columns(x, 0, 4), 4}}), 0);
}

// Ranges that start on an odd channel, overlap and leave channels out,
// each a graph output.
TEST_P(NetInPlaceSplitTest, ShuffleWritesOddAndOverlappingRanges) {
  ModelBuilder builder = ShuffledGraph("odd_ranges", 2);
  AddSlice(&builder, "shuffled", 3, 12, "middle");
  AddSlice(&builder, "shuffled", 1, 6, "front");
  AddSlice(&builder, "shuffled", 11, 12, "one");
  builder.AddOutput("middle", {1, kH, kW, 9}, DT_FLOAT, 1);
  builder.AddOutput("front", {1, kH, kW, 5}, DT_FLOAT, 1);
  builder.AddOutput("one", {1, kH, kW, 1}, DT_FLOAT, 1);
  Run(builder);
  EXPECT_EQ(net_->outputs_sliced_in_place(), 3);
  const Values shuffled = Shuffle(input_);
  ExpectOutput("middle", Columns(shuffled, 3, 12), 0);
  ExpectOutput("front", Columns(shuffled, 1, 6), 0);
  ExpectOutput("one", Columns(shuffled, 11, 12), 0);
}

// The shuffle's output has a reader that is no channel range (a ReLU),
// or is a graph output, or the slice steps: the shuffle writes its output
// and every Slice runs.
TEST_P(NetInPlaceSplitTest, OtherReadersKeepTheSlicesRunning) {
  for (int variant = 0; variant < 3; ++variant) {
    ModelBuilder builder = ShuffledGraph("kept", 2);
    AddSlice(&builder, "shuffled", 0, kC / 2, "low");
    builder.AddOutput("low", {1, kH, kW, kC / 2}, DT_FLOAT, 1);
    const Values shuffled = Shuffle(input_);
    Values relu = shuffled;
    if (variant == 0) {
      OperatorDef *op =
          builder.AddOp("Activation", "relu", {"shuffled"}, {"relu"});
      ModelBuilder::AddStringArg(op, "activation", "RELU");
      builder.AddOutput("relu", {1, kH, kW, kC}, DT_FLOAT, 1);
      for (double &v : relu) v = std::max(v, 0.0);
    } else if (variant == 1) {
      builder.AddOutput("shuffled", {1, kH, kW, kC}, DT_FLOAT, 1);
    } else {
      OperatorDef *even =
          builder.AddOp("Slice", "even", {"shuffled"}, {"even"});
      ModelBuilder::AddIntsArg(even, "starts", {0});
      ModelBuilder::AddIntsArg(even, "ends", {kC});
      ModelBuilder::AddIntsArg(even, "axes", {3});
      ModelBuilder::AddIntsArg(even, "steps", {2});
      builder.AddOutput("even", {1, kH, kW, kC / 2}, DT_FLOAT, 1);
    }
    Run(builder);
    EXPECT_EQ(net_->outputs_sliced_in_place(), 0) << variant;
    ExpectOutput("low", Columns(shuffled, 0, kC / 2), 0);
    if (variant == 0) ExpectOutput("relu", relu, 0);
    if (variant == 1) ExpectOutput("shuffled", shuffled, 0);
    if (variant == 2) {
      Values even;
      for (int64_t p = 0; p < kH * kW; ++p)
        for (int64_t c = 0; c < kC; c += 2)
          even.push_back(shuffled[p * kC + c]);
      ExpectOutput("even", even, 0);
    }
  }
}

// Three groups take the general strided copy, which writes no slices; a
// Slice of the graph input, read only by a channel Concat, still writes
// into the joined tensor.
TEST_P(NetInPlaceSplitTest, SlicesOfOtherProducersRun) {
  ModelBuilder builder = ShuffledGraph("three_groups", 3);
  AddSlice(&builder, "shuffled", 2, 8, "part");
  AddSlice(&builder, "input", 5, 9, "raw");
  OperatorDef *concat =
      builder.AddOp("Concat", "concat", {"raw", "part"}, {"joined"});
  ModelBuilder::AddIntArg(concat, "axis", -1);
  builder.AddOutput("joined", {1, kH, kW, 10}, DT_FLOAT, 1);
  Run(builder);
  EXPECT_EQ(net_->outputs_sliced_in_place(), 0);
  EXPECT_EQ(net_->inputs_written_in_place(), 2);
  Values shuffled(input_.size());
  for (size_t p = 0; p < input_.size() / kC; ++p)
    for (int64_t g = 0; g < 3; ++g)
      for (int64_t k = 0; k < kC / 3; ++k)
        shuffled[p * kC + k * 3 + g] = input_[p * kC + g * (kC / 3) + k];
  const Values raw = Columns(Values(input_.begin(), input_.end()), 5, 9);
  ExpectOutput("joined", JoinColumns({{raw, 4}, {Columns(shuffled, 2, 8), 6}}),
               0);
}

INSTANTIATE_TEST_SUITE_P(Threads, NetInPlaceSplitTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace test
}  // namespace mace
