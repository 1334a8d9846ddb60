// Lowering decisions of the conv, pooling, dense and normalization families
// that the ONNX node tests do not reach (their weights are graph inputs, and
// several come at an opset above 21): which MACE ops a node becomes, and
// results of the paths that fold constant weights. Constant inputs make the
// emitted ops fold, so results are read from the graph.

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx.pb.h"
#include "mace/converter/onnx/onnx_lowering.h"

namespace mace {
namespace converter {
namespace {

class ConvLoweringTest : public ::testing::Test {
 protected:
  // Lowers node_ as `op_type` with output "y" at `opset`; the status.
  MaceStatus Lower(const std::string &op_type,
                   const std::vector<std::string> &inputs, int opset = 13) {
    context_ = std::make_unique<OnnxContext>(&graph_, opset, ".");
    node_.set_op_type(op_type);
    node_.set_name("node");
    for (const std::string &input : inputs) node_.add_input(input);
    node_.add_output("y");
    OnnxNode node(node_, context_.get());
    return OnnxLowerings().at(op_type)(node, context_.get());
  }
  void AddFloatAttr(const std::string &name, float value) {
    onnx::AttributeProto *attr = node_.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::FLOAT);
    attr->set_f(value);
  }
  void AddIntAttr(const std::string &name, int64_t value) {
    onnx::AttributeProto *attr = node_.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(value);
  }
  void AddIntsAttr(const std::string &name,
                   const std::vector<int64_t> &values) {
    onnx::AttributeProto *attr = node_.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) attr->add_ints(v);
  }
  std::vector<float> Floats(const std::string &name) const {
    const Tensor *t = graph_.Find(name);
    EXPECT_TRUE(t != nullptr && t->is_constant()) << name;
    if (t == nullptr || !t->is_constant()) return {};
    return std::vector<float>(t->data<float>(), t->data<float>() + t->size());
  }
  std::vector<std::string> OpTypes() const {
    std::vector<std::string> types;
    for (const OperatorDef &op : graph_.ops()) types.push_back(op.type());
    return types;
  }

  GraphBuilder graph_;
  std::unique_ptr<OnnxContext> context_;
  onnx::NodeProto node_;
};

void ExpectNear(const std::vector<float> &got, const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
  }
}

