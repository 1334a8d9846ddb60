// ONNX models that tests/fuzz/onnx_fuzzer.cc found to crash the converter,
// hit undefined behaviour in it, or make a model the engine then refused.
// Each converts or fails with a message naming what is wrong; the
// sanitized run of scripts/test.sh checks the ones that were undefined
// behaviour or memory errors.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "mace/converter/common/frontend.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx.pb.h"
#include "mace/converter/onnx/onnx_frontend.h"
#include "mace/converter/passes/passes.h"
#include "mace/core/status.h"
#include "mace/model/model_builder.h"

namespace mace {
namespace converter {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

onnx::ModelProto NewModel(int opset = 13) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(opset);
  return model;
}

void AddInput(onnx::ModelProto *model, const std::string &name,
              const std::vector<int64_t> &dims,
              int elem_type = TensorProto::FLOAT) {
  onnx::ValueInfoProto *input = model->mutable_graph()->add_input();
  input->set_name(name);
  auto *type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(elem_type);
  auto *shape = type->mutable_shape();
  for (int64_t dim : dims) shape->add_dim()->set_dim_value(dim);
}

onnx::NodeProto *AddNode(onnx::ModelProto *model, const std::string &type,
                         const std::vector<std::string> &inputs,
                         const std::vector<std::string> &outputs) {
  onnx::NodeProto *node = model->mutable_graph()->add_node();
  node->set_op_type(type);
  node->set_name(type + "_node");
  for (const std::string &input : inputs) node->add_input(input);
  for (const std::string &output : outputs) node->add_output(output);
  return node;
}

// An initializer of INT64 or FLOAT values.
template <typename T>
void AddInitializer(onnx::ModelProto *model, const std::string &name,
                    const std::vector<int64_t> &dims,
                    const std::vector<T> &values) {
  TensorProto *tensor = model->mutable_graph()->add_initializer();
  tensor->set_name(name);
  for (int64_t dim : dims) tensor->add_dims(dim);
  if constexpr (std::is_same_v<T, float>) {
    tensor->set_data_type(TensorProto::FLOAT);
    for (float value : values) tensor->add_float_data(value);
  } else {
    tensor->set_data_type(TensorProto::INT64);
    for (int64_t value : values) tensor->add_int64_data(value);
  }
}

void AddOutputs(onnx::ModelProto *model,
                const std::vector<std::string> &names) {
  for (const std::string &name : names) {
    model->mutable_graph()->add_output()->set_name(name);
  }
}

// What `mace convert` runs: the frontend, the default passes, Finish.
MaceStatus Convert(const onnx::ModelProto &model,
                   const ConvertOptions &options = {},
                   ModelBuilder *finished = nullptr) {
  GraphBuilder graph;
  std::vector<ConversionGap> gaps;
  MACE_RETURN_IF_ERROR(ConvertOnnxModelProto(model, "fuzz.onnx", ".",
                                             options, &graph, &gaps));
  MACE_RETURN_IF_ERROR(RunDefaultPasses(&graph));
  ModelBuilder local;
  return graph.Finish("fuzz", finished != nullptr ? finished : &local);
}

void ExpectError(const MaceStatus &status, const std::string &needle) {
  EXPECT_NE(status, MaceStatus::MACE_SUCCESS);
  EXPECT_NE(status.information().find(needle), std::string::npos)
      << status.information();
}

std::vector<std::string> OpTypes(const ModelBuilder &model) {
  std::vector<std::string> types;
  for (const OperatorDef &op : model.net().op()) types.push_back(op.type());
  return types;
}

// Dropout's mask was a constant added over the tensor its input's shape
// was read from: a use after free.
TEST(OnnxFuzzFindingsTest, OutputRedefiningAValueIsRejected) {
  onnx::ModelProto model = NewModel(7);
  AddInput(&model, "x", {2, 3});
  AddNode(&model, "Dropout", {"x"}, {"y", "x"});
  AddOutputs(&model, {"y"});
  ExpectError(Convert(model), "output 'x' is already defined");

  onnx::ModelProto twice = NewModel();
  AddInput(&twice, "x", {2, 3});
  AddNode(&twice, "Dropout", {"x"}, {"y", "y"});
  AddOutputs(&twice, {"y"});
  ExpectError(Convert(twice), "output 'y' is already defined");
}

TEST(OnnxFuzzFindingsTest, OutputListedTwiceIsRejected) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {4});
  AddNode(&model, "Relu", {"x"}, {"y"});
  AddOutputs(&model, {"y", "y"});
  ExpectError(Convert(model), "output 'y' is listed twice");
}

TEST(OnnxFuzzFindingsTest, ModelComputingNothingIsRejected) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {4});
  AddNode(&model, "Relu", {"x"}, {"y"});
  AddOutputs(&model, {"x"});
  ExpectError(Convert(model), "no op computes the outputs");
}

