// The converter's fusion passes: each test builds a small graph with
// GraphBuilder, runs the model Finish writes through the engine before and
// after the pass on the same random inputs, and checks that the op list
// changed as intended while the outputs stayed the same (up to float
// rounding) — or, for the negative cases, that the graph did not change.

#include "mace/converter/passes/passes.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/core/status.h"
#include "mace/model/model_builder.h"
#include "mace/model/op_provenance.h"
#include "tests/common/reference.h"

namespace mace {
namespace converter {
namespace {

using test::AllClose;
using test::Product;
using test::RandomFloats;
using test::ToDouble;

using BuildFn = std::function<void(GraphBuilder *)>;

constexpr int64_t kChannels = 8;  // output channels of the weighted ops

// ---- building graphs ------------------------------------------------------

void Input(GraphBuilder *graph, const std::string &name, const Shape &shape) {
  const MaceStatus status = graph->AddInput(name, DT_FLOAT, shape, 0);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
}

void Constant(GraphBuilder *graph, const std::string &name, const Shape &shape,
              uint32_t seed, float low = -1.0f, float high = 1.0f) {
  graph->AddConstant(name, shape,
                     RandomFloats(Product(shape), low, high, seed));
}

void ConstantInts(GraphBuilder *graph, const std::string &name,
                  const Shape &shape, const std::vector<int32_t> &values) {
  graph->AddConstantInt(name, shape, values);
}

void Op(GraphBuilder *graph, const std::string &type, const std::string &name,
        const std::vector<std::string> &inputs,
        const std::vector<OpArg> &args = {}) {
  const MaceStatus status = graph->AddOp(type, name, inputs, {name}, args);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
}

void Output(GraphBuilder *graph, const std::string &name) {
  const MaceStatus status = graph->AddOutput(name, 0);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
}

const std::vector<std::string> kWeightedTypes = {
    "Conv2D", "DepthwiseConv2d", "Deconv2D", "DepthwiseDeconv2d",
    "FullyConnected"};

// Adds graph input "x" and a `type` op named `name` reading it, with
// kChannels output channels, a constant filter "w" and (when `bias`) a
// constant bias "b": grouped Conv2D, depthwise with multiplier 2, strided
// deconvolutions, or FullyConnected on [3, 10].
void AddWeighted(GraphBuilder *graph, const std::string &type,
                 const std::string &name, bool bias) {
  std::vector<OpArg> args;
  if (type == "Conv2D") {
    Input(graph, "x", {1, 6, 5, 4});
    Constant(graph, "w", {kChannels, 3, 3, 2}, 11);
    args = {OpArg::Int("group", 2), OpArg::Int("padding", 1)};
  } else if (type == "DepthwiseConv2d") {
    Input(graph, "x", {1, 6, 5, 4});
    Constant(graph, "w", {3, 3, 4, 2}, 11);
    args = {OpArg::Int("padding", 1)};
  } else if (type == "Deconv2D") {
    Input(graph, "x", {1, 4, 3, 4});
    Constant(graph, "w", {kChannels, 3, 3, 4}, 11);
    args = {OpArg::Ints("strides", {2, 2})};
  } else if (type == "DepthwiseDeconv2d") {
    Input(graph, "x", {1, 4, 3, 4});
    Constant(graph, "w", {3, 3, 4, 2}, 11);
    args = {OpArg::Ints("strides", {2, 2})};
  } else {
    Input(graph, "x", {3, 10});
    Constant(graph, "w", {kChannels, 10}, 11);
  }
  std::vector<std::string> inputs = {"x", "w"};
  if (bias) {
    Constant(graph, "b", {kChannels}, 12);
    inputs.push_back("b");
  }
  Op(graph, type, name, inputs, args);
}

// A BatchNorm of `input` with constant parameters: (scale, offset) or
// (scale, offset, mean, var) with epsilon 1e-3, plus `extra_args`.
void AddBatchNorm(GraphBuilder *graph, const std::string &name,
                  const std::string &input, bool with_statistics,
                  std::vector<OpArg> extra_args = {}) {
  Constant(graph, name + "_scale", {kChannels}, 21, 0.5f, 2.0f);
  Constant(graph, name + "_offset", {kChannels}, 22);
  std::vector<std::string> inputs = {input, name + "_scale", name + "_offset"};
  if (with_statistics) {
    Constant(graph, name + "_mean", {kChannels}, 23);
    Constant(graph, name + "_var", {kChannels}, 24, 0.5f, 1.5f);
    inputs.push_back(name + "_mean");
    inputs.push_back(name + "_var");
    extra_args.push_back(OpArg::Float("epsilon", 1e-3f));
  }
  Op(graph, "BatchNorm", name, inputs, extra_args);
}

// ---- running graphs -------------------------------------------------------

// What Finish writes for a graph.
struct Snapshot {
  std::string graph;
  std::string weights;
  NetDef net;
};

Snapshot Take(GraphBuilder *graph) {
  ModelBuilder model;
  Snapshot snapshot;
  MaceStatus status = graph->Finish("passes_test", &model);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  status = model.Serialize(WeightStorage::kFloat32, &snapshot.graph,
                           &snapshot.weights);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  snapshot.net = model.net();
  return snapshot;
}

MaceTensor RandomTensor(const InputOutputInfo &info, uint32_t seed) {
  const std::vector<int64_t> shape(info.dims().begin(), info.dims().end());
  const std::vector<float> values =
      RandomFloats(Product(shape), -1.0f, 1.0f, seed);
  std::shared_ptr<float> buffer(new float[values.size()],
                                std::default_delete<float[]>());
  std::copy(values.begin(), values.end(), buffer.get());
  return MaceTensor(shape, buffer, DataFormat::NONE);
}

// Runs the model on inputs drawn from fixed seeds; each output's values,
// in output order.
std::vector<std::vector<float>> Run(const Snapshot &snapshot) {
  std::vector<std::string> input_names, output_names;
  std::map<std::string, MaceTensor> inputs;
  uint32_t seed = 100;
  for (const InputOutputInfo &info : snapshot.net.input_info()) {
    inputs[info.name()] = RandomTensor(info, seed++);
    input_names.push_back(info.name());
  }
  for (const InputOutputInfo &info : snapshot.net.output_info()) {
    output_names.push_back(info.name());
  }
  std::shared_ptr<MaceEngine> engine;
  MaceStatus status = CreateMaceEngineFromProto(
      reinterpret_cast<const unsigned char *>(snapshot.graph.data()),
      snapshot.graph.size(),
      reinterpret_cast<const unsigned char *>(snapshot.weights.data()),
      snapshot.weights.size(), input_names, output_names,
      MaceEngineConfig(DeviceType::CPU), &engine);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  if (engine == nullptr) return {};
  std::map<std::string, MaceTensor> outputs;
  status = engine->Run(inputs, &outputs);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  std::vector<std::vector<float>> values;
  for (const std::string &name : output_names) {
    const MaceTensor &tensor = outputs[name];
    const float *data = tensor.data<float>().get();
    values.emplace_back(data, data + Product(tensor.shape()));
  }
  return values;
}

std::vector<std::string> OpTypes(const NetDef &net) {
  std::vector<std::string> types;
  for (const OperatorDef &op : net.op()) types.push_back(op.type());
  return types;
}

// net.op(index), or an empty op (and a failure) when there is none, so a
// test whose op list came out wrong reports it instead of crashing.
const OperatorDef &OpAt(const NetDef &net, int index) {
  static const OperatorDef kNone;
  if (index < net.op_size()) return net.op(index);
  ADD_FAILURE() << "no op " << index;
  return kNone;
}

const Argument *Arg(const OperatorDef &op, const std::string &name) {
  for (const Argument &arg : op.arg()) {
    if (arg.name() == name) return &arg;
  }
  return nullptr;
}

// Expects op `index` of `net` to carry int argument `name` = `want`.
void ExpectIntArg(const NetDef &net, int index, const std::string &name,
                  int64_t want) {
  const Argument *arg = Arg(OpAt(net, index), name);
  ASSERT_NE(arg, nullptr) << "op " << index << " has no '" << name << "'";
  EXPECT_EQ(arg->i(), want) << "op " << index << " '" << name << "'";
}

// Expects op `index` of `net` to carry ints argument `name` = `want`.
void ExpectIntsArg(const NetDef &net, int index, const std::string &name,
                   const std::vector<int64_t> &want) {
  const Argument *arg = Arg(OpAt(net, index), name);
  ASSERT_NE(arg, nullptr) << "op " << index << " has no '" << name << "'";
  EXPECT_EQ(std::vector<int64_t>(arg->ints().begin(), arg->ints().end()), want)
      << "op " << index << " '" << name << "'";
}

std::string Activation(const OperatorDef &op) {
  const Argument *arg = Arg(op, "activation");
  return arg == nullptr ? "NOOP" : arg->s();
}

// Builds a graph, runs `passes` on it, and expects the ops afterwards to be
// `expected_types` and every output to agree with the graph before within
// 1e-5 relative. Returns the model after the passes.
NetDef ExpectRewrite(const BuildFn &build, const std::vector<GraphPass> &passes,
                     const std::vector<std::string> &expected_types) {
  GraphBuilder graph;
  build(&graph);
  const std::vector<std::vector<float>> before = Run(Take(&graph));
  for (GraphPass pass : passes) {
    const MaceStatus status = pass(&graph);
    EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  }
  const Snapshot after = Take(&graph);
  EXPECT_EQ(OpTypes(after.net), expected_types);
  const std::vector<std::vector<float>> values = Run(after);
  EXPECT_EQ(values.size(), before.size());
  for (size_t i = 0; i < std::min(values.size(), before.size()); ++i) {
    EXPECT_TRUE(AllClose(values[i], ToDouble(before[i]), 1e-5, 1e-6))
        << "output " << i;
  }
  return after.net;
}

// Expects `pass` to leave the graph exactly as it was.
void ExpectUnchanged(const BuildFn &build, GraphPass pass) {
  GraphBuilder graph;
  build(&graph);
  const Snapshot before = Take(&graph);
  const MaceStatus status = pass(&graph);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  const Snapshot after = Take(&graph);
  EXPECT_EQ(OpTypes(after.net), OpTypes(before.net));
  EXPECT_TRUE(after.graph == before.graph && after.weights == before.weights);
}

// Expects a second run of `pass` to leave the graph as the first left it.
void ExpectIdempotent(const BuildFn &build, GraphPass pass) {
  GraphBuilder graph;
  build(&graph);
  EXPECT_EQ(pass(&graph), MaceStatus::MACE_SUCCESS);
  const Snapshot once = Take(&graph);
  EXPECT_EQ(pass(&graph), MaceStatus::MACE_SUCCESS);
  const Snapshot twice = Take(&graph);
  EXPECT_EQ(OpTypes(twice.net), OpTypes(once.net));
  EXPECT_TRUE(twice.graph == once.graph && twice.weights == once.weights);
}

// ---- FoldBatchNormIntoConv -------------------------------------------------

TEST(FoldBatchNormIntoConvTest, FoldsIntoEachWeightedOpType) {
  for (const std::string &type : kWeightedTypes) {
    for (bool bias : {true, false}) {
      for (bool statistics : {true, false}) {
        SCOPED_TRACE(type + (bias ? " with bias" : " without bias") +
                     (statistics ? ", mean and var" : ", scale and offset"));
        const NetDef net = ExpectRewrite(
            [&](GraphBuilder *graph) {
              AddWeighted(graph, type, "conv", bias);
              AddBatchNorm(graph, "bn", "conv", statistics);
              Output(graph, "bn");
            },
            {FoldBatchNormIntoConv}, {type});
        EXPECT_EQ(OpAt(net, 0).input_size(), 3);  // a bias was created
        EXPECT_EQ(OpAt(net, 0).output(0), "bn");
      }
    }
  }
}

TEST(FoldBatchNormIntoConvTest, CarriesTheBatchNormActivationOver) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        AddBatchNorm(graph, "bn", "conv", true,
                     {OpArg::String("activation", "RELUX"),
                      OpArg::Float("max_limit", 0.5f)});
        Output(graph, "bn");
      },
      {FoldBatchNormIntoConv}, {"Conv2D"});
  EXPECT_EQ(Activation(OpAt(net, 0)), "RELUX");
  ASSERT_NE(Arg(OpAt(net, 0), "max_limit"), nullptr);
  EXPECT_EQ(Arg(OpAt(net, 0), "max_limit")->f(), 0.5f);
}

