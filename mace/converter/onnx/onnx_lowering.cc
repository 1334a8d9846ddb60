#include "mace/converter/onnx/onnx_lowering.h"

#include <limits>

#include "mace/converter/common/frontend.h"
#include "mace/converter/onnx/onnx_arity.h"
#include "mace/converter/onnx/onnx_tensor.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

const char *AttrKind(const onnx::AttributeProto &attr) {
  switch (attr.type()) {
    case onnx::AttributeProto::FLOAT: return "a float";
    case onnx::AttributeProto::INT: return "an int";
    case onnx::AttributeProto::STRING: return "a string";
    case onnx::AttributeProto::TENSOR: return "a tensor";
    case onnx::AttributeProto::FLOATS: return "a float list";
    case onnx::AttributeProto::INTS: return "an int list";
    case onnx::AttributeProto::GRAPH: return "a graph";
    default: return "another kind";
  }
}

}  // namespace

OnnxNode::OnnxNode(const onnx::NodeProto &node, OnnxContext *context)
    : node_(node), context_(context) {
  name_ = !node.name().empty()
              ? node.name()
              : (node.output_size() > 0 ? node.output(0) : node.op_type());
}

int OnnxNode::opset() const { return context_->opset(); }

bool OnnxNode::HasInput(int i) const {
  return i < node_.input_size() && !node_.input(i).empty();
}

std::string OnnxNode::Input(int i) const {
  return HasInput(i) ? context_->Resolve(node_.input(i)) : std::string();
}

std::string OnnxNode::Output(int i) const {
  return i < node_.output_size() ? context_->Resolve(node_.output(i))
                                 : std::string();
}