// The model keeps input and output dims as int32: 2^31 wrapped to a
// negative dim, which the engine refused at load.
TEST(OnnxFuzzFindingsTest, InputDimBeyondInt32IsRejected) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {int64_t{1} << 31, 1});
  AddNode(&model, "Relu", {"x"}, {"y"});
  AddOutputs(&model, {"y"});
  ExpectError(Convert(model), "a model holds dims up to 2147483647");
}

TEST(OnnxFuzzFindingsTest, FrozenInputMustFillItsShape) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {2});
  AddInput(&model, "k", {});
  // No declared shape, so the value's own is what is checked.
  model.mutable_graph()->mutable_input(1)->mutable_type()
      ->mutable_tensor_type()->clear_shape();
  AddNode(&model, "Add", {"x", "x"}, {"y"});
  AddOutputs(&model, {"y"});
  ConvertOptions options;
  ConvertOptions::ConstantInput &frozen = options.constant_inputs["k"];
  frozen.shape = {2, 3};
  frozen.floats = {1, 2, 3, 4, 5};
  ExpectError(Convert(model, options),
              "constant input 'k' has 5 values, its shape [2,3] needs 6");
  frozen.shape = {1, -1000, -1000};
  frozen.floats.clear();
  ExpectError(Convert(model, options), "needs a valid shape");
}

// Floats frozen into an integer input were converted with a plain cast,
// undefined for values outside int32.
TEST(OnnxFuzzFindingsTest, FrozenFloatsSaturateIntoAnIntegerInput) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {3}, TensorProto::INT64);
  AddInput(&model, "k", {3}, TensorProto::INT64);
  AddNode(&model, "Add", {"x", "k"}, {"y"});
  AddOutputs(&model, {"y"});
  ConvertOptions options;
  ConvertOptions::ConstantInput &frozen = options.constant_inputs["k"];
  frozen.shape = {3};
  frozen.floats = {1e30f, -1e30f, std::nanf("")};
  ModelBuilder finished;
  ASSERT_EQ(Convert(model, options, &finished), MaceStatus::MACE_SUCCESS);
}

TEST(OnnxFuzzFindingsTest, SaturatingCastClampsAndMapsNanToZero) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(SaturatingCast<int32_t>(3.7f), 3);
  EXPECT_EQ(SaturatingCast<int32_t>(-3.7f), -3);
  EXPECT_EQ(SaturatingCast<int32_t>(2147483648.0f), kMax);
  EXPECT_EQ(SaturatingCast<int32_t>(-2147483648.0f), kMin);
  EXPECT_EQ(SaturatingCast<int32_t>(1e30f), kMax);
  EXPECT_EQ(SaturatingCast<int32_t>(-INFINITY), kMin);
  EXPECT_EQ(SaturatingCast<int32_t>(std::nanf("")), 0);
  EXPECT_EQ(SaturatingCast<int64_t>(1e30f), kInt64Max);
}

// Float starts read as integers (ConstantValues) were cast the same way.
TEST(OnnxFuzzFindingsTest, SliceWithNonFiniteFloatBoundsConverts) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {6});
  AddInitializer<float>(&model, "starts", {1}, {std::nanf("")});
  AddInitializer<float>(&model, "ends", {1}, {1e30f});
  AddNode(&model, "Slice", {"x", "starts", "ends"}, {"y"});
  AddOutputs(&model, {"y"});
  EXPECT_EQ(Convert(model), MaceStatus::MACE_SUCCESS);
}

// A folded constant of 2 GiB used to be built in the converter's memory
// (and one beyond the machine's threw std::bad_alloc); above 256 MiB the
// op now stays in the model, and the engine computes it at load.
TEST(OnnxFuzzFindingsTest, LargeConstantOfShapeStaysAFillOp) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {1});
  AddInitializer<int64_t>(&model, "shape", {3}, {1024, 1024, 512});
  AddNode(&model, "ConstantOfShape", {"shape"}, {"c"});
  AddNode(&model, "Add", {"c", "x"}, {"y"});
  AddOutputs(&model, {"y"});
  ModelBuilder finished;
  ASSERT_EQ(Convert(model, {}, &finished), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(OpTypes(finished), (std::vector<std::string>{"Fill", "Eltwise"}));
}

TEST(OnnxFuzzFindingsTest, ConstantOfShapeBeyondTheEngineIsRejected) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {1});
  AddInitializer<int64_t>(&model, "shape", {3}, {1 << 20, 1 << 20, 1 << 20});
  AddNode(&model, "ConstantOfShape", {"shape"}, {"c"});
  AddNode(&model, "Add", {"c", "x"}, {"y"});
  AddOutputs(&model, {"y"});
  ExpectError(Convert(model), "invalid shape");
}

// The fill value went through float on its way to int32: 2^31 - 1
// became 2^31, outside int32.
TEST(OnnxFuzzFindingsTest, ConstantOfShapeKeepsTheLargestInt32Value) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {2}, TensorProto::INT64);
  AddInitializer<int64_t>(&model, "shape", {1}, {2});
  onnx::NodeProto *node = AddNode(&model, "ConstantOfShape", {"shape"}, {"c"});
  AttributeProto *value = node->add_attribute();
  value->set_name("value");
  value->set_type(AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(std::numeric_limits<int32_t>::max());
  AddNode(&model, "Add", {"c", "x"}, {"y"});
  AddOutputs(&model, {"y"});
  ModelBuilder finished;
  ASSERT_EQ(Convert(model, {}, &finished), MaceStatus::MACE_SUCCESS);
}