TEST(FoldBatchNormIntoConvTest, LeavesASharedFilterIntact) {
  // Both convolutions read "w"; folding into one must not change the other.
  ExpectRewrite(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        Op(graph, "Conv2D", "other", {"x", "w", "b"},
           {OpArg::Int("group", 2), OpArg::Int("padding", 1)});
        AddBatchNorm(graph, "bn", "conv", true);
        Output(graph, "bn");
        Output(graph, "other");
      },
      {FoldBatchNormIntoConv}, {"Conv2D", "Conv2D"});
}

TEST(FoldBatchNormIntoConvTest, FoldsAChainOfBatchNormsInOneRun) {
  const BuildFn build = [](GraphBuilder *graph) {
    AddWeighted(graph, "DepthwiseConv2d", "conv", false);
    AddBatchNorm(graph, "bn1", "conv", true);
    AddBatchNorm(graph, "bn2", "bn1", false);
    Output(graph, "bn2");
  };
  ExpectRewrite(build, {FoldBatchNormIntoConv}, {"DepthwiseConv2d"});
  ExpectIdempotent(build, FoldBatchNormIntoConv);
}

TEST(FoldBatchNormIntoConvTest, RecordsTheFusedNodesForProfiles) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        AddBatchNorm(graph, "bn1", "conv", true);
        AddBatchNorm(graph, "bn2", "bn1", false);
        Output(graph, "bn2");
      },
      {FoldBatchNormIntoConv}, {"Conv2D"});
  EXPECT_EQ(FusedSourceNodes(OpAt(net, 0)),
            (std::vector<std::string>{"bn1", "bn2"}));
  EXPECT_EQ(DescribeSourceNodes(OpAt(net, 0)), "conv (+ bn1, bn2)");
}

TEST(FoldBatchNormIntoConvTest, SkipsAConvOutputReadTwice) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        AddBatchNorm(graph, "bn", "conv", true);
        Op(graph, "Activation", "relu", {"conv"},
           {OpArg::String("activation", "RELU")});
        Output(graph, "bn");
        Output(graph, "relu");
      },
      FoldBatchNormIntoConv);
}

TEST(FoldBatchNormIntoConvTest, SkipsAConvOutputThatIsAGraphOutput) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        AddBatchNorm(graph, "bn", "conv", true);
        Output(graph, "bn");
        Output(graph, "conv");
      },
      FoldBatchNormIntoConv);
}

TEST(FoldBatchNormIntoConvTest, SkipsAConvWithAnActivation) {
  // BatchNorm(relu(conv)) is not an affine map of conv's sum.
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 6, 5, 4});
        Constant(graph, "w", {kChannels, 3, 3, 4}, 11);
        Op(graph, "Conv2D", "conv", {"x", "w"},
           {OpArg::String("activation", "RELU")});
        AddBatchNorm(graph, "bn", "conv", true);
        Output(graph, "bn");
      },
      FoldBatchNormIntoConv);
}

TEST(FoldBatchNormIntoConvTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Deconv2D", "conv", true);
        AddBatchNorm(graph, "bn", "conv", true);
        Output(graph, "bn");
      },
      FoldBatchNormIntoConv);
}

// ---- FuseActivation --------------------------------------------------------

const std::vector<OpArg> kLeakyRelu = {
    OpArg::String("activation", "LEAKYRELU"),
    OpArg::Float("activation_coefficient", 0.1f)};

TEST(FuseActivationTest, FusesIntoEachWeightedOpType) {
  for (const std::string &type : kWeightedTypes) {
    SCOPED_TRACE(type);
    const NetDef net = ExpectRewrite(
        [&](GraphBuilder *graph) {
          AddWeighted(graph, type, "conv", true);
          Op(graph, "Activation", "act", {"conv"}, kLeakyRelu);
          Output(graph, "act");
        },
        {FuseActivation}, {type});
    EXPECT_EQ(Activation(OpAt(net, 0)), "LEAKYRELU");
    ASSERT_NE(Arg(OpAt(net, 0), "activation_coefficient"), nullptr);
    EXPECT_EQ(Arg(OpAt(net, 0), "activation_coefficient")->f(), 0.1f);
    EXPECT_EQ(OpAt(net, 0).output(0), "act");
  }
}

TEST(FuseActivationTest, FusesIntoNormalizationsAndBiasAdd) {
  const std::vector<std::vector<OpArg>> activations = {
      {OpArg::String("activation", "RELUX"), OpArg::Float("max_limit", 0.3f)},
      {OpArg::String("activation", "HARDSIGMOID"),
       OpArg::Float("hardsigmoid_alpha", 0.3f),
       OpArg::Float("hardsigmoid_beta", 0.4f)},
      {OpArg::String("activation", "TANH")}};
  for (const char *type : {"BatchNorm", "BiasAdd", "InstanceNorm"}) {
    for (const std::vector<OpArg> &activation : activations) {
      SCOPED_TRACE(std::string(type) + " + " + activation[0].proto.s());
      ExpectRewrite(
          [&](GraphBuilder *graph) {
            Input(graph, "x", {2, 3, 4, kChannels});
            if (std::string(type) == "BatchNorm") {
              AddBatchNorm(graph, "norm", "x", false);
            } else if (std::string(type) == "BiasAdd") {
              Constant(graph, "b", {kChannels}, 12);
              Op(graph, "BiasAdd", "norm", {"x", "b"});
            } else {
              Constant(graph, "s", {kChannels}, 12);
              Constant(graph, "b", {kChannels}, 13);
              Op(graph, "InstanceNorm", "norm", {"x", "s", "b"});
            }
            Op(graph, "Activation", "act", {"norm"}, activation);
            Output(graph, "act");
          },
          {FuseActivation}, {std::string(type)});
    }
  }
}

TEST(FuseActivationTest, SkipsAnOutputReadTwice) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        Op(graph, "Activation", "act", {"conv"}, kLeakyRelu);
        Op(graph, "Activation", "act2", {"conv"},
           {OpArg::String("activation", "TANH")});
        Output(graph, "act");
        Output(graph, "act2");
      },
      FuseActivation);
}

TEST(FuseActivationTest, SkipsAGraphOutput) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "FullyConnected", "fc", true);
        Op(graph, "Activation", "act", {"fc"}, kLeakyRelu);
        Output(graph, "fc");
        Output(graph, "act");
      },
      FuseActivation);
}

TEST(FuseActivationTest, SkipsAnOpThatHasAnActivation) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, kChannels});
        Constant(graph, "b", {kChannels}, 12);
        Op(graph, "BiasAdd", "add", {"x", "b"},
           {OpArg::String("activation", "RELU")});
        Op(graph, "Activation", "act", {"add"},
           {OpArg::String("activation", "TANH")});
        Output(graph, "act");
      },
      FuseActivation);
}

TEST(FuseActivationTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        Op(graph, "Activation", "act", {"conv"}, kLeakyRelu);
        Op(graph, "Activation", "act2", {"act"},
           {OpArg::String("activation", "TANH")});
        Output(graph, "act2");
      },
      FuseActivation);
}

// ---- FoldBiasIntoConv ------------------------------------------------------

OpArg EltwiseType(int64_t type) { return OpArg::Int("type", type); }
constexpr int64_t kSum = 0, kSub = 1, kProd = 2, kDiv = 3;

TEST(FoldBiasIntoConvTest, FoldsAPerChannelSumIntoEachWeightedOpType) {
  for (const std::string &type : kWeightedTypes) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE(type + (bias ? " with bias" : " without bias"));
      const NetDef net = ExpectRewrite(
          [&](GraphBuilder *graph) {
            AddWeighted(graph, type, "conv", bias);
            Constant(graph, "k", {kChannels}, 41);
            Op(graph, "Eltwise", "add", {"conv", "k"}, {EltwiseType(kSum)});
            Output(graph, "add");
          },
          {FoldBiasIntoConv}, {type});
      EXPECT_EQ(OpAt(net, 0).input_size(), 3);
    }
  }
}

TEST(FoldBiasIntoConvTest, FoldsAPerChannelProductIntoEachWeightedOpType) {
  for (const std::string &type : kWeightedTypes) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE(type + (bias ? " with bias" : " without bias"));
      const NetDef net = ExpectRewrite(
          [&](GraphBuilder *graph) {
            AddWeighted(graph, type, "conv", bias);
            Constant(graph, "k", {kChannels}, 41);
            Op(graph, "Eltwise", "mul", {"k", "conv"}, {EltwiseType(kProd)});
            Output(graph, "mul");
          },
          {FoldBiasIntoConv}, {type});
      EXPECT_EQ(OpAt(net, 0).input_size(), bias ? 3 : 2);
    }
  }
}

TEST(FoldBiasIntoConvTest, AcceptsBroadcastShapesAlongTheChannelAxis) {
  for (const Shape &shape :
       std::vector<Shape>{{1, kChannels}, {1, 1, 1, kChannels}, {1}, {}}) {
    SCOPED_TRACE(ShapeToString(shape));
    ExpectRewrite(
        [&](GraphBuilder *graph) {
          AddWeighted(graph, "Conv2D", "conv", true);
          Constant(graph, "k", shape, 41);
          Op(graph, "Eltwise", "add", {"conv", "k"}, {EltwiseType(kSum)});
          Output(graph, "add");
        },
        {FoldBiasIntoConv}, {"Conv2D"});
  }
}

TEST(FoldBiasIntoConvTest, FoldsABiasAddWithItsActivation) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", false);
        Constant(graph, "k", {kChannels}, 41);
        Op(graph, "BiasAdd", "add", {"conv", "k"},
           {OpArg::String("activation", "RELU")});
        Output(graph, "add");
      },
      {FoldBiasIntoConv}, {"Conv2D"});
  EXPECT_EQ(Activation(OpAt(net, 0)), "RELU");
}

TEST(FoldBiasIntoConvTest, FoldsAChainOfSumsAndProductsInOneRun) {
  const BuildFn build = [](GraphBuilder *graph) {
    AddWeighted(graph, "DepthwiseConv2d", "conv", true);
    Constant(graph, "k1", {kChannels}, 41);
    Constant(graph, "k2", {1, 1, 1, kChannels}, 42);
    Op(graph, "Eltwise", "add", {"conv", "k1"}, {EltwiseType(kSum)});
    Op(graph, "Eltwise", "mul", {"add", "k2"}, {EltwiseType(kProd)});
    Output(graph, "mul");
  };
  ExpectRewrite(build, {FoldBiasIntoConv}, {"DepthwiseConv2d"});
  ExpectIdempotent(build, FoldBiasIntoConv);
}

// x @ W + b on [batch, seq, d] activations (a transformer's projections,
// which stay MatMul): the sum becomes MatMul's bias input, with W constant
// or fed at run time, the bias [N] or [1, 1, N], a second sum added to it.
TEST(FoldBiasIntoConvTest, FoldsASumIntoAMatMulAsItsBias) {
  for (bool constant_w : {true, false}) {
    for (const Shape &shape : std::vector<Shape>{{5}, {1, 1, 5}, {1}}) {
      SCOPED_TRACE(std::string(constant_w ? "constant" : "fed") + " W, k " +
                   ShapeToString(shape));
      const NetDef net = ExpectRewrite(
          [&](GraphBuilder *graph) {
            Input(graph, "x", {2, 3, 4});
            if (constant_w) {
              Constant(graph, "w", {4, 5}, 40);
            } else {
              Input(graph, "w", {2, 4, 5});
            }
            Op(graph, "MatMul", "mm", {"x", "w"});
            Constant(graph, "k", shape, 41);
            Constant(graph, "k2", {5}, 42);
            Op(graph, "Eltwise", "add", {"k", "mm"}, {EltwiseType(kSum)});
            Op(graph, "Eltwise", "add2", {"add", "k2"}, {EltwiseType(kSum)});
            Output(graph, "add2");
          },
          {FoldBiasIntoConv}, {"MatMul"});
      EXPECT_EQ(OpAt(net, 0).input_size(), 3);
      EXPECT_EQ(OpAt(net, 0).output(0), "add2");
    }
  }
}

