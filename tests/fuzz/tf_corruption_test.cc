// Random corruptions of a valid TensorFlow GraphDef (bit flips, truncations,
// field changes) must give a conversion error or a valid model, never a
// crash; scripts/test.sh also runs the fuzz group under ASan + UBSan.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/passes/passes.h"
#include "mace/converter/tensorflow/tf_frontend.h"
#include "mace/converter/tensorflow/tf_graph.pb.h"

namespace mace {
namespace converter {
namespace {

constexpr int kCorruptions = 500;

tf::NodeDef *AddNode(tf::GraphDef *graph, const std::string &name,
                     const std::string &op,
                     const std::vector<std::string> &inputs) {
  tf::NodeDef *node = graph->add_node();
  node->set_name(name);
  node->set_op(op);
  for (const std::string &input : inputs) node->add_input(input);
  return node;
}

void SetInts(tf::NodeDef *node, const std::string &name,
             const std::vector<int64_t> &values) {
  auto *list = (*node->mutable_attr())[name].mutable_list();
  for (int64_t v : values) list->add_i(v);
}

void SetString(tf::NodeDef *node, const std::string &name,
               const std::string &value) {
  (*node->mutable_attr())[name].set_s(value);
}

// Weights as raw bytes (`raw`) or as float_val.
void AddConst(tf::GraphDef *graph, const std::string &name,
              const std::vector<int64_t> &dims, bool raw) {
  tf::NodeDef *node = AddNode(graph, name, "Const", {});
  tf::TensorProto *t = (*node->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(tf::DT_FLOAT);
  int64_t count = 1;
  for (int64_t d : dims) {
    t->mutable_tensor_shape()->add_dim()->set_size(d);
    count *= d;
  }
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    values[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
  }
  if (raw) {
    t->set_tensor_content(std::string(
        reinterpret_cast<const char *>(values.data()), values.size() * 4));
  } else {
    for (float v : values) t->add_float_val(v);
  }
}

void AddIntConst(tf::GraphDef *graph, const std::string &name,
                 const std::vector<int32_t> &values) {
  tf::NodeDef *node = AddNode(graph, name, "Const", {});
  tf::TensorProto *t = (*node->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(tf::DT_INT32);
  t->mutable_tensor_shape()->add_dim()->set_size(
      static_cast<int64_t>(values.size()));
  for (int32_t v : values) t->add_int_val(v);
}

// A conv, a depthwise conv, a pool and a Keras-style flatten.
tf::GraphDef Model() {
  tf::GraphDef graph;
  tf::NodeDef *x = AddNode(&graph, "x", "Placeholder", {});
  (*x->mutable_attr())["dtype"].set_type(tf::DT_FLOAT);
  auto *shape = (*x->mutable_attr())["shape"].mutable_shape();
  for (int64_t d : {1, 9, 7, 3}) shape->add_dim()->set_size(d);
  AddConst(&graph, "w1", {3, 3, 3, 4}, true);
  AddConst(&graph, "w2", {3, 3, 4, 1}, false);
  tf::NodeDef *conv = AddNode(&graph, "conv", "Conv2D", {"x", "w1"});
  SetInts(conv, "strides", {1, 2, 1, 1});
  SetString(conv, "padding", "SAME");
  tf::NodeDef *dw =
      AddNode(&graph, "dw", "DepthwiseConv2dNative", {"conv", "w2"});
  SetInts(dw, "strides", {1, 1, 1, 1});
  SetString(dw, "padding", "VALID");
  AddNode(&graph, "relu", "Relu6", {"dw"});
  tf::NodeDef *pool = AddNode(&graph, "pool", "MaxPool", {"relu"});
  SetInts(pool, "ksize", {1, 2, 2, 1});
  SetInts(pool, "strides", {1, 1, 1, 1});
  SetString(pool, "padding", "SAME");
  AddNode(&graph, "shape", "Shape", {"pool"});
  AddIntConst(&graph, "b", {0});
  AddIntConst(&graph, "e", {1});
  AddIntConst(&graph, "s", {1});
  tf::NodeDef *slice =
      AddNode(&graph, "batch", "StridedSlice", {"shape", "b", "e", "s"});
  (*slice->mutable_attr())["shrink_axis_mask"].set_i(1);
  AddIntConst(&graph, "minus_one", {-1});
  AddNode(&graph, "target", "ConcatV2", {"e", "minus_one", "b"});
  AddNode(&graph, "y", "Reshape", {"pool", "target"});
  return graph;
}

int64_t WildInt(std::mt19937 *rng) {
  static const int64_t kValues[] = {-1,      0,         1,         2,        5,
                                    1 << 20, INT64_MAX, INT64_MIN, 1LL << 40};
  return kValues[(*rng)() % (sizeof(kValues) / sizeof(kValues[0]))];
}

// Attribute values of a node, in name order, to pick one to change.
tf::AttrValue *SomeAttr(tf::NodeDef *node, std::mt19937 *rng) {
  if (node->attr().empty()) return nullptr;
  auto it = node->mutable_attr()->begin();
  std::advance(it, (*rng)() % node->attr_size());
  return &it->second;
}

void ChangeField(tf::GraphDef *graph, std::mt19937 *rng) {
  std::mt19937 &r = *rng;
  tf::NodeDef *node = graph->mutable_node(r() % graph->node_size());
  switch (r() % 6) {
    case 0: {  // a constant's or the placeholder's shape
      tf::AttrValue *attr = SomeAttr(node, rng);
      if (attr == nullptr) break;
      tf::TensorShapeProto *shape =
          attr->has_tensor()
              ? attr->mutable_tensor()->mutable_tensor_shape()
              : (attr->has_shape() ? attr->mutable_shape() : nullptr);
      if (shape == nullptr || shape->dim_size() == 0) break;
      shape->mutable_dim(r() % shape->dim_size())->set_size(WildInt(rng));
      break;
    }
    case 1: {  // a list or int attribute
      tf::AttrValue *attr = SomeAttr(node, rng);
      if (attr == nullptr) break;
      if (attr->has_list() && attr->list().i_size() > 0) {
        attr->mutable_list()->set_i(r() % attr->list().i_size(), WildInt(rng));
      } else {
        attr->set_i(WildInt(rng));  // the wrong kind for most attributes
      }
      break;
    }
    case 2: {  // an element type
      tf::AttrValue *attr = SomeAttr(node, rng);
      if (attr == nullptr) break;
      const auto type = static_cast<tf::DataType>(r() % 25);
      if (attr->has_tensor()) {
        attr->mutable_tensor()->set_dtype(type);
      } else {
        attr->set_type(type);
      }
      break;
    }
    case 3: {  // an op type
      static const char *const kOps[] = {"Conv2D",      "Relu",  "Reshape",
                                         "Split",       "Pack",  "Unknown",
                                         "Placeholder", "Const", "NoOp"};
      node->set_op(kOps[r() % (sizeof(kOps) / sizeof(kOps[0]))]);
      break;
    }
    case 4: {  // an input: another tensor, a control input, nothing
      if (node->input_size() == 0) break;
      static const char *const kInputs[] = {"conv", "x:1", "^relu",  "",
                                            "y",    "w1",  "shape:0"};
      node->set_input(r() % node->input_size(),
                      kInputs[r() % (sizeof(kInputs) / sizeof(kInputs[0]))]);
      break;
    }
    default:  // a node's name
      node->set_name(r() % 2 ? "x" : "");
      break;
  }
}

TEST(TfCorruptionTest, CorruptedGraphsGiveErrorsOrValidModels) {
  const char *tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/mace_tf_fuzz_" +
                           std::to_string(::getpid()) + ".pb";
  std::string valid;
  Model().SerializeToString(&valid);
  std::mt19937 rng(11);
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
      tf::GraphDef graph = Model();
      for (int c = 0; c < 1 + static_cast<int>(rng() % 3); ++c) {
        ChangeField(&graph, &rng);
      }
      graph.SerializeToString(&bytes);
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    SCOPED_TRACE("corruption #" + std::to_string(i));
    GraphBuilder graph;
    std::vector<ConversionGap> gaps;
    MaceStatus status = ConvertTensorflowModel(path, {}, &graph, &gaps);
    if (status == MaceStatus::MACE_SUCCESS) status = RunDefaultPasses(&graph);
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
  std::printf("tf corruptions: %d errors, %d converted\n", errors, converted);
}

}  // namespace
}  // namespace converter
}  // namespace mace
