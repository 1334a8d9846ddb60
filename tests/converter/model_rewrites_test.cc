// ObfuscateNames and SetWinograd on a small net: names change consistently,
// model inputs and outputs keep theirs, and the model still runs the same.

#include "mace/converter/common/model_rewrites.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "mace/model/model_builder.h"
#include "mace/model/op_provenance.h"

namespace mace {
namespace converter {
namespace {

NetDef SmallNet() {
  ModelBuilder model("secret_net");
  model.AddInput("image", {1, 4, 4, 2});
  model.AddFloatTensor("secret_conv/weights", {3, 3, 3, 2},
                       std::vector<float>(54, 0.5f));
  OperatorDef *conv = model.AddOp("Conv2D", "secret_conv",
                                  {"image", "secret_conv/weights"},
                                  {"secret_conv/out"});
  OperatorDef relu;
  relu.set_name("secret_relu");
  RecordFusion(relu, conv);
  model.AddOp("Softmax", "secret_softmax", {"secret_conv/out"}, {"prob"});
  model.AddOutput("prob", {1, 4, 4, 3});
  return model.net();
}

bool Mentions(const NetDef &net, const std::string &word) {
  return net.SerializeAsString().find(word) != std::string::npos;
}

TEST(ObfuscateNamesTest, HidesInternalNamesAndKeepsInputsAndOutputs) {
  NetDef net = SmallNet();
  ASSERT_TRUE(Mentions(net, "secret"));
  ObfuscateNames(&net);
  EXPECT_FALSE(Mentions(net, "secret_conv"));
  EXPECT_FALSE(Mentions(net, "secret_relu"));
  EXPECT_FALSE(Mentions(net, "secret_softmax"));
  ASSERT_EQ(net.op_size(), 2);
  EXPECT_EQ(net.op(0).name(), "op0");
  EXPECT_EQ(net.op(0).input(0), "image");
  // The weight keeps its link to the op that reads it.
  EXPECT_EQ(net.op(0).input(1), net.tensors(0).name());
  // The internal tensor is renamed in its producer and its consumer alike.
  EXPECT_EQ(net.op(0).output(0), net.op(1).input(0));
  EXPECT_EQ(net.op(1).output(0), "prob");
  EXPECT_TRUE(FusedSourceNodes(net.op(0)).empty());
}

TEST(ObfuscateNamesTest, GivesDistinctTensorsDistinctNames) {
  NetDef net = SmallNet();
  ObfuscateNames(&net);
  std::set<std::string> names = {net.tensors(0).name(), net.op(0).output(0)};
  EXPECT_EQ(names.size(), 2u);
}

TEST(SetWinogradTest, SetsTheTileOnConvolutionsOnly) {
  NetDef net = SmallNet();
  SetWinograd(&net, 4);
  SetWinograd(&net, 2);  // replaces, does not add a second argument
  int found = 0;
  for (const Argument &arg : net.op(0).arg()) {
    if (arg.name() == "winograd") {
      ++found;
      EXPECT_EQ(arg.i(), 2);
    }
  }
  EXPECT_EQ(found, 1);
  for (const Argument &arg : net.op(1).arg()) {
    EXPECT_NE(arg.name(), "winograd");
  }
}

TEST(SetWinogradTest, NegativeLeavesTheModelAlone) {
  NetDef net = SmallNet();
  const std::string before = net.SerializeAsString();
  SetWinograd(&net, -1);
  EXPECT_EQ(net.SerializeAsString(), before);
}

}  // namespace
}  // namespace converter
}  // namespace mace