TEST(FoldBiasIntoConvTest, LeavesMatMulProductsAndVectorsAlone) {
  // A product would scale B, which may come at run time.
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 3, 4});
        Constant(graph, "w", {4, 5}, 40);
        Op(graph, "MatMul", "mm", {"x", "w"});
        Constant(graph, "k", {5}, 41);
        Op(graph, "Eltwise", "mul", {"mm", "k"}, {EltwiseType(kProd)});
        Output(graph, "mul");
      },
      FoldBiasIntoConv);
  // A 1-D B gives C no column axis for a bias.
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {3, 4});
        Constant(graph, "w", {4}, 40);
        Op(graph, "MatMul", "mm", {"x", "w"});
        Constant(graph, "k", {3}, 41);
        Op(graph, "Eltwise", "add", {"mm", "k"}, {EltwiseType(kSum)});
        Output(graph, "add");
      },
      FoldBiasIntoConv);
  // Per row rather than per column.
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 3, 4});
        Constant(graph, "w", {4, 5}, 40);
        Op(graph, "MatMul", "mm", {"x", "w"});
        Constant(graph, "k", {3, 1}, 41);
        Op(graph, "Eltwise", "add", {"mm", "k"}, {EltwiseType(kSum)});
        Output(graph, "add");
      },
      FoldBiasIntoConv);
}

TEST(FoldBiasIntoConvTest, LeavesASharedFilterIntact) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "FullyConnected", "fc", true);
        Op(graph, "FullyConnected", "other", {"x", "w", "b"});
        Constant(graph, "k", {kChannels}, 41);
        Op(graph, "Eltwise", "mul", {"fc", "k"}, {EltwiseType(kProd)});
        Output(graph, "mul");
        Output(graph, "other");
      },
      {FoldBiasIntoConv}, {"FullyConnected", "FullyConnected"});
}

TEST(FoldBiasIntoConvTest, SkipsConstantsThatAreNotPerChannel) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        Constant(graph, "k", {1, 6, 5, kChannels}, 41);
        Op(graph, "Eltwise", "add", {"conv", "k"}, {EltwiseType(kSum)});
        Output(graph, "add");
      },
      FoldBiasIntoConv);
  // [1, 1, 1, C] against a [N, C] output would raise its rank.
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "FullyConnected", "fc", true);
        Constant(graph, "k", {1, 1, 1, kChannels}, 41);
        Op(graph, "Eltwise", "add", {"fc", "k"}, {EltwiseType(kSum)});
        Output(graph, "add");
      },
      FoldBiasIntoConv);
}

TEST(FoldBiasIntoConvTest, SkipsOtherEltwiseForms) {
  const std::vector<std::vector<OpArg>> forms = {
      {EltwiseType(kSub)},
      {EltwiseType(kSum), OpArg::Floats("coeff", {1.0f, 2.0f})}};
  for (const std::vector<OpArg> &args : forms) {
    ExpectUnchanged(
        [&](GraphBuilder *graph) {
          AddWeighted(graph, "Conv2D", "conv", true);
          Constant(graph, "k", {kChannels}, 41);
          Op(graph, "Eltwise", "e", {"conv", "k"}, args);
          Output(graph, "e");
        },
        FoldBiasIntoConv);
  }
}

TEST(FoldBiasIntoConvTest, SkipsAProducerWithAnActivation) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {3, 10});
        Constant(graph, "w", {kChannels, 10}, 11);
        Op(graph, "FullyConnected", "fc", {"x", "w"},
           {OpArg::String("activation", "RELU")});
        Constant(graph, "k", {kChannels}, 41);
        Op(graph, "Eltwise", "add", {"fc", "k"}, {EltwiseType(kSum)});
        Output(graph, "add");
      },
      FoldBiasIntoConv);
}

TEST(FoldBiasIntoConvTest, SkipsAnOutputReadTwiceOrShown) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        Constant(graph, "k", {kChannels}, 41);
        Op(graph, "Eltwise", "add", {"conv", "k"}, {EltwiseType(kSum)});
        Op(graph, "Eltwise", "mul", {"conv", "k"}, {EltwiseType(kProd)});
        Output(graph, "add");
        Output(graph, "mul");
      },
      FoldBiasIntoConv);
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        Constant(graph, "k", {kChannels}, 41);
        Op(graph, "Eltwise", "add", {"conv", "k"}, {EltwiseType(kSum)});
        Output(graph, "add");
        Output(graph, "conv");
      },
      FoldBiasIntoConv);
}

// ---- FuseResidualAdd -------------------------------------------------------

// A Conv2D "conv" ([1, 6, 5, kChannels]) and graph input "r" of its shape.
void AddConvAndResidual(GraphBuilder *graph, bool bias,
                        std::vector<OpArg> conv_args = {}) {
  Input(graph, "x", {1, 6, 5, 4});
  Constant(graph, "w", {kChannels, 3, 3, 4}, 11);
  std::vector<std::string> inputs = {"x", "w"};
  if (bias) {
    Constant(graph, "b", {kChannels}, 12);
    inputs.push_back("b");
  }
  conv_args.push_back(OpArg::Int("padding", 1));
  Op(graph, "Conv2D", "conv", inputs, conv_args);
  Input(graph, "r", {1, 6, 5, kChannels});
}

TEST(FuseResidualAddTest, FusesTheSumIntoTheConvWithTheAddendLast) {
  for (bool bias : {true, false}) {
    for (bool conv_first : {true, false}) {
      SCOPED_TRACE(std::string(bias ? "bias" : "no bias") +
                   (conv_first ? ", conv + r" : ", r + conv"));
      const NetDef net = ExpectRewrite(
          [&](GraphBuilder *graph) {
            AddConvAndResidual(graph, bias);
            Op(graph, "Eltwise", "add",
               conv_first ? std::vector<std::string>{"conv", "r"}
                          : std::vector<std::string>{"r", "conv"},
               {EltwiseType(kSum)});
            Output(graph, "add");
          },
          {FuseResidualAdd}, {"Conv2D"});
      const OperatorDef &conv = OpAt(net, 0);
      ASSERT_EQ(conv.input_size(), 4);
      EXPECT_EQ(conv.input(3), "r");
      EXPECT_EQ(conv.output(0), "add");
      ASSERT_NE(Arg(conv, "fused_add"), nullptr);
      EXPECT_EQ(Arg(conv, "fused_add")->i(), 1);
    }
  }
}

// ResNet's block: the addend comes from an op after the conv, and a ReLU
// follows the sum; the conv moves after the addend's producer and takes
// the ReLU, applied after the sum.
TEST(FuseResidualAddTest, MovesTheConvAfterTheAddendAndTakesTheRelu) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddConvAndResidual(graph, true);
        Constant(graph, "w2", {kChannels, 1, 1, 4}, 13);
        Op(graph, "Conv2D", "shortcut", {"x", "w2"});
        Op(graph, "Eltwise", "add", {"conv", "shortcut"}, {EltwiseType(kSum)});
        Op(graph, "Activation", "relu", {"add"},
           {OpArg::String("activation", "RELU")});
        Output(graph, "relu");
        Output(graph, "r");
      },
      {FuseResidualAdd, FuseActivation}, {"Conv2D", "Conv2D"});
  EXPECT_EQ(OpAt(net, 0).name(), "shortcut");
  const OperatorDef &fused = OpAt(net, 1);
  ASSERT_EQ(fused.input_size(), 4);
  EXPECT_EQ(fused.input(3), "shortcut");
  EXPECT_EQ(Activation(fused), "RELU");
}

TEST(FuseResidualAddTest, SkipsOtherForms) {
  // An activation before the sum, a second reader, another Eltwise kind,
  // weights, a broadcast operand.
  const std::vector<BuildFn> builds = {
      [](GraphBuilder *graph) {
        AddConvAndResidual(graph, true, {OpArg::String("activation", "RELU")});
        Op(graph, "Eltwise", "add", {"conv", "r"}, {EltwiseType(kSum)});
        Output(graph, "add");
      },
      [](GraphBuilder *graph) {
        AddConvAndResidual(graph, true);
        Op(graph, "Eltwise", "add", {"conv", "r"}, {EltwiseType(kSum)});
        Output(graph, "add");
        Output(graph, "conv");
      },
      [](GraphBuilder *graph) {
        AddConvAndResidual(graph, true);
        Op(graph, "Eltwise", "sub", {"conv", "r"}, {EltwiseType(kSub)});
        Output(graph, "sub");
      },
      [](GraphBuilder *graph) {
        AddConvAndResidual(graph, true);
        Op(graph, "Eltwise", "add", {"conv", "r"},
           {EltwiseType(kSum), OpArg::Floats("coeff", {1.0f, 0.5f})});
        Output(graph, "add");
      },
      [](GraphBuilder *graph) {
        AddConvAndResidual(graph, true);
        Input(graph, "row", {1, 1, 5, kChannels});
        Op(graph, "Eltwise", "add", {"conv", "row"}, {EltwiseType(kSum)});
        Output(graph, "add");
        Output(graph, "r");
      },
  };
  for (size_t i = 0; i < builds.size(); ++i) {
    SCOPED_TRACE("form " + std::to_string(i));
    ExpectUnchanged(builds[i], FuseResidualAdd);
  }
}

// A scale after the sum no longer folds into the filter, and a PRELU has
// no place before the addend.
TEST(FuseResidualAddTest, LaterFoldsLeaveTheFusedConv) {
  const BuildFn fused = [](GraphBuilder *graph) {
    AddConvAndResidual(graph, true);
    Op(graph, "Eltwise", "add", {"conv", "r"}, {EltwiseType(kSum)});
    EXPECT_EQ(FuseResidualAdd(graph), MaceStatus::MACE_SUCCESS);
  };
  ExpectUnchanged(
      [&](GraphBuilder *graph) {
        fused(graph);
        Constant(graph, "k", {kChannels}, 41);
        Op(graph, "Eltwise", "mul", {"add", "k"}, {EltwiseType(kProd)});
        Output(graph, "mul");
      },
      FoldBiasIntoConv);
  ExpectUnchanged(
      [&](GraphBuilder *graph) {
        fused(graph);
        AddBatchNorm(graph, "bn", "add", true);
        Output(graph, "bn");
      },
      FoldBatchNormIntoConv);
  ExpectUnchanged(
      [&](GraphBuilder *graph) {
        fused(graph);
        Constant(graph, "slope", {kChannels}, 42);
        Op(graph, "Activation", "prelu", {"add", "slope"},
           {OpArg::String("activation", "PRELU")});
        Output(graph, "prelu");
      },
      FuseActivation);
}

TEST(FuseResidualAddTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddConvAndResidual(graph, false);
        Op(graph, "Eltwise", "add", {"r", "conv"}, {EltwiseType(kSum)});
        Output(graph, "add");
      },
      FuseResidualAdd);
}

// ---- FuseInputScale --------------------------------------------------------

// A squeeze-and-excitation block's end: graph input "x" [batch, 6, 5, 4],
// its gate "s" [gate_batch, 1, 1, 4] (a graph input: the pass does not
// look at its producer), their product "mul" and a 1x1 Conv2D "conv" of
// it with kChannels channels (and bias "b" when `bias`).
void AddGatedConv(GraphBuilder *graph, bool bias, bool x_first = true,
                  int64_t batch = 1, int64_t gate_batch = 1) {
  Input(graph, "x", {batch, 6, 5, 4});
  Input(graph, "s", {gate_batch, 1, 1, 4});
  Op(graph, "Eltwise", "mul",
     x_first ? std::vector<std::string>{"x", "s"}
             : std::vector<std::string>{"s", "x"},
     {EltwiseType(kProd)});
  Constant(graph, "w", {kChannels, 1, 1, 4}, 51);
  std::vector<std::string> inputs = {"mul", "w"};
  if (bias) {
    Constant(graph, "b", {kChannels}, 52);
    inputs.push_back("b");
  }
  Op(graph, "Conv2D", "conv", inputs);
}

TEST(FuseInputScaleTest, TheConvReadsXAndTakesTheGateAfterItsBias) {
  for (bool bias : {true, false}) {
    for (bool x_first : {true, false}) {
      for (int64_t gate_batch : {1, 2}) {
        SCOPED_TRACE(std::string(bias ? "bias" : "no bias") +
                     (x_first ? ", x * s" : ", s * x") + ", gate batch " +
                     std::to_string(gate_batch));
        const NetDef net = ExpectRewrite(
            [&](GraphBuilder *graph) {
              AddGatedConv(graph, bias, x_first, 2, gate_batch);
              Output(graph, "conv");
            },
            {FuseInputScale}, {"Conv2D"});
        const OperatorDef &conv = OpAt(net, 0);
        ASSERT_EQ(conv.input_size(), 4);
        EXPECT_EQ(conv.input(0), "x");
        EXPECT_EQ(conv.input(3), "s");
        ExpectIntArg(net, 0, "input_scale", 1);
      }
    }
  }
}