TEST_F(ConvLoweringTest, GemmWithConstantBIsFullyConnectedWithFoldedScales) {
  ASSERT_EQ(graph_.AddInput("a", DT_FLOAT, {2, 3}, 0),
            MaceStatus::MACE_SUCCESS);
  graph_.AddConstant("b", {3, 2}, {1, 2, 3, 4, 5, 6});
  graph_.AddConstant("c", {1, 2}, {10, 20});
  AddFloatAttr("alpha", 2.0f);
  AddFloatAttr("beta", 0.5f);
  ASSERT_EQ(Lower("Gemm", {"a", "b", "c"}), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(OpTypes(), std::vector<std::string>{"FullyConnected"});
  const OperatorDef &fc = graph_.ops()[0];
  ASSERT_EQ(fc.input_size(), 3);
  // Weight [N, K] = alpha * B^T; bias = beta * C.
  EXPECT_EQ(graph_.Find(fc.input(1))->shape(), (Shape{2, 3}));
  EXPECT_EQ(Floats(fc.input(1)), (std::vector<float>{2, 6, 10, 4, 8, 12}));
  EXPECT_EQ(Floats(fc.input(2)), (std::vector<float>{5, 10}));
}

TEST_F(ConvLoweringTest, GemmWithMatrixCAddsItAfterFullyConnected) {
  ASSERT_EQ(graph_.AddInput("a", DT_FLOAT, {2, 3}, 0),
            MaceStatus::MACE_SUCCESS);
  graph_.AddConstant("b", {2, 3}, {1, 2, 3, 4, 5, 6});
  graph_.AddConstant("c", {2, 2}, {1, 2, 3, 4});
  AddIntAttr("transB", 1);
  ASSERT_EQ(Lower("Gemm", {"a", "b", "c"}), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(OpTypes(), (std::vector<std::string>{"FullyConnected", "Eltwise"}));
}

TEST_F(ConvLoweringTest, MatMulByConstantMatrixIsFullyConnected) {
  ASSERT_EQ(graph_.AddInput("a", DT_FLOAT, {2, 3}, 0),
            MaceStatus::MACE_SUCCESS);
  graph_.AddConstant("b", {3, 2}, {1, 2, 3, 4, 5, 6});
  ASSERT_EQ(Lower("MatMul", {"a", "b"}), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(OpTypes(), std::vector<std::string>{"FullyConnected"});
  EXPECT_EQ(Floats(graph_.ops()[0].input(1)),
            (std::vector<float>{1, 3, 5, 2, 4, 6}));
}

TEST_F(ConvLoweringTest, BatchNormWithConstantStatisticsFoldsThem) {
  ASSERT_EQ(graph_.AddInput("x", DT_FLOAT, {1, 2, 3, 3}, 2),
            MaceStatus::MACE_SUCCESS);
  graph_.AddConstant("scale", {2}, {2, 3});
  graph_.AddConstant("bias", {2}, {1, -1});
  graph_.AddConstant("mean", {2}, {0.5f, 2});
  graph_.AddConstant("var", {2}, {4, 9});
  AddFloatAttr("epsilon", 0.0f);
  ASSERT_EQ(Lower("BatchNormalization", {"x", "scale", "bias", "mean", "var"}),
            MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(OpTypes(),
            (std::vector<std::string>{"Transpose", "BatchNorm", "Transpose"}));
  const OperatorDef &bn = graph_.ops()[1];
  ASSERT_EQ(bn.input_size(), 3);
  // s = scale / sqrt(var), o = bias - mean * s.
  ExpectNear(Floats(bn.input(1)), {1.0f, 1.0f});
  ExpectNear(Floats(bn.input(2)), {0.5f, -3.0f});
}

TEST_F(ConvLoweringTest, ConvWeightsFedAtRunTimeAreTransposedInTheGraph) {
  ASSERT_EQ(graph_.AddInput("x", DT_FLOAT, {1, 4, 5, 5}, 2),
            MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(graph_.AddInput("w", DT_FLOAT, {6, 2, 3, 3}, 2),
            MaceStatus::MACE_SUCCESS);
  AddIntAttr("group", 2);
  ASSERT_EQ(Lower("Conv", {"x", "w"}), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(OpTypes(), (std::vector<std::string>{"Transpose", "Transpose",
                                                 "Conv2D", "Transpose"}));
  EXPECT_EQ(graph_.ops()[0].input(0), "w");
  EXPECT_EQ(graph_.Find("y")->shape(), (Shape{1, 6, 3, 3}));
}

TEST_F(ConvLoweringTest, OneDimensionalConvRunsOnAHeightOneView) {
  graph_.AddConstant("x", {1, 1, 4}, {1, 2, 3, 4});
  graph_.AddConstant("w", {1, 1, 2}, {2, 1});
  AddIntsAttr("pads", {1, 0});
  ASSERT_EQ(Lower("Conv", {"x", "w"}), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(graph_.Find("y")->shape(), (Shape{1, 1, 4}));
  EXPECT_EQ(Floats("y"), (std::vector<float>{1, 4, 7, 10}));
}

TEST_F(ConvLoweringTest, ConvTransposeOutputShapeBeyondTheFullOutputPadsIt) {
  // Full output [1, 1, 2, 2]; output_shape 5 adds one trailing cell.
  graph_.AddConstant("x", {1, 1, 1, 2}, {1, 2});
  graph_.AddConstant("w", {1, 1, 1, 2}, {1, 1});
  AddIntsAttr("strides", {1, 2});
  AddIntsAttr("output_shape", {1, 5});
  ASSERT_EQ(Lower("ConvTranspose", {"x", "w"}), MaceStatus::MACE_SUCCESS);
  EXPECT_EQ(graph_.Find("y")->shape(), (Shape{1, 1, 1, 5}));
  EXPECT_EQ(Floats("y"), (std::vector<float>{1, 1, 2, 2, 0}));
}

TEST_F(ConvLoweringTest, SoftmaxBeforeOpset13NormalizesTheCoercedMatrix) {
  graph_.AddConstant("x", {2, 2}, {0, 0, 0, std::log(5.0f)});
  AddIntAttr("axis", 0);
  ASSERT_EQ(Lower("Softmax", {"x"}, 11), MaceStatus::MACE_SUCCESS);
  // Axis 0 at opset 11: one row of all four values.
  ExpectNear(Floats("y"), {0.125f, 0.125f, 0.125f, 0.625f});
}

TEST_F(ConvLoweringTest, LrnOfEvenSizeIsUnsupported) {
  ASSERT_EQ(graph_.AddInput("x", DT_FLOAT, {1, 4, 2, 2}, 2),
            MaceStatus::MACE_SUCCESS);
  AddIntAttr("size", 2);
  const MaceStatus status = Lower("LRN", {"x"});
  EXPECT_EQ(status.code(), MaceStatus::MACE_UNSUPPORTED);
  EXPECT_NE(status.information().find("size"), std::string::npos)
      << status.information();
}

}  // namespace
}  // namespace converter
}  // namespace mace
