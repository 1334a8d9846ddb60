// Random corruptions of a valid ONNX model (bit flips, truncations, field
// changes) must give a conversion error or a valid model, never a crash;
// scripts/test.sh also runs this under ASan + UBSan.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx.pb.h"
#include "mace/converter/onnx/onnx_frontend.h"
#include "mace/converter/passes/passes.h"

namespace mace {
namespace converter {
namespace {

constexpr int kCorruptions = 500;

onnx::AttributeProto *AddInts(onnx::NodeProto *node, const std::string &name,
                              const std::vector<int64_t> &values) {
  auto *attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
  return attr;
}

onnx::TensorProto *AddFloatInitializer(onnx::GraphProto *graph,
                                       const std::string &name,
                                       const std::vector<int64_t> &dims) {
  auto *tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t d : dims) {
    tensor->add_dims(d);
    count *= d;
  }
  for (int64_t i = 0; i < count; ++i) {
    tensor->add_float_data(0.01f * static_cast<float>(i % 17) - 0.05f);
  }
  return tensor;
}

// Two convolutions (a plain one and a depthwise one with raw_data weights).
onnx::ModelProto Model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto *graph = model.mutable_graph();
  auto *input = graph->add_input();
  input->set_name("x");
  auto *type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 3, 9, 7}) type->mutable_shape()->add_dim()->set_dim_value(d);
  AddFloatInitializer(graph, "W1", {4, 3, 3, 3});
  auto *w2 = AddFloatInitializer(graph, "W2", {4, 1, 3, 3});
  std::string raw(reinterpret_cast<const char *>(w2->float_data().data()),
                  w2->float_data_size() * sizeof(float));
  w2->clear_float_data();
  w2->set_raw_data(raw);
  auto *conv1 = graph->add_node();
  conv1->set_op_type("Conv");
  conv1->set_name("conv1");
  conv1->add_input("x");
  conv1->add_input("W1");
  conv1->add_output("h");
  AddInts(conv1, "pads", {1, 1, 1, 1});
  AddInts(conv1, "strides", {2, 1});
  auto *conv2 = graph->add_node();
  conv2->set_op_type("Conv");
  conv2->set_name("conv2");
  conv2->add_input("h");
  conv2->add_input("W2");
  conv2->add_output("y");
  auto *group = conv2->add_attribute();
  group->set_name("group");
  group->set_type(onnx::AttributeProto::INT);
  group->set_i(4);
  graph->add_output()->set_name("y");
  return model;
}

int64_t WildInt(std::mt19937 *rng) {
  static const int64_t kValues[] = {-1, 0, 1, 2, 5, 1 << 20, INT64_MAX,
                                    INT64_MIN, 1LL << 40};
  return kValues[(*rng)() % (sizeof(kValues) / sizeof(kValues[0]))];
}

void ChangeField(onnx::ModelProto *model, std::mt19937 *rng) {
  std::mt19937 &r = *rng;
  auto *graph = model->mutable_graph();
  switch (r() % 6) {
    case 0: {
      auto *t = graph->mutable_initializer(r() % graph->initializer_size());
      t->set_dims(r() % t->dims_size(), WildInt(rng));
      break;
    }
    case 1: {
      auto *node = graph->mutable_node(r() % graph->node_size());
      auto *attr = node->mutable_attribute(r() % node->attribute_size());
      if (attr->ints_size() > 0) {
        attr->set_ints(r() % attr->ints_size(), WildInt(rng));
      } else {
        attr->set_i(WildInt(rng));
      }
      break;
    }
    case 2: {
      auto *dims = graph->mutable_input(0)
                       ->mutable_type()
                       ->mutable_tensor_type()
                       ->mutable_shape();
      dims->mutable_dim(r() % dims->dim_size())->set_dim_value(WildInt(rng));
      break;
    }
    case 3:
      graph->mutable_initializer(r() % graph->initializer_size())
          ->set_data_type(static_cast<int>(r() % 18));
      break;
    case 4:
      model->mutable_opset_import(0)->set_version(WildInt(rng));
      break;
    default: {
      auto *node = graph->mutable_node(r() % graph->node_size());
      node->set_input(r() % node->input_size(), r() % 2 ? "h" : "");
      break;
    }
  }
}

TEST(OnnxCorruptionTest, CorruptedModelsGiveErrorsOrValidGraphs) {
  const char *tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/mace_onnx_fuzz_" +
                           std::to_string(::getpid()) + ".onnx";
  std::string valid;
  Model().SerializeToString(&valid);
  std::mt19937 rng(7);
  int errors = 0, converted = 0;
  for (int i = 0; i < kCorruptions; ++i) {
    std::string bytes = valid;
    if (i % 3 == 0) {
      for (int f = 0; f < 1 + static_cast<int>(rng() % 6); ++f) {
        bytes[rng() % bytes.size()] ^= static_cast<char>(1 << (rng() % 8));
      }
    } else if (i % 3 == 1) {
      bytes.resize(rng() % bytes.size());
    } else {
      onnx::ModelProto model = Model();
      for (int c = 0; c < 1 + static_cast<int>(rng() % 3); ++c) {
        ChangeField(&model, &rng);
      }
      model.SerializeToString(&bytes);
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    SCOPED_TRACE("corruption #" + std::to_string(i));
    GraphBuilder graph;
    std::vector<ConversionGap> gaps;
    MaceStatus status = ConvertOnnxModel(path, {}, &graph, &gaps);
    if (status == MaceStatus::MACE_SUCCESS) {
      status = RunDefaultPasses(&graph);
    }
    ModelBuilder model;
    if (status == MaceStatus::MACE_SUCCESS) status = graph.Finish("m", &model);
    if (status == MaceStatus::MACE_SUCCESS) {
      ++converted;
    } else {
      EXPECT_FALSE(status.information().empty());
      ++errors;
    }
  }
  std::remove(path.c_str());
  EXPECT_GT(errors, 50);
  EXPECT_GT(converted, 20);
  std::printf("onnx corruptions: %d errors, %d converted\n", errors,
              converted);
}

}  // namespace
}  // namespace converter
}  // namespace mace