// The gate goes after a fused PRELU's slope and before a fused addend,
// whichever fusion came first.
TEST(FuseInputScaleTest, KeepsTheSlopeBeforeAndTheAddendAfterTheGate) {
  const NetDef prelu = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddGatedConv(graph, true);
        Constant(graph, "slope", {kChannels}, 53);
        Op(graph, "Activation", "prelu", {"conv", "slope"},
           {OpArg::String("activation", "PRELU")});
        Output(graph, "prelu");
      },
      {FuseActivation, FuseInputScale}, {"Conv2D"});
  const OperatorDef &conv = OpAt(prelu, 0);
  ASSERT_EQ(conv.input_size(), 5);
  EXPECT_EQ(conv.input(3), "slope");
  EXPECT_EQ(conv.input(4), "s");
  for (bool add_first : {true, false}) {
    SCOPED_TRACE(add_first ? "addend fused first" : "gate fused first");
    const NetDef net = ExpectRewrite(
        [](GraphBuilder *graph) {
          AddGatedConv(graph, false);
          Input(graph, "r", {1, 6, 5, kChannels});
          Op(graph, "Eltwise", "add", {"conv", "r"}, {EltwiseType(kSum)});
          Op(graph, "Activation", "relu", {"add"},
             {OpArg::String("activation", "RELU")});
          Output(graph, "relu");
        },
        add_first ? std::vector<GraphPass>{FuseResidualAdd, FuseInputScale,
                                           FuseActivation}
                  : std::vector<GraphPass>{FuseInputScale, FuseResidualAdd,
                                           FuseActivation},
        {"Conv2D"});
    const OperatorDef &fused = OpAt(net, 0);
    ASSERT_EQ(fused.input_size(), 5);
    EXPECT_EQ(fused.input(0), "x");
    EXPECT_EQ(fused.input(3), "s");
    EXPECT_EQ(fused.input(4), "r");
    EXPECT_EQ(Activation(fused), "RELU");
  }
}

// Graph inputs "x" of `x_shape` and "s" of `s_shape`, Eltwise `type` of
// them, "w" [kChannels, 1, 1, 4] (constant, or a graph input when `fed`)
// and a Conv2D of the Eltwise with `conv_args`, the graph's output.
BuildFn GateThenConv(Shape x_shape, Shape s_shape, int64_t type = kProd,
                     bool fed = false, std::vector<OpArg> conv_args = {},
                     Shape w_shape = {kChannels, 1, 1, 4}) {
  return [=](GraphBuilder *graph) {
    Input(graph, "x", x_shape);
    Input(graph, "s", s_shape);
    Op(graph, "Eltwise", "gate", {"x", "s"}, {EltwiseType(type)});
    if (fed) {
      Input(graph, "w", w_shape);
    } else {
      Constant(graph, "w", w_shape, 51);
    }
    Op(graph, "Conv2D", "conv", {"gate", "w"}, conv_args);
    Output(graph, "conv");
  };
}

TEST(FuseInputScaleTest, SkipsOtherForms) {
  const Shape x = {1, 6, 5, 4}, gate = {1, 1, 1, 4};
  const std::vector<BuildFn> builds = {
      // A second reader of the product.
      [](GraphBuilder *graph) {
        AddGatedConv(graph, true);
        Output(graph, "conv");
        Output(graph, "mul");
      },
      // A 3x3 or grouped convolution; a filter fed at run time.
      GateThenConv(x, gate, kProd, false, {OpArg::Int("padding", 1)},
                   {kChannels, 3, 3, 4}),
      GateThenConv(x, gate, kProd, false, {OpArg::Int("group", 2)},
                   {kChannels, 1, 1, 2}),
      GateThenConv(x, gate, kProd, true),
      // A gate of x's shape, of a row, of another batch; a SUM; x of one
      // pixel.
      GateThenConv(x, x),
      GateThenConv(x, {1, 1, 5, 4}),
      GateThenConv(x, {2, 1, 1, 4}),
      GateThenConv(x, gate, kSum),
      GateThenConv(gate, gate),
      // The product also the conv's addend.
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 6, 5, 4});
        Input(graph, "s", {1, 1, 1, 4});
        Op(graph, "Eltwise", "mul", {"x", "s"}, {EltwiseType(kProd)});
        Constant(graph, "w", {4, 1, 1, 4}, 51);
        Constant(graph, "b", {4}, 52);
        Op(graph, "Conv2D", "conv", {"mul", "w", "b", "mul"},
           {OpArg::Int("fused_add", 1)});
        Output(graph, "conv");
      },
      // A scalar operand.
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 6, 5, 4});
        Op(graph, "Eltwise", "mul", {"x"},
           {EltwiseType(kProd), OpArg::Float("scalar_input", 2.0f)});
        Constant(graph, "w", {kChannels, 1, 1, 4}, 51);
        Op(graph, "Conv2D", "conv", {"mul", "w"});
        Output(graph, "conv");
      },
  };
  for (size_t i = 0; i < builds.size(); ++i) {
    SCOPED_TRACE("form " + std::to_string(i));
    ExpectUnchanged(builds[i], FuseInputScale);
  }
}

// A PRELU after the gated conv has no place before the gate.
TEST(FuseInputScaleTest, LaterPReluStaysAnActivation) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddGatedConv(graph, true);
        EXPECT_EQ(FuseInputScale(graph), MaceStatus::MACE_SUCCESS);
        Constant(graph, "slope", {kChannels}, 54);
        Op(graph, "Activation", "prelu", {"conv", "slope"},
           {OpArg::String("activation", "PRELU")});
        Output(graph, "prelu");
      },
      FuseActivation);
}

TEST(FuseInputScaleTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddGatedConv(graph, false, false);
        Output(graph, "conv");
      },
      FuseInputScale);
}

// ---- FuseGelu
// ----------------------------------------------------------------

OpArg ScalarInput(float value) { return OpArg::Float("scalar_input", value); }

// 0.5 * x * (1 + erf(x * `scale`)) on input "x" [2, 3, 16], the 0.5 applied
// last or (`half_first`) to x first, the scale as a division by `divisor`
// when it is not 0; the result is "gelu".
void AddDecomposedGelu(GraphBuilder *graph, bool half_first, float divisor,
                       float scale = 0.0f, float one = 1.0f) {
  Input(graph, "x", {2, 3, 16});
  if (divisor != 0.0f) {
    Op(graph, "Eltwise", "scaled", {"x"},
       {EltwiseType(kDiv), ScalarInput(divisor)});
  } else {
    Op(graph, "Eltwise", "scaled", {"x"},
       {EltwiseType(kProd), ScalarInput(scale)});
  }
  Op(graph, "Eltwise", "erf", {"scaled"}, {EltwiseType(19)});
  Op(graph, "Eltwise", "gate", {"erf"}, {EltwiseType(kSum), ScalarInput(one)});
  if (half_first) {
    Op(graph, "Eltwise", "half", {"x"},
       {EltwiseType(kProd), ScalarInput(0.5f)});
    Op(graph, "Eltwise", "gelu", {"half", "gate"}, {EltwiseType(kProd)});
  } else {
    Op(graph, "Eltwise", "product", {"gate", "x"}, {EltwiseType(kProd)});
    Op(graph, "Eltwise", "gelu", {"product"},
       {EltwiseType(kProd), ScalarInput(0.5f)});
  }
}

TEST(FuseGeluTest, FiveEltwiseOpsBecomeOneActivation) {
  for (bool half_first : {false, true}) {
    for (float divisor : {1.4142135f, 0.0f}) {
      SCOPED_TRACE(std::string(half_first ? "0.5 first" : "0.5 last") +
                   (divisor != 0.0f ? ", / sqrt 2" : ", * sqrt 0.5"));
      const NetDef net = ExpectRewrite(
          [&](GraphBuilder *graph) {
            AddDecomposedGelu(graph, half_first, divisor, 0.70710677f);
            Output(graph, "gelu");
          },
          {FuseGelu, RemoveDeadOps}, {"Activation"});
      EXPECT_EQ(Activation(OpAt(net, 0)), "GELU");
      EXPECT_EQ(OpAt(net, 0).input(0), "x");
    }
  }
}

TEST(FuseGeluTest, SkipsOtherConstantsAndSharedIntermediates) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddDecomposedGelu(graph, false, 1.5f);
        Output(graph, "gelu");
      },
      FuseGelu);
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddDecomposedGelu(graph, false, 1.4142135f, 0.0f, 2.0f);
        Output(graph, "gelu");
      },
      FuseGelu);
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddDecomposedGelu(graph, true, 1.4142135f);
        Output(graph, "gelu");
        Output(graph, "erf");
      },
      FuseGelu);
}

TEST(FuseGeluTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddDecomposedGelu(graph, false, 1.4142135f);
        Output(graph, "gelu");
      },
      FuseGelu);
}

// ---- MatMulToFullyConnected ------------------------------------------------

TEST(MatMulToFullyConnectedTest, RewritesAMatMulByAConstant) {
  for (bool transpose_b : {false, true}) {
    SCOPED_TRACE(transpose_b ? "transpose_b" : "plain");
    const NetDef net = ExpectRewrite(
        [&](GraphBuilder *graph) {
          Input(graph, "a", {3, 5});
          Constant(graph, "b", transpose_b ? Shape{4, 5} : Shape{5, 4}, 51);
          Op(graph, "MatMul", "mm", {"a", "b"},
             {OpArg::Int("transpose_b", transpose_b)});
          Output(graph, "mm");
        },
        {MatMulToFullyConnected}, {"FullyConnected"});
    EXPECT_EQ(Arg(OpAt(net, 0), "transpose_b"), nullptr);
  }
}

TEST(MatMulToFullyConnectedTest, ThenABiasAddFoldsIn) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "a", {3, 5});
        Constant(graph, "b", {5, 4}, 51);
        Constant(graph, "bias", {4}, 52);
        Op(graph, "MatMul", "mm", {"a", "b"});
        Op(graph, "Eltwise", "add", {"mm", "bias"}, {EltwiseType(kSum)});
        Output(graph, "add");
      },
      {MatMulToFullyConnected, FoldBiasIntoConv}, {"FullyConnected"});
}

TEST(MatMulToFullyConnectedTest, SkipsTransposeAAndBatchedOperands) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "a", {5, 3});
        Constant(graph, "b", {5, 4}, 51);
        Op(graph, "MatMul", "mm", {"a", "b"}, {OpArg::Int("transpose_a", 1)});
        Output(graph, "mm");
      },
      MatMulToFullyConnected);
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "a", {2, 3, 5});
        Constant(graph, "b", {5, 4}, 51);
        Op(graph, "MatMul", "mm", {"a", "b"});
        Output(graph, "mm");
      },
      MatMulToFullyConnected);
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "a", {3, 5});
        Input(graph, "b", {5, 4});
        Op(graph, "MatMul", "mm", {"a", "b"});
        Output(graph, "mm");
      },
      MatMulToFullyConnected);
}

TEST(MatMulToFullyConnectedTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        Input(graph, "a", {3, 5});
        Constant(graph, "b", {5, 4}, 51);
        Op(graph, "MatMul", "mm", {"a", "b"});
        Output(graph, "mm");
      },
      MatMulToFullyConnected);
}

// ---- FuseChannelShuffle ----------------------------------------------------

// x [1, 3, 4, 6] shuffled in `group` groups, channel last.
void AddChannelLastShuffle(GraphBuilder *graph, int64_t group) {
  Input(graph, "x", {1, 3, 4, 6});
  Op(graph, "Reshape", "split", {"x"},
     {OpArg::Ints("shape", {1, 3, 4, group, 6 / group})});
  Op(graph, "Transpose", "swap", {"split"},
     {OpArg::Ints("dims", {0, 1, 2, 4, 3})});
  Op(graph, "Reshape", "merge", {"swap"}, {OpArg::Ints("shape", {1, 3, 4, 6})});
}