const onnx::AttributeProto *OnnxNode::Find(const std::string &name) const {
  for (const onnx::AttributeProto &attr : node_.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

MaceStatus OnnxNode::ExpectInputs(int min, int max) const {
  if (num_inputs() < min || num_inputs() > max) {
    const std::string count =
        min == max ? std::to_string(min)
        : max == kOnnxVariadic ? StrCat("at least ", min)
                               : StrCat(min, " to ", max);
    return InvalidArgs("expects ", count, max == 1 ? " input" : " inputs",
                       ", has ", num_inputs());
  }
  // A variadic op's inputs are all required (ONNX has no optional
  // variadic inputs); others, the first `min`.
  const int required = max == kOnnxVariadic ? num_inputs() : min;
  for (int i = 0; i < required; ++i) {
    if (!HasInput(i)) return InvalidArgs("input ", i, " is required");
  }
  return MaceStatus::MACE_SUCCESS;
}

bool OnnxNode::HasAttr(const std::string &name) const {
  return Find(name) != nullptr;
}

MaceStatus OnnxNode::Int(const std::string &name, int64_t default_value,
                         int64_t *value) const {
  const onnx::AttributeProto *attr = Find(name);
  if (attr == nullptr) {
    *value = default_value;
  } else if (attr->type() == onnx::AttributeProto::INT || attr->has_i()) {
    *value = attr->i();
  } else {
    return InvalidArgs("attribute '", name, "' should be an int, is ",
                       AttrKind(*attr));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OnnxNode::Float(const std::string &name, float default_value,
                           float *value) const {
  const onnx::AttributeProto *attr = Find(name);
  if (attr == nullptr) {
    *value = default_value;
  } else if (attr->type() == onnx::AttributeProto::FLOAT || attr->has_f()) {
    *value = attr->f();
  } else if (attr->type() == onnx::AttributeProto::INT) {
    *value = static_cast<float>(attr->i());
  } else {
    return InvalidArgs("attribute '", name, "' should be a float, is ",
                       AttrKind(*attr));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OnnxNode::String(const std::string &name,
                            const std::string &default_value,
                            std::string *value) const {
  const onnx::AttributeProto *attr = Find(name);
  if (attr == nullptr) {
    *value = default_value;
  } else if (attr->type() == onnx::AttributeProto::STRING || attr->has_s()) {
    *value = attr->s();
  } else {
    return InvalidArgs("attribute '", name, "' should be a string, is ",
                       AttrKind(*attr));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OnnxNode::Ints(const std::string &name,
                          const std::vector<int64_t> &default_value,
                          std::vector<int64_t> *value) const {
  const onnx::AttributeProto *attr = Find(name);
  if (attr == nullptr) {
    *value = default_value;
  } else if (attr->type() == onnx::AttributeProto::INTS ||
             attr->type() == onnx::AttributeProto::UNDEFINED) {
    value->assign(attr->ints().begin(), attr->ints().end());
  } else {
    return InvalidArgs("attribute '", name, "' should be an int list, is ",
                       AttrKind(*attr));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OnnxNode::Floats(const std::string &name,
                            const std::vector<float> &default_value,
                            std::vector<float> *value) const {
  const onnx::AttributeProto *attr = Find(name);
  if (attr == nullptr) {
    *value = default_value;
  } else if (attr->type() == onnx::AttributeProto::FLOATS ||
             attr->type() == onnx::AttributeProto::UNDEFINED) {
    value->assign(attr->floats().begin(), attr->floats().end());
  } else {
    return InvalidArgs("attribute '", name, "' should be a float list, is ",
                       AttrKind(*attr));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OnnxNode::TensorAttr(const std::string &name,
                                const std::string &as_name) const {
  const onnx::AttributeProto *attr = Find(name);
  if (attr == nullptr || !attr->has_t()) {
    return InvalidArgs("attribute '", name, "' should be a tensor");
  }
  DecodedTensor tensor;
  MACE_RETURN_IF_ERROR(WithContext(
      DecodeOnnxTensor(attr->t(), context_->model_dir(), &tensor),
      StrCat("node '", name_, "' (", op_type(), ")")));
  if (tensor.is_int) {
    context_->graph()->AddConstantInt(as_name, tensor.shape, tensor.ints);
  } else {
    context_->graph()->AddConstant(as_name, tensor.shape, tensor.floats);
  }
  return MaceStatus::MACE_SUCCESS;
}

int OnnxContext::OnnxType(const std::string &onnx_name) const {
  auto it = onnx_types_.find(onnx_name);
  return it == onnx_types_.end() ? 0 : it->second;
}

void OnnxContext::SetOnnxType(const std::string &onnx_name, int elem_type) {
  onnx_types_[onnx_name] = elem_type;
}

std::string OnnxContext::Resolve(const std::string &onnx_name) const {
  auto it = renames_.find(onnx_name);
  return it == renames_.end() ? onnx_name : it->second;
}

void OnnxContext::Rename(const std::string &onnx_name,
                         const std::string &graph_name) {
  renames_[onnx_name] = graph_name;
}

MaceStatus OnnxContext::Transpose(const std::string &name,
                                  const std::string &input,
                                  const std::vector<int64_t> &perm,
                                  std::string *output) {
  *output = Temp(input + "__t");
  return Emit("Transpose", Temp(name + "__transpose"), {input}, {*output},
              {OpArg::Ints("dims", perm)});
}

MaceStatus OnnxContext::ToChannelLast(const std::string &name,
                                      const std::string &input,
                                      std::string *output) {
  return Transpose(name, input, ChannelLastPerm(RankOf(input)), output);
}

MaceStatus OnnxContext::FromChannelLast(const std::string &name,
                                        const std::string &input,
                                        const std::string &output) {
  return Emit("Transpose", Temp(name + "__transpose_back"), {input},
              {output},
              {OpArg::Ints("dims", ChannelSecondPerm(RankOf(input)))});
}

MaceStatus OnnxContext::ConstInts(const OnnxNode &node, int input,
                                  std::vector<int64_t> *values) const {
  const std::string name = node.Input(input);
  const Tensor *tensor = name.empty() ? nullptr : Find(name);
  if (tensor == nullptr || !tensor->is_constant()) {
    return node.Unsupported("input ", input, " '", name,
                            "' must be a constant (or computable from "
                            "shapes at conversion time)");
  }
  ConstantValues(*tensor, values);
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus OnnxContext::ConstFloats(const OnnxNode &node, int input,
                                    std::vector<float> *values) const {
  const std::string name = node.Input(input);
  const Tensor *tensor = name.empty() ? nullptr : Find(name);
  if (tensor == nullptr || !tensor->is_constant()) {
    return node.Unsupported("input ", input, " '", name,
                            "' must be a constant");
  }
  ConstantValues(*tensor, values);
  return MaceStatus::MACE_SUCCESS;
}

const OnnxLoweringTable &OnnxLowerings() {
  static const OnnxLoweringTable *table = [] {
    auto *built = new OnnxLoweringTable;
    RegisterOnnxActivationOps(built);
    RegisterOnnxConvOps(built);
    RegisterOnnxElementwiseOps(built);
    RegisterOnnxNormalizationOps(built);
    RegisterOnnxShapeOps(built);
    RegisterOnnxReduceOps(built);
    RegisterOnnxTensorOps(built);
    return built;
  }();
  return *table;
}

MaceStatus EmitFilled(const OnnxNode &node, OnnxContext *context,
                      const std::string &name, const Shape &shape,
                      DataType dtype, double value) {
  std::vector<int32_t> dims;
  for (int64_t dim : shape) {
    if (dim < 0 || dim > std::numeric_limits<int32_t>::max()) {
      return node.InvalidArgs("shape ", ShapeToString(shape),
                              " has a dim outside 0 to 2^31 - 1");
    }
    dims.push_back(static_cast<int32_t>(dim));
  }
  GraphBuilder *graph = context->graph();
  const std::string dims_name = context->Temp(name + "__shape");
  graph->AddConstantInt(dims_name, {static_cast<int64_t>(dims.size())}, dims);
  const std::string value_name = context->Temp(name + "__value");
  if (dtype == DT_INT32) {
    graph->AddConstantInt(value_name, {}, {static_cast<int32_t>(value)});
  } else {
    graph->AddConstant(value_name, {}, {static_cast<float>(value)});
  }
  return context->Emit("Fill", context->Temp(name + "__fill"),
                       {dims_name, value_name}, {name});
}

}  // namespace converter
}  // namespace mace
