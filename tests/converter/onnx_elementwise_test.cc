// Lowering decisions of the activation and elementwise families that the
// ONNX node tests do not reach: which MACE op a node becomes, and exact
// results where a cheaper lowering would be wrong (inf and NaN). Constant
// inputs make the emitted ops fold, so results are read from the graph.

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx.pb.h"
#include "mace/converter/onnx/onnx_lowering.h"

namespace mace {
namespace converter {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

class LoweringTest : public ::testing::Test {
 protected:
  LoweringTest() : context_(&graph_, 13, ".") {}

  // Lowers node_ as `op_type` with output "y"; false (and the error
  // reported) on failure.
  bool Lower(const std::string &op_type,
             const std::vector<std::string> &inputs) {
    node_.set_op_type(op_type);
    node_.set_name("node");
    for (const std::string &input : inputs) node_.add_input(input);
    node_.add_output("y");
    OnnxNode node(node_, &context_);
    const MaceStatus status = OnnxLowerings().at(op_type)(node, &context_);
    EXPECT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
    return status == MaceStatus::MACE_SUCCESS;
  }
  void AddFloatAttr(const std::string &name, float value) {
    onnx::AttributeProto *attr = node_.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::FLOAT);
    attr->set_f(value);
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
  std::string ActivationOf(const OperatorDef &op) const {
    for (const Argument &arg : op.arg()) {
      if (arg.name() == "activation") return arg.s();
    }
    return "";
  }

  GraphBuilder graph_;
  OnnxContext context_;
  onnx::NodeProto node_;
};

// Float equality that also matches NaN with NaN.
void ExpectSameFloats(const std::vector<float> &got,
                      const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    }
  }
}

TEST_F(LoweringTest, ChannelSlopePReluIsActivationBetweenTransposes) {
  ASSERT_EQ(graph_.AddInput("x", DT_FLOAT, {1, 2, 2, 2}, 2),
            MaceStatus::MACE_SUCCESS);
  graph_.AddConstant("slope", {2, 1, 1}, {0.5f, -2.0f});
  ASSERT_TRUE(Lower("PRelu", {"x", "slope"}));
  EXPECT_EQ(OpTypes(),
            (std::vector<std::string>{"Transpose", "Activation", "Transpose"}));
  EXPECT_EQ(ActivationOf(graph_.ops()[1]), "PRELU");
  // The slope is handed over 1-D, as MACE's PRELU takes it.
  EXPECT_EQ(graph_.Find(graph_.ops()[1].input(1))->shape(), Shape{2});
}

TEST_F(LoweringTest, ChannelSlopePReluScalesEachChannel) {
  graph_.AddConstant("x", {1, 2, 1, 2}, {-1.0f, 3.0f, -4.0f, 5.0f});
  graph_.AddConstant("slope", {2, 1, 1}, {0.5f, -2.0f});
  ASSERT_TRUE(Lower("PRelu", {"x", "slope"}));
  EXPECT_EQ(Floats("y"), (std::vector<float>{-0.5f, 3.0f, 8.0f, 5.0f}));
}

TEST_F(LoweringTest, ClipToZeroSixIsRelux) {
  ASSERT_EQ(graph_.AddInput("x", DT_FLOAT, {4}, 0), MaceStatus::MACE_SUCCESS);
  graph_.AddConstant("lo", {}, {0.0f});
  graph_.AddConstant("hi", {}, {6.0f});
  ASSERT_TRUE(Lower("Clip", {"x", "lo", "hi"}));
  ASSERT_EQ(OpTypes(), std::vector<std::string>{"Activation"});
  EXPECT_EQ(ActivationOf(graph_.ops()[0]), "RELUX");
}

TEST_F(LoweringTest, WhereKeepsInfAndNanOfTheSelectedSideOnly) {
  graph_.AddConstantInt("c", {4}, {1, 0, 1, 0});
  graph_.AddConstant("x", {4}, {kNan, kNan, kInf, 1.0f});
  graph_.AddConstant("z", {4}, {2.0f, -kInf, kNan, kNan});
  ASSERT_TRUE(Lower("Where", {"c", "x", "z"}));
  ExpectSameFloats(Floats("y"), {kNan, -kInf, kInf, kNan});
}

TEST_F(LoweringTest, WhereBroadcastsConditionAndOperands) {
  graph_.AddConstantInt("c", {2, 1}, {1, 0});
  graph_.AddConstant("x", {3}, {1.0f, 2.0f, 3.0f});
  graph_.AddConstant("z", {}, {-kInf});
  ASSERT_TRUE(Lower("Where", {"c", "x", "z"}));
  ExpectSameFloats(Floats("y"), {1.0f, 2.0f, 3.0f, -kInf, -kInf, -kInf});
}

TEST_F(LoweringTest, GreaterOrEqualIsFalseForNan) {
  graph_.AddConstant("a", {3}, {kNan, 1.0f, 2.0f});
  graph_.AddConstant("b", {3}, {1.0f, 1.0f, kNan});
  ASSERT_TRUE(Lower("GreaterOrEqual", {"a", "b"}));
  const Tensor *y = graph_.Find("y");
  ASSERT_TRUE(y != nullptr && y->is_constant());
  ASSERT_EQ(y->dtype(), DT_INT32);
  EXPECT_EQ(std::vector<int32_t>(y->data<int32_t>(), y->data<int32_t>() + 3),
            (std::vector<int32_t>{0, 1, 0}));
}

TEST_F(LoweringTest, SeluScalesElu) {
  graph_.AddConstant("x", {2}, {-1.0f, 2.0f});
  AddFloatAttr("alpha", 2.0f);
  AddFloatAttr("gamma", 3.0f);
  ASSERT_TRUE(Lower("Selu", {"x"}));
  const std::vector<float> y = Floats("y");
  ASSERT_EQ(y.size(), 2u);
  EXPECT_NEAR(y[0], 3.0 * 2.0 * std::expm1(-1.0), 1e-6);
  EXPECT_FLOAT_EQ(y[1], 6.0f);
}

TEST_F(LoweringTest, SoftplusDoesNotOverflowForLargeInputs) {
  graph_.AddConstant("x", {3}, {100.0f, -100.0f, 0.0f});
  ASSERT_TRUE(Lower("Softplus", {"x"}));
  const std::vector<float> y = Floats("y");
  ASSERT_EQ(y.size(), 3u);
  EXPECT_FLOAT_EQ(y[0], 100.0f);
  EXPECT_NEAR(y[1], 0.0f, 1e-30);
  EXPECT_NEAR(y[2], std::log(2.0f), 1e-7);
}

}  // namespace
}  // namespace converter
}  // namespace mace