// `source` [1, 3, 4, 6] (NHWC) → NCHW, shuffled there in `group` groups
// the way an ONNX model spells it, → NHWC.
void AddChannelFirstShuffle(GraphBuilder *graph, const std::string &source,
                            int64_t group) {
  Op(graph, "Transpose", "nchw", {source}, {OpArg::Ints("dims", {0, 3, 1, 2})});
  Op(graph, "Reshape", "split", {"nchw"},
     {OpArg::Ints("shape", {1, group, 6 / group, 3, 4})});
  Op(graph, "Transpose", "swap", {"split"},
     {OpArg::Ints("dims", {0, 2, 1, 3, 4})});
  Op(graph, "Reshape", "merge", {"swap"}, {OpArg::Ints("shape", {1, 6, 3, 4})});
  Op(graph, "Transpose", "nhwc", {"merge"},
     {OpArg::Ints("dims", {0, 2, 3, 1})});
}

TEST(FuseChannelShuffleTest, ChannelLastPatternIsChannelShuffle) {
  for (int64_t group : {2, 3}) {
    SCOPED_TRACE(group);
    const NetDef net = ExpectRewrite(
        [&](GraphBuilder *graph) {
          AddChannelLastShuffle(graph, group);
          Output(graph, "merge");
        },
        {FuseChannelShuffle}, {"ChannelShuffle"});
    ASSERT_NE(Arg(OpAt(net, 0), "group"), nullptr);
    EXPECT_EQ(Arg(OpAt(net, 0), "group")->i(), group);
  }
}

TEST(FuseChannelShuffleTest, ChannelFirstPatternBecomesChannelShuffle) {
  // Between two NHWC ops, as in a ShuffleNet unit.
  const BuildFn build = [](GraphBuilder *graph) {
    Input(graph, "x", {1, 3, 4, 6});
    Op(graph, "Activation", "before", {"x"},
       {OpArg::String("activation", "RELU")});
    AddChannelFirstShuffle(graph, "before", 2);
    Constant(graph, "w", {6, 1, 1, 6}, 71);
    Op(graph, "Conv2D", "after", {"nhwc", "w"});
    Output(graph, "after");
  };
  ExpectRewrite(build, {FuseChannelShuffle},
                {"Activation", "Transpose", "Transpose", "ChannelShuffle",
                 "Transpose", "Transpose", "Conv2D"});
  // The transpose passes cancel the transposes around it.
  const NetDef net = ExpectRewrite(build, {RunDefaultPasses},
                                   {"Activation", "ChannelShuffle", "Conv2D"});
  ASSERT_NE(Arg(OpAt(net, 1), "group"), nullptr);
  EXPECT_EQ(Arg(OpAt(net, 1), "group")->i(), 2);
}

TEST(FuseChannelShuffleTest, SkipsOtherPermutations) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 3, 4, 6});
        Op(graph, "Reshape", "split", {"x"},
           {OpArg::Ints("shape", {1, 3, 4, 2, 3})});
        Op(graph, "Transpose", "swap", {"split"},
           {OpArg::Ints("dims", {0, 2, 1, 3, 4})});
        Op(graph, "Reshape", "merge", {"swap"},
           {OpArg::Ints("shape", {1, 3, 4, 6})});
        Output(graph, "merge");
      },
      FuseChannelShuffle);
}

TEST(FuseChannelShuffleTest, SkipsAnIntermediateReadTwice) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddChannelLastShuffle(graph, 2);
        Output(graph, "merge");
        Output(graph, "swap");
      },
      FuseChannelShuffle);
}

TEST(FuseChannelShuffleTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 3, 4, 6});
        AddChannelFirstShuffle(graph, "x", 3);
        Output(graph, "nhwc");
      },
      FuseChannelShuffle);
}

// ---- FuseDepthToSpace ------------------------------------------------------

// A pixel shuffle by hand of x (block 2, 3 output channels, 4 x 5 pixels):
// the split shape and permutation of each of the four forms.
struct PixelShuffleForm {
  const char *mode;
  bool channel_first;
  std::vector<int64_t> split;
  std::vector<int64_t> perm;
};

const PixelShuffleForm kPixelShuffleForms[] = {
    {"CRD", true, {1, 3, 2, 2, 4, 5}, {0, 1, 4, 2, 5, 3}},
    {"DCR", true, {1, 2, 2, 3, 4, 5}, {0, 3, 4, 1, 5, 2}},
    {"DCR", false, {1, 4, 5, 2, 2, 3}, {0, 1, 3, 2, 4, 5}},
    {"CRD", false, {1, 4, 5, 3, 2, 2}, {0, 1, 4, 2, 5, 3}},
};

void AddPixelShuffle(GraphBuilder *graph, const PixelShuffleForm &form) {
  Input(graph, "x",
        form.channel_first ? Shape{1, 12, 4, 5} : Shape{1, 4, 5, 12});
  Op(graph, "Reshape", "split", {"x"}, {OpArg::Ints("shape", form.split)});
  Op(graph, "Transpose", "move", {"split"}, {OpArg::Ints("dims", form.perm)});
  Op(graph, "Reshape", "merge", {"move"},
     {OpArg::Ints("shape", form.channel_first
                               ? std::vector<int64_t>{1, 3, 8, 10}
                               : std::vector<int64_t>{1, 8, 10, 3})});
  Output(graph, "merge");
}

// Each form computes what DepthToSpace of its mode does (ExpectRewrite runs
// the graph before and after); the channel-first ones between transposes.
TEST(FuseDepthToSpaceTest, EveryFormBecomesDepthToSpace) {
  for (const PixelShuffleForm &form : kPixelShuffleForms) {
    SCOPED_TRACE(std::string(form.mode) +
                 (form.channel_first ? " channel first" : " channel last"));
    const NetDef net = ExpectRewrite(
        [&](GraphBuilder *graph) { AddPixelShuffle(graph, form); },
        {FuseDepthToSpace},
        form.channel_first
            ? std::vector<std::string>{"Transpose", "DepthToSpace", "Transpose"}
            : std::vector<std::string>{"DepthToSpace"});
    const int op = form.channel_first ? 1 : 0;
    ExpectIntArg(net, op, "block_size", 2);
    const Argument *mode = Arg(OpAt(net, op), "mode");
    ASSERT_NE(mode, nullptr);
    EXPECT_EQ(mode->s(), form.mode);
  }
}

// A permutation that is no pixel shuffle (H and W blocks swapped) stays.
TEST(FuseDepthToSpaceTest, SkipsOtherPermutations) {
  PixelShuffleForm other = kPixelShuffleForms[0];
  other.perm = {0, 1, 5, 2, 4, 3};
  ExpectUnchanged([&](GraphBuilder *graph) { AddPixelShuffle(graph, other); },
                  FuseDepthToSpace);
}

// ---- FoldTransposeIntoFullyConnected ---------------------------------------

// x [2, 3, 4, 5] → NCHW → (reshape to [2, 60] when `reshape`) → fc [7].
void AddNchwFlatten(GraphBuilder *graph, bool reshape) {
  Input(graph, "x", {2, 3, 4, 5});
  Op(graph, "Transpose", "nchw", {"x"}, {OpArg::Ints("dims", {0, 3, 1, 2})});
  if (reshape) {
    Op(graph, "Reshape", "flat", {"nchw"}, {OpArg::Ints("shape", {2, 60})});
  }
  Constant(graph, "w", {7, 60}, 61);
  Constant(graph, "b", {7}, 62);
  Op(graph, "FullyConnected", "fc", {reshape ? "flat" : "nchw", "w", "b"});
}

TEST(FoldTransposeIntoFullyConnectedTest, ReordersTheWeightColumns) {
  for (bool reshape : {true, false}) {
    SCOPED_TRACE(reshape ? "through a reshape" : "direct");
    const NetDef net = ExpectRewrite(
        [&](GraphBuilder *graph) {
          AddNchwFlatten(graph, reshape);
          Output(graph, "fc");
        },
        {FoldTransposeIntoFullyConnected}, {"FullyConnected"});
    EXPECT_EQ(OpAt(net, 0).input(0), "x");
  }
}

TEST(FoldTransposeIntoFullyConnectedTest, SkipsATransposeReadElsewhere) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddNchwFlatten(graph, true);
        Output(graph, "fc");
        Output(graph, "nchw");
      },
      FoldTransposeIntoFullyConnected);
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddNchwFlatten(graph, true);
        Op(graph, "Activation", "act", {"flat"},
           {OpArg::String("activation", "RELU")});
        Output(graph, "fc");
        Output(graph, "act");
      },
      FoldTransposeIntoFullyConnected);
}

TEST(FoldTransposeIntoFullyConnectedTest, SkipsOtherPermutations) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 3, 4, 5});
        Op(graph, "Transpose", "t", {"x"}, {OpArg::Ints("dims", {0, 3, 2, 1})});
        Op(graph, "Reshape", "flat", {"t"}, {OpArg::Ints("shape", {2, 60})});
        Constant(graph, "w", {7, 60}, 61);
        Op(graph, "FullyConnected", "fc", {"flat", "w"});
        Output(graph, "fc");
      },
      FoldTransposeIntoFullyConnected);
}

TEST(FoldTransposeIntoFullyConnectedTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddNchwFlatten(graph, true);
        Output(graph, "fc");
      },
      FoldTransposeIntoFullyConnected);
}

// ---- RemoveDeadOps and the default pipeline --------------------------------

TEST(RemoveDeadOpsTest, DropsOpsNoOutputNeeds) {
  GraphBuilder graph;
  AddWeighted(&graph, "Conv2D", "conv", true);
  Op(&graph, "Activation", "unused", {"conv"},
     {OpArg::String("activation", "RELU")});
  Output(&graph, "conv");
  ASSERT_EQ(RemoveDeadOps(&graph), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(graph.ops().size(), 1u);
  EXPECT_EQ(graph.ops()[0].type(), "Conv2D");
}

TEST(DefaultPassesTest, FusesAConvWrappedInLayoutTransposes) {
  // An ONNX-style Conv → BatchNorm → Relu: each NHWC op between transposes
  // to and from NCHW, the activation on NCHW data.
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", false);
        Op(graph, "Transpose", "t1", {"conv"},
           {OpArg::Ints("dims", {0, 3, 1, 2})});
        Op(graph, "Transpose", "t2", {"t1"},
           {OpArg::Ints("dims", {0, 2, 3, 1})});
        AddBatchNorm(graph, "bn", "t2", true);
        Op(graph, "Transpose", "t3", {"bn"},
           {OpArg::Ints("dims", {0, 3, 1, 2})});
        Op(graph, "Activation", "relu", {"t3"},
           {OpArg::String("activation", "RELU")});
        Output(graph, "relu");
      },
      {RunDefaultPasses}, {"Conv2D", "Transpose"});
  EXPECT_EQ(Activation(OpAt(net, 0)), "RELU");
}

// ---- swish ------------------------------------------------------------------

// x * gate(x) with `gate_args` the gate Activation's arguments; the product
// reads (x, gate) or (gate, x).
void AddGatedProduct(GraphBuilder *graph, const std::vector<OpArg> &gate_args,
                     bool gate_first) {
  Input(graph, "x", {1, 4, 5, 6});
  Op(graph, "Activation", "gate", {"x"}, gate_args);
  Op(graph, "Eltwise", "mul",
     gate_first ? std::vector<std::string>{"gate", "x"}
                : std::vector<std::string>{"x", "gate"},
     {OpArg::Int("type", 2)});
}

TEST(FuseSwishTest, ProductWithSigmoidIsSwish) {
  for (bool gate_first : {false, true}) {
    const NetDef net = ExpectRewrite(
        [gate_first](GraphBuilder *graph) {
          AddGatedProduct(graph, {OpArg::String("activation", "SIGMOID")},
                          gate_first);
          Output(graph, "mul");
        },
        {FuseSwish, RemoveDeadOps}, {"Activation"});
    EXPECT_EQ(Activation(OpAt(net, 0)), "SWISH");
  }
}

