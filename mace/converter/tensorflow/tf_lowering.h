// What a TensorFlow op lowering sees: the node (typed attributes, resolved
// input and output names) and helpers to emit MACE ops into the
// GraphBuilder.
//
// TensorFlow is NHWC like MACE's CPU ops, so tensors keep TensorFlow's
// shapes and values: tensor "n" (or "n:k") of the GraphDef is the graph
// tensor of that name unless a lowering renamed it (Identity and friends
// become renames, not copies).

#ifndef MACE_CONVERTER_TENSORFLOW_TF_LOWERING_H_
#define MACE_CONVERTER_TENSORFLOW_TF_LOWERING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/tensorflow/tf_graph.pb.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {

class TfContext;

// "n" → ("n", 0), "n:2" → ("n", 2), "^n" → ("n", -1) (a control input).
struct TfTensorRef {
  std::string node;
  int index = 0;
};
TfTensorRef ParseTfInput(const std::string &input);
// The canonical tensor name: "n" for output 0, "n:k" otherwise.
std::string TfTensorName(const std::string &node, int index);

// One node with typed attribute access; missing attributes take defaults,
// attributes of the wrong kind are errors naming node and attribute.
class TfNode {
 public:
  TfNode(const tf::NodeDef &node, TfContext *context);

  const std::string &op() const { return node_.op(); }
  const std::string &name() const { return node_.name(); }

  // Data inputs only (control inputs "^n" are dropped).
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // Resolved graph names.
  std::string Input(int i) const;
  std::string Output(int i) const;
  // The TensorFlow tensor name of data input i ("n" or "n:k").
  const std::string &RawInput(int i) const { return inputs_[i]; }

  MaceStatus ExpectInputs(int min, int max) const;

  bool HasAttr(const std::string &name) const;
  MaceStatus Int(const std::string &name, int64_t default_value,
                 int64_t *value) const;
  MaceStatus Float(const std::string &name, float default_value,
                   float *value) const;
  MaceStatus Bool(const std::string &name, bool default_value,
                  bool *value) const;
  MaceStatus String(const std::string &name, const std::string &default_value,
                    std::string *value) const;
  MaceStatus Type(const std::string &name, tf::DataType default_value,
                  tf::DataType *value) const;
  MaceStatus Ints(const std::string &name,
                  const std::vector<int64_t> &default_value,
                  std::vector<int64_t> *value) const;
  // A shape attribute; *known is false for an unknown rank.
  MaceStatus ShapeAttr(const std::string &name, std::vector<int64_t> *dims,
                       bool *known) const;
  const tf::AttrValue *FindAttr(const std::string &name) const;

  template <typename... Pieces>
  MaceStatus Unsupported(const Pieces &...pieces) const {
    return mace::Unsupported("node '", name(), "' (", op(), "): ", pieces...);
  }
  template <typename... Pieces>
  MaceStatus InvalidArgs(const Pieces &...pieces) const {
    return mace::InvalidArgs("node '", name(), "' (", op(), "): ", pieces...);
  }

  const tf::NodeDef &proto() const { return node_; }

 private:
  const tf::NodeDef &node_;
  TfContext *context_;
  std::vector<std::string> inputs_;
};

// The GraphDef's nodes by name and how many data inputs read each node.
struct TfGraphIndex {
  std::map<std::string, const tf::NodeDef *> nodes;
  std::map<std::string, int> consumers;
};

// SpaceToBatchND → Conv2D / DepthwiseConv2dNative → BatchToSpaceND, as TF
// writes a dilated convolution: the conv runs dilated on the
// SpaceToBatchND's input with pads = paddings − crops.
struct AtrousConv {
  std::vector<int64_t> dilations;  // [h, w]
  std::vector<int64_t> pads;       // [top, left, bottom, right]
};

// Emission helpers shared by all lowerings.
class TfContext {
 public:
  TfContext(GraphBuilder *graph, const TfGraphIndex *index)
      : graph_(graph), index_(index) {}

  GraphBuilder *graph() { return graph_; }
  const TfGraphIndex &index() const { return *index_; }

  std::string Resolve(const std::string &tf_name) const;
  void Rename(const std::string &tf_name, const std::string &graph_name);

  const Tensor *Find(const std::string &name) const {
    return graph_->Find(name);
  }
  const Shape &ShapeOf(const std::string &name) const {
    static const Shape kNoShape;
    const Tensor *tensor = graph_->Find(name);
    return tensor != nullptr ? tensor->shape() : kNoShape;
  }
  int RankOf(const std::string &name) const {
    return static_cast<int>(ShapeOf(name).size());
  }
  bool IsInt(const std::string &name) const {
    const Tensor *tensor = graph_->Find(name);
    return tensor != nullptr && tensor->dtype() == DT_INT32;
  }

  std::string Temp(const std::string &base) { return graph_->UniqueName(base); }
  MaceStatus Emit(const std::string &type, const std::string &name,
                  const std::vector<std::string> &inputs,
                  const std::vector<std::string> &outputs,
                  const std::vector<OpArg> &args = {}) {
    return graph_->AddOp(type, name, inputs, outputs, args);
  }

  // Reads a constant input as integers / floats; an error naming the node
  // when the input is not a constant, or, for integers (which every
  // caller reads as an argument: a shape, axes, paddings), when it holds
  // more than kMaxArgumentValues values.
  static constexpr int64_t kMaxArgumentValues = 4096;
  MaceStatus ConstInts(const TfNode &node, int input,
                       std::vector<int64_t> *values) const;
  MaceStatus ConstFloats(const TfNode &node, int input,
                         std::vector<float> *values) const;
  // A constant scalar (or one-element) input.
  MaceStatus ConstScalar(const TfNode &node, int input, float *value) const;

  // Atrous convolutions found before lowering, by the conv node's name;
  // their SpaceToBatchND and BatchToSpaceND nodes become renames.
  std::map<std::string, AtrousConv> *atrous_convs() { return &atrous_; }
  std::map<std::string, std::string> *atrous_ends() { return &atrous_ends_; }

 private:
  GraphBuilder *graph_;
  const TfGraphIndex *index_;
  std::map<std::string, std::string> renames_;
  std::map<std::string, AtrousConv> atrous_;
  // SpaceToBatchND / BatchToSpaceND node → the conv node of its pattern.
  std::map<std::string, std::string> atrous_ends_;
};

using TfLowering = MaceStatus (*)(const TfNode &node, TfContext *context);

// Lowerings by TensorFlow op type. Each family file adds its own.
using TfLoweringTable = std::map<std::string, TfLowering>;
const TfLoweringTable &TfLowerings();

void RegisterTfConvOps(TfLoweringTable *table);
void RegisterTfElementwiseOps(TfLoweringTable *table);
void RegisterTfShapeOps(TfLoweringTable *table);
void RegisterTfTensorOps(TfLoweringTable *table);

// Marks the atrous-conv patterns of the graph in `context` (patterns whose
// parameters are not constant or do not fit are left as they are: their
// ops lower one by one).
void FindAtrousConvs(const tf::GraphDef &graph, TfContext *context);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_TENSORFLOW_TF_LOWERING_H_