// Integer initializers are clamped to int32 when decoded; float ones read
// as integers are not, which is how the fuzzer reached these sizes.
TEST(OnnxFuzzFindingsTest, ExpandBeyondInt32DimsIsRejected) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {1});
  AddInitializer<float>(&model, "shape", {1}, {4294967296.0f});
  AddNode(&model, "Expand", {"x", "shape"}, {"y"});
  AddOutputs(&model, {"y"});
  ExpectError(Convert(model), "has a dim outside 0 to 2^31 - 1");
}

TEST(OnnxFuzzFindingsTest, TileWhoseOutputOverflowsIsRejected) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {2});
  AddInitializer<float>(&model, "repeats", {1}, {1e30f});  // read as INT64_MAX
  AddNode(&model, "Tile", {"x", "repeats"}, {"y"});
  AddOutputs(&model, {"y"});
  ExpectError(Convert(model), "overflows");
}

// A NaN limit made a NaN element count, which passed the length check and
// was cast to an integer.
TEST(OnnxFuzzFindingsTest, RangeWithANanLimitIsRejected) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "x", {1});
  AddInitializer<float>(&model, "start", {}, {0.0f});
  AddInitializer<float>(&model, "limit", {}, {std::nanf("")});
  AddInitializer<float>(&model, "delta", {}, {1.0f});
  AddNode(&model, "Range", {"start", "limit", "delta"}, {"r"});
  AddNode(&model, "Add", {"r", "x"}, {"y"});
  AddOutputs(&model, {"y"});
  ExpectError(Convert(model), "range too long");
}

// Dropout's mask of a large input was a vector of its element count, even
// when the input is only known at run time.
TEST(OnnxFuzzFindingsTest, DropoutMaskOfALargeInputStaysAFillOp) {
  onnx::ModelProto model = NewModel(12);
  AddInput(&model, "x", {1 << 16, 1 << 14});
  AddNode(&model, "Dropout", {"x"}, {"y", "mask"});
  AddOutputs(&model, {"y", "mask"});
  ModelBuilder finished;
  ASSERT_EQ(Convert(model, {}, &finished), MaceStatus::MACE_SUCCESS);
  const std::vector<std::string> types = OpTypes(finished);
  EXPECT_NE(std::find(types.begin(), types.end(), "Fill"), types.end());
}

// MatMul's Prepare kept two offsets per output batch: 2^30 batches of 1x1
// matrices took 16 GiB and seconds to plan a 4 GiB output, in the
// converter as at load. The offsets are decoded when Run needs them.
TEST(OnnxFuzzFindingsTest, MatMulOfManyBatchesConvertsWithoutPerBatchTables) {
  onnx::ModelProto model = NewModel();
  AddInput(&model, "a", {int64_t{1} << 30, 1, 1});
  AddInput(&model, "b", {1, 1});
  AddNode(&model, "MatMul", {"a", "b"}, {"y"});
  AddOutputs(&model, {"y"});
  const auto start = std::chrono::steady_clock::now();
  const MaceStatus status = Convert(model);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  // Milliseconds now; 87 s with the tables (a bound, not a benchmark).
  EXPECT_LT(seconds, 10.0);
}

// LayerNorm's Prepare built an index of the broadcast gamma with one entry
// per normalized position: an empty input of dims [0, 1, 2^63 - 1] asked
// for 2^63 entries, and std::vector's length_error ended the process. The
// index is built only for an op that will run on rows that exist.
TEST(OnnxFuzzFindingsTest, LayerNormOfAnEmptyInputBuildsNoIndex) {
  onnx::ModelProto model = NewModel(17);
  AddInput(&model, "gamma", {1});
  AddInitializer<float>(&model, "x", {0, 1, kInt64Max}, {});
  AddNode(&model, "LayerNormalization", {"x", "gamma"}, {"y"});
  AddOutputs(&model, {"y"});
  // It converts, or fails with a message; it does not throw.
  const MaceStatus status = Convert(model);
  if (status != MaceStatus::MACE_SUCCESS) {
    EXPECT_FALSE(status.information().empty());
  }

  onnx::ModelProto rows = NewModel(17);
  AddInput(&rows, "gamma", {1});
  AddInput(&rows, "x", {1 << 12, 1 << 18});
  AddNode(&rows, "LayerNormalization", {"x", "gamma"}, {"y"});
  AddOutputs(&rows, {"y"});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Convert(rows), MaceStatus::MACE_SUCCESS);
  // Shape inference only: no index of the 2^18 positions, nor work per row.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          start)
                .count(),
            10.0);
}

}  // namespace
}  // namespace converter
}  // namespace mace