TEST(FuseSwishTest, ProductWithTheSixthHardSigmoidIsHardSwish) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddGatedProduct(graph,
                        {OpArg::String("activation", "HARDSIGMOID"),
                         OpArg::Float("hardsigmoid_alpha", 1.0f / 6),
                         OpArg::Float("hardsigmoid_beta", 0.5f)},
                        false);
        Output(graph, "mul");
      },
      {FuseSwish, RemoveDeadOps}, {"Activation"});
  EXPECT_EQ(Activation(OpAt(net, 0)), "HARDSWISH");
}

TEST(FuseSwishTest, SkipsOtherHardSigmoidsAndASharedGate) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddGatedProduct(graph, {OpArg::String("activation", "HARDSIGMOID")},
                        false);  // alpha 0.2: no fused form
        Output(graph, "mul");
      },
      FuseSwish);
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddGatedProduct(graph, {OpArg::String("activation", "SIGMOID")}, false);
        Output(graph, "mul");
        Output(graph, "gate");  // the gate's value stays visible
      },
      FuseSwish);
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 6});
        Input(graph, "z", {1, 4, 5, 6});
        Op(graph, "Activation", "gate", {"z"},
           {OpArg::String("activation", "SIGMOID")});
        Op(graph, "Eltwise", "mul", {"x", "gate"}, {OpArg::Int("type", 2)});
        Output(graph, "mul");
      },
      FuseSwish);  // the gate reads another tensor
}

// ---- transpose and reshape passes ------------------------------------------

const std::vector<int64_t> kToNchw = {0, 3, 1, 2};
const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};

void Transpose(GraphBuilder *graph, const std::string &name,
               const std::string &input, const std::vector<int64_t> &perm) {
  Op(graph, "Transpose", name, {input}, {OpArg::Ints("dims", perm)});
}

void Tanh(GraphBuilder *graph, const std::string &name,
          const std::string &input) {
  Op(graph, "Activation", name, {input}, {OpArg::String("activation", "TANH")});
}

// Cleans up after a transpose pass so the op list shows its effect.
MaceStatus CleanUp(GraphBuilder *graph) {
  MACE_RETURN_IF_ERROR(SimplifyReshapes(graph));
  return RemoveDeadOps(graph);
}

TEST(CancelTransposesTest, InversePairDisappears) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Transpose(graph, "t1", "x", kToNchw);
        Transpose(graph, "t2", "t1", kToNhwc);
        Tanh(graph, "y", "t2");
        Output(graph, "y");
      },
      {CancelTransposes, CleanUp}, {"Activation"});
}

TEST(CancelTransposesTest, NonInversePairBecomesOneTranspose) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 3, 4});
        Transpose(graph, "t1", "x", {1, 0, 2});
        Transpose(graph, "t2", "t1", {0, 2, 1});
        Output(graph, "t2");
      },
      {CancelTransposes, CleanUp}, {"Transpose"});
  ExpectIntsArg(net, 0, "dims", {1, 2, 0});
}

// A graph input read by two NHWC ops, each wrapped in its own transpose
// by the frontend: one transpose serves both.
TEST(CancelTransposesTest, TransposesOfOneTensorByOnePermutationMerge) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Transpose(graph, "t1", "x", kToNchw);
        Transpose(graph, "t2", "x", kToNchw);
        Transpose(graph, "t3", "x", {0, 3, 2, 1});
        Tanh(graph, "a", "t1");
        Tanh(graph, "b", "t2");
        Tanh(graph, "c", "t3");
        Output(graph, "a");
        Output(graph, "b");
        Output(graph, "c");
      },
      {CancelTransposes, CleanUp},
      {"Transpose", "Transpose", "Activation", "Activation", "Activation"});
}

TEST(CancelTransposesTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Transpose(graph, "t1", "x", kToNchw);
        Transpose(graph, "t2", "t1", kToNhwc);
        Tanh(graph, "y", "t2");
        Output(graph, "y");
      },
      CancelTransposes);
}

TEST(SinkTransposesTest, TransposeMovesBelowAnActivationAndCancels) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Transpose(graph, "t1", "x", kToNchw);
        Tanh(graph, "act", "t1");
        Transpose(graph, "t2", "act", kToNhwc);
        Tanh(graph, "y", "t2");
        Output(graph, "y");
      },
      {SinkTransposes, CancelTransposes, CleanUp},
      {"Activation", "Activation"});
}

TEST(SinkTransposesTest, ConstantOperandIsLaidOutForTheUntransposedTensor) {
  // A per-channel constant [3,1,1] broadcast on NCHW data becomes [1,1,1,3]
  // on the NHWC data once the transpose sinks.
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Constant(graph, "c", {3, 1, 1}, 31);
        Transpose(graph, "t1", "x", kToNchw);
        Op(graph, "Eltwise", "sum", {"t1", "c"}, {OpArg::Int("type", 0)});
        Transpose(graph, "t2", "sum", kToNhwc);
        Tanh(graph, "y", "t2");
        Output(graph, "y");
      },
      {SinkTransposes, CancelTransposes, CleanUp}, {"Eltwise", "Activation"});
}

TEST(SinkTransposesTest, ConcatOfEquallyTransposedInputsTakesTheMappedAxis) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "a", {1, 4, 5, 3});
        Input(graph, "b", {1, 4, 5, 2});
        Transpose(graph, "ta", "a", kToNchw);
        Transpose(graph, "tb", "b", kToNchw);
        Op(graph, "Concat", "cat", {"ta", "tb"}, {OpArg::Int("axis", 1)});
        Transpose(graph, "t2", "cat", kToNhwc);
        Tanh(graph, "y", "t2");
        Output(graph, "y");
      },
      {SinkTransposes, CancelTransposes, CleanUp}, {"Concat", "Activation"});
  ExpectIntArg(net, 0, "axis", 3);
}

TEST(SinkTransposesTest, LeavesATransposeWithSeveralReaders) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Transpose(graph, "t1", "x", kToNchw);
        Tanh(graph, "a", "t1");
        Tanh(graph, "b", "t1");
        Output(graph, "a");
        Output(graph, "b");
      },
      SinkTransposes);
}

// DenseNet's blocks: every feature (an NHWC op's output transposed back
// to NCHW) is read by each later concat, and each concat's output only by
// the transpose to NHWC of the next layer. All the concats sink and every
// transpose cancels, though no input transpose has a single reader.
TEST(SinkTransposesTest, ConcatChainOverSharedFeaturesLosesEveryTranspose) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Tanh(graph, "f0", "x");
        Transpose(graph, "f0_nchw", "f0", kToNchw);
        Op(graph, "Concat", "cat1", {"f0_nchw"}, {OpArg::Int("axis", 1)});
        Transpose(graph, "cat1_nhwc", "cat1", kToNhwc);
        Tanh(graph, "f1", "cat1_nhwc");
        Transpose(graph, "f1_nchw", "f1", kToNchw);
        Op(graph, "Concat", "cat2", {"f0_nchw", "f1_nchw"},
           {OpArg::Int("axis", 1)});
        Transpose(graph, "cat2_nhwc", "cat2", kToNhwc);
        Tanh(graph, "f2", "cat2_nhwc");
        Transpose(graph, "f2_nchw", "f2", kToNchw);
        Op(graph, "Concat", "cat3", {"f0_nchw", "f1_nchw", "f2_nchw"},
           {OpArg::Int("axis", 1)});
        Transpose(graph, "cat3_nhwc", "cat3", kToNhwc);
        Tanh(graph, "y", "cat3_nhwc");
        Output(graph, "y");
      },
      {SinkTransposes, CancelTransposes, CleanUp},
      {"Activation", "Concat", "Activation", "Concat", "Activation", "Concat",
       "Activation"});
}

// Inception's average pools: an ONNX Pad on NCHW data between layout
// transposes becomes a Pad of the NHWC data with its paddings permuted.
TEST(SinkTransposesTest, PadMovesBelowWithItsPaddingsPermuted) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Transpose(graph, "t1", "x", kToNchw);
        Op(graph, "Pad", "pad", {"t1"},
           {OpArg::Ints("paddings", {0, 0, 0, 0, 1, 2, 3, 0})});
        Transpose(graph, "t2", "pad", kToNhwc);
        Tanh(graph, "y", "t2");
        Output(graph, "y");
      },
      {SinkTransposes, CancelTransposes, CleanUp}, {"Pad", "Activation"});
  ExpectIntsArg(net, 0, "paddings", {0, 0, 1, 2, 3, 0, 0, 0});
}

// ShuffleNetV2's split: two Slices of the channel axis of an NCHW tensor
// read a shared transpose; each becomes a Slice of the NHWC tensor's last
// axis (explicit axes or ONNX's default ones) and the transposes cancel.
TEST(SinkTransposesTest, SlicesMoveBelowWithTheirAxesMapped) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 6});
        Transpose(graph, "t", "x", kToNchw);
        Op(graph, "Slice", "low", {"t"},
           {OpArg::Ints("starts", {0}), OpArg::Ints("ends", {3}),
            OpArg::Ints("axes", {-3})});
        Op(graph, "Slice", "high", {"t"},
           {OpArg::Ints("starts", {0, 3}), OpArg::Ints("ends", {1, 6})});
        Transpose(graph, "low_nhwc", "low", kToNhwc);
        Transpose(graph, "high_nhwc", "high", kToNhwc);
        Tanh(graph, "a", "low_nhwc");
        Tanh(graph, "b", "high_nhwc");
        Output(graph, "a");
        Output(graph, "b");
      },
      {SinkTransposes, CancelTransposes, SinkTransposes, CancelTransposes,
       CleanUp},
      {"Slice", "Slice", "Activation", "Activation"});
  ExpectIntsArg(net, 0, "axes", {3});
  ExpectIntsArg(net, 1, "axes", {0, 3});
}

void Split(GraphBuilder *graph, const std::string &input,
           const std::vector<std::string> &outputs,
           const std::vector<OpArg> &args) {
  const MaceStatus status =
      graph->AddOp("Split", outputs[0] + "_split", {input}, outputs, args);
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
}

// ShuffleNetV2's split as torch.split or tf.split exports it: one Split of
// the channel axis of an NCHW tensor, each output taken back to NHWC. The
// Split reads the NHWC tensor along its last axis and every transpose
// cancels.
TEST(SinkTransposesTest, SplitMovesBelowWithItsAxisMapped) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 6});
        Transpose(graph, "t", "x", kToNchw);
        Split(graph, "t", {"low", "high"},
              {OpArg::Int("axis", 1), OpArg::Ints("split", {2, 4})});
        Transpose(graph, "low_nhwc", "low", kToNhwc);
        Transpose(graph, "high_nhwc", "high", kToNhwc);
        Tanh(graph, "a", "low_nhwc");
        Tanh(graph, "b", "high_nhwc");
        Output(graph, "a");
        Output(graph, "b");
      },
      {SinkTransposes, CancelTransposes, CleanUp},
      {"Split", "Activation", "Activation"});
  ExpectIntArg(net, 0, "axis", 3);
}

// A Split on its default axis 0 that the transpose moves (to 1), its
// outputs graph outputs: each gets a transpose of its own.
TEST(SinkTransposesTest, SplitOnTheDefaultAxisGetsTheMovedAxis) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {4, 2, 6});
        Transpose(graph, "t", "x", {1, 0, 2});
        Split(graph, "t", {"first", "second"}, {});
        Output(graph, "first");
        Output(graph, "second");
      },
      {SinkTransposes, CleanUp}, {"Split", "Transpose", "Transpose"});
  ExpectIntArg(net, 0, "axis", 1);
}

// ShuffleNetV2's pooling, x.mean([2, 3]) on NCHW data: the Reduce reads
// the NHWC tensor over H and W, and its [N, C] output needs no transpose.
TEST(SinkTransposesTest, ReduceOverTheSpatialAxesLosesItsTranspose) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 6});
        Transpose(graph, "t", "x", kToNchw);
        Op(graph, "Reduce", "mean", {"t"},
           {OpArg::Ints("axis", {2, -1}), OpArg::Int("keepdims", 0)});
        Output(graph, "mean");
      },
      {SinkTransposes, CleanUp}, {"Reduce"});
  ExpectIntsArg(net, 0, "axis", {1, 2});
}

