// Shape-computing subgraphs fold while the graph is built, so a Reshape
// whose target shape comes from Shape → Gather → Unsqueeze → Concat is the
// only op left after conversion.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx.pb.h"
#include "mace/converter/onnx/onnx_frontend.h"
#include "mace/converter/passes/passes.h"

namespace mace {
namespace converter {
namespace {

std::string SavePath(const std::string &name) {
  const char *base = std::getenv("TMPDIR");
  return std::string(base ? base : "/tmp") + "/mace_onnx_shape_test_" +
         std::to_string(::getpid()) + "_" + name;
}

onnx::NodeProto *AddNode(onnx::GraphProto *graph, const std::string &type,
                         const std::vector<std::string> &inputs,
                         const std::string &output) {
  onnx::NodeProto *node = graph->add_node();
  node->set_op_type(type);
  node->set_name(output);
  for (const std::string &input : inputs) node->add_input(input);
  node->add_output(output);
  return node;
}

void AddInt64(onnx::GraphProto *graph, const std::string &name,
              const std::vector<int64_t> &dims,
              const std::vector<int64_t> &values) {
  onnx::TensorProto *t = graph->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

// x [2, 3, 4] → Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))
// = x as [2, 12].
onnx::ModelProto FlattenByShapeModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto *graph = model.mutable_graph();
  onnx::ValueInfoProto *x = graph->add_input();
  x->set_name("x");
  auto *type = x->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {2, 3, 4})
    type->mutable_shape()->add_dim()->set_dim_value(d);
  AddInt64(graph, "zero", {}, {0});
  AddInt64(graph, "axes", {1}, {0});
  AddInt64(graph, "minus_one", {1}, {-1});
  AddNode(graph, "Shape", {"x"}, "shape");
  AddNode(graph, "Gather", {"shape", "zero"}, "batch");
  AddNode(graph, "Unsqueeze", {"batch", "axes"}, "batch_1d");
  onnx::NodeProto *concat =
      AddNode(graph, "Concat", {"batch_1d", "minus_one"}, "target");
  onnx::AttributeProto *axis = concat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  AddNode(graph, "Reshape", {"x", "target"}, "y");
  graph->add_output()->set_name("y");
  return model;
}

TEST(OnnxShapeTest, ShapeChainFoldsIntoOneReshape) {
  const std::string path = SavePath("flatten_by_shape.onnx");
  {
    std::ofstream file(path, std::ios::binary);
    ASSERT_TRUE(FlattenByShapeModel().SerializeToOstream(&file));
  }
  GraphBuilder graph;
  std::vector<ConversionGap> gaps;
  const MaceStatus status = ConvertOnnxModel(path, {}, &graph, &gaps);
  std::remove(path.c_str());
  ASSERT_EQ(status, MaceStatus::MACE_SUCCESS) << status.information();
  ASSERT_EQ(RunDefaultPasses(&graph), MaceStatus::MACE_SUCCESS);
  ASSERT_EQ(graph.ops().size(), 1u);
  EXPECT_EQ(graph.ops()[0].type(), "Reshape");
  EXPECT_EQ(graph.Find("y")->shape(), (Shape{2, 12}));
}

}  // namespace
}  // namespace converter
}  // namespace mace
