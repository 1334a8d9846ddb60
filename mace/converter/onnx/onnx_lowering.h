// What an ONNX op lowering sees: the node (attributes, resolved input and
// output names) and helpers to emit MACE ops into the GraphBuilder.
//
// Lowerings work in ONNX's own layout: an ONNX tensor named x holds the
// same values, in the same shape, as in ONNX Runtime. Ops whose MACE kernel
// is NHWC are wrapped as Transpose(NCHW→NHWC) → op → Transpose(NHWC→NCHW);
// the transpose passes remove the pairs afterwards.

#ifndef MACE_CONVERTER_ONNX_ONNX_LOWERING_H_
#define MACE_CONVERTER_ONNX_ONNX_LOWERING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mace/converter/ir/graph_builder.h"
#include "mace/converter/onnx/onnx.pb.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {

class OnnxContext;

// One node with typed attribute access; missing attributes take defaults,
// attributes of the wrong kind are errors naming node and attribute.
class OnnxNode {
 public:
  OnnxNode(const onnx::NodeProto &node, OnnxContext *context);

  const std::string &op_type() const { return node_.op_type(); }
  // The node's name, or its first output's when the node has none.
  const std::string &name() const { return name_; }
  int opset() const;

  int num_inputs() const { return node_.input_size(); }
  int num_outputs() const { return node_.output_size(); }
  // Optional inputs may be absent or named "": HasInput tells.
  bool HasInput(int i) const;
  // Resolved graph names (after renames such as layout changes).
  std::string Input(int i) const;
  std::string Output(int i) const;

  // Errors naming the node unless it has min..max inputs with the first
  // `min` present (not "").
  MaceStatus ExpectInputs(int min, int max) const;

  bool HasAttr(const std::string &name) const;
  MaceStatus Int(const std::string &name, int64_t default_value,
                 int64_t *value) const;
  MaceStatus Float(const std::string &name, float default_value,
                   float *value) const;
  MaceStatus String(const std::string &name, const std::string &default_value,
                    std::string *value) const;
  MaceStatus Ints(const std::string &name,
                  const std::vector<int64_t> &default_value,
                  std::vector<int64_t> *value) const;
  MaceStatus Floats(const std::string &name,
                    const std::vector<float> &default_value,
                    std::vector<float> *value) const;
  // A TENSOR attribute (Constant's value), as a constant named `as_name`.
  MaceStatus TensorAttr(const std::string &name, const std::string &as_name)
      const;

  template <typename... Pieces>
  MaceStatus Unsupported(const Pieces &...pieces) const {
    return mace::Unsupported("node '", name_, "' (", op_type(), "): ",
                             pieces...);
  }
  template <typename... Pieces>
  MaceStatus InvalidArgs(const Pieces &...pieces) const {
    return mace::InvalidArgs("node '", name_, "' (", op_type(), "): ",
                             pieces...);
  }

  const onnx::NodeProto &proto() const { return node_; }

 private:
  const onnx::AttributeProto *Find(const std::string &name) const;

  const onnx::NodeProto &node_;
  OnnxContext *context_;
  std::string name_;
};

// Emission helpers shared by all lowerings.
class OnnxContext {
 public:
  OnnxContext(GraphBuilder *graph, int opset, std::string model_dir)
      : graph_(graph), opset_(opset), model_dir_(std::move(model_dir)) {}

  GraphBuilder *graph() { return graph_; }
  int opset() const { return opset_; }
  const std::string &model_dir() const { return model_dir_; }

  // ONNX element type (TensorProto::DataType) of a value, where the model
  // declares it (inputs, initializers, value_info) or a lowering recorded
  // it; 0 when unknown. The graph itself only has float32 and int32.
  int OnnxType(const std::string &onnx_name) const;
  void SetOnnxType(const std::string &onnx_name, int elem_type);

  std::string Resolve(const std::string &onnx_name) const;
  void Rename(const std::string &onnx_name, const std::string &graph_name);

  const Tensor *Find(const std::string &name) const {
    return graph_->Find(name);
  }
  // The shape of a defined tensor; an empty shape for a name that is not
  // (an absent optional input), so a lowering never dereferences null.
  const Shape &ShapeOf(const std::string &name) const {
    static const Shape kNoShape;
    const Tensor *tensor = graph_->Find(name);
    return tensor != nullptr ? tensor->shape() : kNoShape;
  }
  int RankOf(const std::string &name) const {
    return static_cast<int>(ShapeOf(name).size());
  }

  // A fresh tensor name derived from `base`.
  std::string Temp(const std::string &base) {
    return graph_->UniqueName(base);
  }
  MaceStatus Emit(const std::string &type, const std::string &name,
                  const std::vector<std::string> &inputs,
                  const std::vector<std::string> &outputs,
                  const std::vector<OpArg> &args = {}) {
    return graph_->AddOp(type, name, inputs, outputs, args);
  }
  // Emits Transpose(input, perm) → a new tensor, returned in *output.
  MaceStatus Transpose(const std::string &name, const std::string &input,
                       const std::vector<int64_t> &perm, std::string *output);
  // NCHW-style (channel second) tensor of any rank >= 3 → channel last.
  MaceStatus ToChannelLast(const std::string &name, const std::string &input,
                           std::string *output);
  // Channel-last tensor → channel second, written to `output`.
  MaceStatus FromChannelLast(const std::string &name, const std::string &input,
                             const std::string &output);

  // Reads a constant input as integers / floats; an error naming the node
  // when the input is not a constant.
  MaceStatus ConstInts(const OnnxNode &node, int input,
                       std::vector<int64_t> *values) const;
  MaceStatus ConstFloats(const OnnxNode &node, int input,
                         std::vector<float> *values) const;

 private:
  GraphBuilder *graph_;
  int opset_;
  std::string model_dir_;
  std::map<std::string, std::string> renames_;
  std::map<std::string, int> onnx_types_;
};

// A tensor of `shape` filled with `value`, in `dtype`, named `name`: a
// Fill op, which folds to a constant unless it is too large to
// (GraphBuilder::AddOp). An error naming `node` when a dim is negative or
// above 2^31 - 1.
MaceStatus EmitFilled(const OnnxNode &node, OnnxContext *context,
                      const std::string &name, const Shape &shape,
                      DataType dtype, double value);

using OnnxLowering = MaceStatus (*)(const OnnxNode &node,
                                    OnnxContext *context);

// Lowerings by ONNX op type (default domain). Each family file adds its own.
using OnnxLoweringTable = std::map<std::string, OnnxLowering>;
const OnnxLoweringTable &OnnxLowerings();

void RegisterOnnxActivationOps(OnnxLoweringTable *table);
void RegisterOnnxConvOps(OnnxLoweringTable *table);
void RegisterOnnxElementwiseOps(OnnxLoweringTable *table);
void RegisterOnnxNormalizationOps(OnnxLoweringTable *table);
void RegisterOnnxShapeOps(OnnxLoweringTable *table);
void RegisterOnnxReduceOps(OnnxLoweringTable *table);
void RegisterOnnxTensorOps(OnnxLoweringTable *table);

}  // namespace converter
}  // namespace mace

#endif  // MACE_CONVERTER_ONNX_ONNX_LOWERING_H_