// Keeping its dims, a Reduce moves like an elementwise op and the
// transposes cancel; dropping the batch dim of NCHW data would leave
// C, H, W as H, W, C, so that one stays.
TEST(SinkTransposesTest, ReduceKeepingDimsMovesAndOneReorderingStays) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 6});
        Transpose(graph, "t", "x", kToNchw);
        Op(graph, "Reduce", "max", {"t"},
           {OpArg::Ints("axis", {1}), OpArg::Int("keepdims", 1),
            OpArg::Int("reduce_type", 2)});
        Transpose(graph, "back", "max", kToNhwc);
        Tanh(graph, "y", "back");
        Output(graph, "y");
      },
      {SinkTransposes, CancelTransposes, CleanUp}, {"Reduce", "Activation"});
  ExpectIntsArg(net, 0, "axis", {3});
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 4, 5, 6});
        Transpose(graph, "t", "x", kToNchw);
        Op(graph, "Reduce", "sum", {"t"},
           {OpArg::Ints("axis", {0}), OpArg::Int("keepdims", 0),
            OpArg::Int("reduce_type", 4)});
        Output(graph, "sum");
      },
      SinkTransposes);
}

// A segmentation head's softmax over the channels of NCHW data, and one
// on the default last axis (W there): each reads the NHWC tensor along
// the mapped axis and the transposes cancel.
TEST(SinkTransposesTest, SoftmaxMovesBelowWithItsAxisMapped) {
  for (const auto &[args, mapped] :
       std::vector<std::pair<std::vector<OpArg>, int64_t>>{
           {{OpArg::Int("axis", 1)}, 3}, {{}, 2}}) {
    const NetDef net = ExpectRewrite(
        [args = args](GraphBuilder *graph) {
          Input(graph, "x", {1, 4, 5, 6});
          Transpose(graph, "t", "x", kToNchw);
          Op(graph, "Softmax", "prob", {"t"}, args);
          Transpose(graph, "back", "prob", kToNhwc);
          Tanh(graph, "y", "back");
          Output(graph, "y");
        },
        {SinkTransposes, CancelTransposes, CleanUp}, {"Softmax", "Activation"});
    ExpectIntArg(net, 0, "axis", mapped);
  }
}

// ArgMax over the channels of NCHW data: keeping the axis, a transpose
// follows it (to cancel with the next op's); dropping it, N, H, W come out
// in order and none does.
TEST(SinkTransposesTest, ArgMaxMovesBelowWithItsAxisMapped) {
  for (int keepdims : {1, 0}) {
    const NetDef net = ExpectRewrite(
        [keepdims](GraphBuilder *graph) {
          Input(graph, "x", {1, 4, 5, 6});
          Transpose(graph, "t", "x", kToNchw);
          Op(graph, "ArgMax", "index", {"t"},
             {OpArg::Int("axis", 1), OpArg::Int("keepdims", keepdims)});
          Output(graph, "index");
        },
        {SinkTransposes, CleanUp},
        keepdims ? std::vector<std::string>{"ArgMax", "Transpose"}
                 : std::vector<std::string>{"ArgMax"});
    ExpectIntArg(net, 0, "axis", 3);
  }
}

// Channels reordered by a Gather of constant indices on NCHW data: it
// gathers along the NHWC tensor's last axis and the transposes cancel. A
// scalar index (which drops the axis) leaves it where it is.
TEST(SinkTransposesTest, GatherOfChannelsMovesBelowWithItsAxisMapped) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Transpose(graph, "t", "x", kToNchw);
        ConstantInts(graph, "idx", {3}, {2, 0, 1});
        Op(graph, "Gather", "bgr", {"t", "idx"}, {OpArg::Int("axis", 1)});
        Transpose(graph, "back", "bgr", kToNhwc);
        Tanh(graph, "y", "back");
        Output(graph, "y");
      },
      {SinkTransposes, CancelTransposes, CleanUp}, {"Gather", "Activation"});
  ExpectIntArg(net, 0, "axis", 3);
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Transpose(graph, "t", "x", kToNchw);
        ConstantInts(graph, "idx", {}, {1});
        Op(graph, "Gather", "one", {"t", "idx"}, {OpArg::Int("axis", 1)});
        Output(graph, "one");
      },
      SinkTransposes);
}

// A squeeze-excitation scale: [N,1,1,C] brought to NCHW is a Reshape (a
// transpose of unit dims), multiplied with the transposed feature map. The
// product sinks through both and reads the NHWC tensors.
TEST(SinkTransposesTest, ReshapeThatMovesOnlyUnitDimsCountsAsTheTranspose) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Input(graph, "s", {1, 1, 1, 3});
        Transpose(graph, "tx", "x", kToNchw);
        Op(graph, "Reshape", "ts", {"s"}, {OpArg::Ints("shape", {1, 3, 1, 1})});
        Op(graph, "Eltwise", "scaled", {"ts", "tx"}, {OpArg::Int("type", 2)});
        Transpose(graph, "back", "scaled", kToNhwc);
        Tanh(graph, "y", "back");
        Output(graph, "y");
      },
      {SinkTransposes, CancelTransposes, CleanUp}, {"Eltwise", "Activation"});
  // A reshape that reorders real dims is not a transpose.
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 2, 3, 6});
        Input(graph, "s", {1, 6, 2, 3});
        Transpose(graph, "tx", "x", kToNchw);
        Op(graph, "Reshape", "ts", {"s"}, {OpArg::Ints("shape", {1, 6, 2, 3})});
        Op(graph, "Eltwise", "sum", {"ts", "tx"}, {OpArg::Int("type", 0)});
        Output(graph, "sum");
      },
      SinkTransposes);
}

// A CReLU, concat(x, -x): x's transpose feeds the Neg and the Concat, and
// the Neg's output the Concat. The region they make ends in a transpose,
// so both sink it one after the other and every transpose cancels.
TEST(SinkTransposesTest, XJoinedWithAFunctionOfXLosesEveryTranspose) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {1, 4, 5, 3});
        Transpose(graph, "t", "x", kToNchw);
        Op(graph, "Eltwise", "neg", {"t"}, {OpArg::Int("type", 6)});
        Op(graph, "Concat", "cat", {"t", "neg"}, {OpArg::Int("axis", 1)});
        Transpose(graph, "back", "cat", kToNhwc);
        Tanh(graph, "y", "back");
        Output(graph, "y");
      },
      {SinkTransposes, CancelTransposes, SinkTransposes, CancelTransposes,
       CleanUp},
      {"Eltwise", "Concat", "Activation"});
}

// A shared input transpose stays for its other readers, so sinking the op
// would add a transpose unless its output feeds only transposes.
TEST(SinkTransposesTest, LeavesASharedTransposeWhenTheOutputFeedsOtherOps) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "a", {1, 4, 5, 3});
        Input(graph, "b", {1, 4, 5, 2});
        Transpose(graph, "ta", "a", kToNchw);
        Transpose(graph, "tb", "b", kToNchw);
        Op(graph, "Concat", "cat", {"ta", "tb"}, {OpArg::Int("axis", 1)});
        Tanh(graph, "y", "cat");
        Tanh(graph, "z", "ta");
        Output(graph, "y");
        Output(graph, "z");
      },
      SinkTransposes);
}

TEST(TransposeToReshapeTest, MovingOnlyUnitDimsIsAReshape) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 1, 1, 8});
        Transpose(graph, "t", "x", kToNchw);
        Output(graph, "t");
      },
      {TransposeToReshape}, {"Reshape"});
}

TEST(TransposeToReshapeTest, LeavesATransposeThatMovesData) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 3, 1, 8});
        Transpose(graph, "t", "x", kToNchw);
        Output(graph, "t");
      },
      TransposeToReshape);
}

TEST(SimplifyReshapesTest, ReshapeOfReshapeIsOneReshape) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 3, 4});
        Op(graph, "Reshape", "r1", {"x"}, {OpArg::Ints("shape", {6, 4})});
        Op(graph, "Reshape", "r2", {"r1"}, {OpArg::Ints("shape", {4, 6})});
        Tanh(graph, "y", "r2");
        Output(graph, "y");
      },
      {SimplifyReshapes, RemoveDeadOps}, {"Reshape", "Activation"});
}

TEST(SimplifyReshapesTest, IdentityAndSameShapeReshapeDisappear) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 3});
        Op(graph, "Identity", "i", {"x"});
        Tanh(graph, "a", "i");
        Op(graph, "Reshape", "r", {"a"}, {OpArg::Ints("shape", {2, 3})});
        Tanh(graph, "y", "r");
        Output(graph, "y");
      },
      {SimplifyReshapes, RemoveDeadOps}, {"Activation", "Activation"});
}

TEST(DefaultPassesTest, AreIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "Conv2D", "conv", true);
        Transpose(graph, "t1", "conv", kToNchw);
        Tanh(graph, "act", "t1");
        Transpose(graph, "t2", "act", kToNhwc);
        AddBatchNorm(graph, "bn", "t2", true);
        Output(graph, "bn");
      },
      RunDefaultPasses);
}

// ---- FuseActivation: PRELU -------------------------------------------------

const std::vector<OpArg> kPRelu = {OpArg::String("activation", "PRELU")};

// Adds constant "slope" of `size` values and Activation PRELU "act" of
// `input`, the graph output.
void AddPRelu(GraphBuilder *graph, const std::string &input, int64_t size) {
  Constant(graph, "slope", {size}, 31, -0.5f, 0.5f);
  Op(graph, "Activation", "act", {input, "slope"}, kPRelu);
  Output(graph, "act");
}

TEST(FuseActivationTest, FusesPReluIntoEachWeightedOpType) {
  for (const char *type : {"Conv2D", "DepthwiseConv2d", "Deconv2D",
                           "DepthwiseDeconv2d", "FullyConnected"}) {
    for (bool bias : {true, false}) {
      for (int64_t slope_size : {kChannels, int64_t{1}}) {
        SCOPED_TRACE(std::string(type) + (bias ? " with bias" : "") +
                     ", slope size " + std::to_string(slope_size));
        const NetDef net = ExpectRewrite(
            [&](GraphBuilder *graph) {
              AddWeighted(graph, type, "conv", bias);
              AddPRelu(graph, "conv", slope_size);
            },
            {FuseActivation}, {std::string(type)});
        const OperatorDef &op = OpAt(net, 0);
        EXPECT_EQ(Activation(op), "PRELU");
        EXPECT_EQ(op.output(0), "act");
        // x, filter, bias (a zero constant when there was none), slope.
        ASSERT_EQ(op.input_size(), 4);
        if (bias) {
          EXPECT_EQ(op.input(2), "b");
        }
        EXPECT_EQ(op.input(3), "slope");
      }
    }
  }
}

TEST(FuseActivationTest, FusesPReluAfterATfDeconvOutputShape) {
  for (bool bias : {true, false}) {
    SCOPED_TRACE(bias ? "with bias" : "without bias");
    const NetDef net = ExpectRewrite(
        [&](GraphBuilder *graph) {
          Input(graph, "x", {1, 3, 5, 4});
          Constant(graph, "w", {kChannels, 3, 3, 4}, 11);
          graph->AddConstantInt("shape", {4}, {1, 5, 9, kChannels});
          std::vector<std::string> inputs = {"x", "w", "shape"};
          if (bias) {
            Constant(graph, "b", {kChannels}, 12);
            inputs.push_back("b");
          }
          Op(graph, "Deconv2D", "deconv", inputs,
             {OpArg::Ints("strides", {2, 2}), OpArg::Int("padding", 1)});
          AddPRelu(graph, "deconv", kChannels);
        },
        {FuseActivation}, {"Deconv2D"});
    const OperatorDef &op = OpAt(net, 0);
    ASSERT_EQ(op.input_size(), 5);  // x, filter, output_shape, bias, slope
    EXPECT_EQ(op.input(2), "shape");
    EXPECT_EQ(op.input(4), "slope");
  }
}

TEST(FuseActivationTest, FusesPReluIntoBatchNorm) {
  for (bool with_statistics : {true, false}) {
    for (int64_t slope_size : {kChannels, int64_t{1}}) {
      SCOPED_TRACE(std::string(with_statistics ? "statistics" : "folded") +
                   ", slope size " + std::to_string(slope_size));
      const NetDef net = ExpectRewrite(
          [&](GraphBuilder *graph) {
            Input(graph, "x", {2, 3, 4, kChannels});
            AddBatchNorm(graph, "bn", "x", with_statistics);
            AddPRelu(graph, "bn", slope_size);
          },
          {FuseActivation}, {"BatchNorm"});
      const OperatorDef &op = OpAt(net, 0);
      EXPECT_EQ(Activation(op), "PRELU");
      ASSERT_EQ(op.input_size(), with_statistics ? 6 : 4);
      EXPECT_EQ(op.input(op.input_size() - 1), "slope");
    }
  }
}

TEST(FuseActivationTest, LeavesAPReluWhoseSlopeIsNotConstant) {
  for (const char *type : {"DepthwiseConv2d", "BatchNorm"}) {
    SCOPED_TRACE(type);
    ExpectUnchanged(
        [&](GraphBuilder *graph) {
          if (std::string(type) == "BatchNorm") {
            Input(graph, "x", {2, 3, 4, kChannels});
            AddBatchNorm(graph, "op", "x", false);
          } else {
            AddWeighted(graph, type, "op", true);
          }
          Input(graph, "slope", {kChannels});
          Op(graph, "Activation", "act", {"op", "slope"}, kPRelu);
          Output(graph, "act");
        },
        FuseActivation);
  }
}

TEST(FuseActivationTest, LeavesAPReluAfterOpsWithoutASlopeInput) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, kChannels});
        Constant(graph, "b", {kChannels}, 12);
        Op(graph, "BiasAdd", "add", {"x", "b"});
        AddPRelu(graph, "add", kChannels);
      },
      FuseActivation);
}

TEST(FuseActivationTest, LeavesAPReluAfterAnOpWithAnActivation) {
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        Input(graph, "x", {2, 3, 4, kChannels});
        AddBatchNorm(graph, "bn", "x", false,
                     {OpArg::String("activation", "RELU")});
        AddPRelu(graph, "bn", kChannels);
      },
      FuseActivation);
}

// ---- FusePad ----------------------------------------------------------------

// Graph input "x" [1, 7, 6, kChannels], a Pad "pad" of it with `paddings`
// (NHWC, before / after per dim) and `pad_args`, and `type` "op" reading
// the Pad with `op_args`, the graph's output: Pooling 3x3 stride 1, Conv2D
// 3x3 to kChannels or DepthwiseConv2d 3x3.
void AddPadThen(GraphBuilder *graph, const std::vector<int64_t> &paddings,
                const std::vector<OpArg> &pad_args, const std::string &type,
                std::vector<OpArg> op_args) {
  Input(graph, "x", {1, 7, 6, kChannels});
  std::vector<OpArg> args = {OpArg::Ints("paddings", paddings)};
  args.insert(args.end(), pad_args.begin(), pad_args.end());
  Op(graph, "Pad", "pad", {"x"}, args);
  std::vector<std::string> inputs = {"pad"};
  if (type == "Pooling") {
    op_args.push_back(OpArg::Ints("kernels", {3, 3}));
  } else if (type == "Conv2D") {
    Constant(graph, "w", {kChannels, 3, 3, kChannels}, 31);
    inputs.push_back("w");
  } else {
    Constant(graph, "w", {3, 3, kChannels, 1}, 31);
    inputs.push_back("w");
  }
  Op(graph, type, "op", inputs, op_args);
  Output(graph, "op");
}

const std::vector<int64_t> kSpatialPads = {0, 0, 1, 2, 2, 1, 0, 0};

TEST(FusePadTest, FusesZerosIntoAnAveragePoolCountingThem) {
  const NetDef net = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddPadThen(graph, kSpatialPads, {}, "Pooling",
                   {OpArg::Int("pooling_type", 1)});
      },
      {FusePad}, {"Pooling"});
  ExpectIntsArg(net, 0, "padding_values", {1, 2, 2, 1});
  ExpectIntArg(net, 0, "count_include_pad", 1);
  // Its own pads, counted, add to the Pad's.
  const NetDef added = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddPadThen(graph, kSpatialPads, {OpArg::Float("constant_value", 0.0f)},
                   "Pooling",
                   {OpArg::Ints("padding_values", {1, 0, 0, 1}),
                    OpArg::Int("count_include_pad", 1)});
      },
      {FusePad}, {"Pooling"});
  ExpectIntsArg(added, 0, "padding_values", {2, 2, 2, 2});
}

TEST(FusePadTest, FusesZerosIntoConvolutions) {
  const NetDef conv = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddPadThen(graph, kSpatialPads, {}, "Conv2D", {});
      },
      {FusePad}, {"Conv2D"});
  ExpectIntsArg(conv, 0, "padding_values", {1, 2, 2, 1});
  // [total_h, total_w] pads (top = total / 2) add as four.
  const NetDef depthwise = ExpectRewrite(
      [](GraphBuilder *graph) {
        AddPadThen(graph, kSpatialPads, {}, "DepthwiseConv2d",
                   {OpArg::Ints("padding_values", {3, 2})});
      },
      {FusePad}, {"DepthwiseConv2d"});
  ExpectIntsArg(depthwise, 0, "padding_values", {2, 3, 4, 2});
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddPadThen(graph, kSpatialPads, {}, "Conv2D", {});
      },
      FusePad);
}

TEST(FusePadTest, LeavesPadsThatAreNotItsPadding) {
  const auto avg = OpArg::Int("pooling_type", 1);
  struct Form {
    std::vector<int64_t> paddings;
    std::vector<OpArg> pad_args;
    std::string type;
    std::vector<OpArg> op_args;
  };
  const std::vector<Form> forms = {
      // Max pooling ignores padding; the Pad's zeros would win over
      // negative values.
      {kSpatialPads, {}, "Pooling", {OpArg::Int("pooling_type", 2)}},
      // CEIL rounding's extra cells never count in the divisor.
      {kSpatialPads, {}, "Pooling", {avg, OpArg::Int("round_mode", 1)}},
      // Own padding left out of the divisor.
      {kSpatialPads,
       {},
       "Pooling",
       {avg, OpArg::Ints("padding_values", {1, 1, 1, 1})}},
      // SAME padding depends on the padded size.
      {kSpatialPads, {}, "Conv2D", {OpArg::Int("padding", 1)}},
      // Not zeros, not spatial, not constant.
      {kSpatialPads, {OpArg::Float("constant_value", 1.0f)}, "Pooling", {avg}},
      {{0, 0, 1, 1, 1, 1, 0, 1}, {}, "Pooling", {avg}},
      {{0, 0, 1, 1, 1, 1, 0, 0}, {OpArg::Int("pad_type", 1)}, "Conv2D", {}},
  };
  for (const Form &form : forms) {
    ExpectUnchanged(
        [&](GraphBuilder *graph) {
          AddPadThen(graph, form.paddings, form.pad_args, form.type,
                     form.op_args);
        },
        FusePad);
  }
  // A Pad that another op (or the graph's output) reads too stays.
  ExpectUnchanged(
      [](GraphBuilder *graph) {
        AddPadThen(graph, kSpatialPads, {}, "Pooling",
                   {OpArg::Int("pooling_type", 1)});
        Output(graph, "pad");
      },
      FusePad);
}

TEST(DefaultPassesTest, FoldBatchNormThenFusePReluIntoADepthwiseConv) {
  ExpectRewrite(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "DepthwiseConv2d", "dw", false);
        AddBatchNorm(graph, "bn", "dw", true);
        AddPRelu(graph, "bn", kChannels);
      },
      {RunDefaultPasses}, {"DepthwiseConv2d"});
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddWeighted(graph, "DepthwiseConv2d", "dw", true);
        AddPRelu(graph, "dw", kChannels);
      },
      RunDefaultPasses);
}

// ---- FusePointwiseDepthwise -------------------------------------------------

// Input "x" [1, side, side, 8] -> 1x1 Conv2D "expand" to `channels`
// channels (ReLU6) -> DepthwiseConv2d "dw" (3x3 unless `kernel` says,
// stride `stride`, SAME, ReLU), biases when `bias`, plus `dw_args`.
void AddExpandDepthwise(GraphBuilder *graph, int64_t side, int64_t channels,
                        bool bias, int64_t stride = 2,
                        std::vector<OpArg> expand_args = {},
                        int64_t kernel = 3, int64_t multiplier = 1) {
  Input(graph, "x", {1, side, side, 8});
  Constant(graph, "pw", {channels, 1, 1, 8}, 51);
  Constant(graph, "dw_w", {kernel, kernel, channels, multiplier}, 53);
  std::vector<std::string> expand_inputs = {"x", "pw"};
  std::vector<std::string> dw_inputs = {"expand", "dw_w"};
  if (bias) {
    Constant(graph, "pw_b", {channels}, 52);
    Constant(graph, "dw_b", {channels * multiplier}, 54);
    expand_inputs.push_back("pw_b");
    dw_inputs.push_back("dw_b");
  }
  expand_args.push_back(OpArg::String("activation", "RELUX"));
  Op(graph, "Conv2D", "expand", expand_inputs, expand_args);
  Op(graph, "DepthwiseConv2d", "dw", dw_inputs,
     {OpArg::Ints("strides", {stride, stride}), OpArg::Int("padding", 1),
      OpArg::String("activation", "RELU")});
}

// 40 x 40 x 96 floats (600 KiB) between the two ops: fused, the pointwise
// activation renamed, missing biases made zero constants.
TEST(FusePointwiseDepthwiseTest, FusesALargeExpansionIntoItsDepthwise) {
  for (bool bias : {true, false}) {
    for (int64_t stride : {1, 2}) {
      SCOPED_TRACE(std::string(bias ? "biases" : "no biases") + ", stride " +
                   std::to_string(stride));
      const NetDef net = ExpectRewrite(
          [&](GraphBuilder *graph) {
            AddExpandDepthwise(graph, 40, 96, bias, stride);
            Output(graph, "dw");
          },
          {FusePointwiseDepthwise}, {"PointwiseDepthwiseConv2d"});
      const OperatorDef &fused = OpAt(net, 0);
      ASSERT_EQ(fused.input_size(), 5);
      EXPECT_EQ(fused.input(0), "x");
      EXPECT_EQ(fused.input(1), "pw");
      EXPECT_EQ(fused.input(3), "dw_w");
      EXPECT_EQ(fused.output(0), "dw");
      EXPECT_EQ(Activation(fused), "RELU");
      ASSERT_NE(Arg(fused, "pointwise_activation"), nullptr);
      EXPECT_EQ(Arg(fused, "pointwise_activation")->s(), "RELUX");
      const std::vector<std::string> sources = FusedSourceNodes(fused);
      EXPECT_NE(std::find(sources.begin(), sources.end(), "expand"),
                sources.end());
    }
  }
}

TEST(FusePointwiseDepthwiseTest, SkipsOtherForms) {
  // A small expansion, a second reader, a graph output in between, a
  // strided or grouped or 3x3 "pointwise" conv, a depthwise of multiplier
  // 2, a 7x7 depthwise window (not one of the direct kernels').
  const std::vector<BuildFn> builds = {
      [](GraphBuilder *graph) {
        AddExpandDepthwise(graph, 20, 96, true);
        Output(graph, "dw");
      },
      [](GraphBuilder *graph) {
        AddExpandDepthwise(graph, 40, 96, true);
        Op(graph, "Activation", "other", {"expand"},
           {OpArg::String("activation", "RELU")});
        Output(graph, "dw");
        Output(graph, "other");
      },
      [](GraphBuilder *graph) {
        AddExpandDepthwise(graph, 40, 96, true);
        Output(graph, "dw");
        Output(graph, "expand");
      },
      [](GraphBuilder *graph) {
        AddExpandDepthwise(graph, 80, 96, true, 2,
                           {OpArg::Ints("strides", {2, 2})});
        Output(graph, "dw");
      },
      [](GraphBuilder *graph) {
        AddExpandDepthwise(graph, 40, 96, true, 2, {}, 7);
        Output(graph, "dw");
      },
      [](GraphBuilder *graph) {
        AddExpandDepthwise(graph, 40, 96, true, 2, {}, 3, 2);
        Output(graph, "dw");
      },
  };
  for (size_t i = 0; i < builds.size(); ++i) {
    SCOPED_TRACE("form " + std::to_string(i));
    ExpectUnchanged(builds[i], FusePointwiseDepthwise);
  }
}

TEST(FusePointwiseDepthwiseTest, IsIdempotent) {
  ExpectIdempotent(
      [](GraphBuilder *graph) {
        AddExpandDepthwise(graph, 40, 96, false);
        Output(graph, "dw");
      },
      FusePointwiseDepthwise);
}

}  // namespace
}  // namespace converter
}  // namespace mace
