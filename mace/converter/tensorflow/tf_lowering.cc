#include "mace/converter/tensorflow/tf_lowering.h"

#include <cstdlib>

#include "mace/converter/common/frontend.h"
#include "mace/core/status.h"

namespace mace {
namespace converter {
namespace {

const char *AttrKind(const tf::AttrValue &attr) {
  switch (attr.value_case()) {
    case tf::AttrValue::kS:
      return "a string";
    case tf::AttrValue::kI:
      return "an int";
    case tf::AttrValue::kF:
      return "a float";
    case tf::AttrValue::kB:
      return "a bool";
    case tf::AttrValue::kType:
      return "a type";
    case tf::AttrValue::kShape:
      return "a shape";
    case tf::AttrValue::kTensor:
      return "a tensor";
    case tf::AttrValue::kList:
      return "a list";
    case tf::AttrValue::kFunc:
      return "a function";
    case tf::AttrValue::kPlaceholder:
      return "a placeholder";
    default:
      return "empty";
  }
}

}  // namespace

TfTensorRef ParseTfInput(const std::string &input) {
  TfTensorRef ref;
  if (!input.empty() && input[0] == '^') {
    ref.node = input.substr(1);
    ref.index = -1;
    return ref;
  }
  const size_t colon = input.rfind(':');
  if (colon != std::string::npos && colon + 1 < input.size() &&
      input.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
      input.size() - colon <= 9) {
    ref.node = input.substr(0, colon);
    ref.index = std::atoi(input.c_str() + colon + 1);
  } else {
    ref.node = input;
  }
  return ref;
}

std::string TfTensorName(const std::string &node, int index) {
  return index == 0 ? node : node + ":" + std::to_string(index);
}

TfNode::TfNode(const tf::NodeDef &node, TfContext *context)
    : node_(node), context_(context) {
  for (const std::string &input : node.input()) {
    const TfTensorRef ref = ParseTfInput(input);
    if (ref.index >= 0) inputs_.push_back(TfTensorName(ref.node, ref.index));
  }
}

std::string TfNode::Input(int i) const {
  return i < num_inputs() ? context_->Resolve(inputs_[i]) : std::string();
}

std::string TfNode::Output(int i) const {
  return context_->Resolve(TfTensorName(name(), i));
}

MaceStatus TfNode::ExpectInputs(int min, int max) const {
  if (num_inputs() < min || num_inputs() > max) {
    if (min == max) {
      return InvalidArgs("expects ", min, " inputs, has ", num_inputs());
    }
    return InvalidArgs("expects ", min, " to ", max, " inputs, has ",
                       num_inputs());
  }
  return MaceStatus::MACE_SUCCESS;
}

const tf::AttrValue *TfNode::FindAttr(const std::string &name) const {
  auto it = node_.attr().find(name);
  return it == node_.attr().end() ? nullptr : &it->second;
}

bool TfNode::HasAttr(const std::string &name) const {
  return FindAttr(name) != nullptr;
}

namespace {

// An attribute read with a default: `default_value` when absent, `read` of
// it when `accepts` it, else an error naming the attribute, the `kind`
// expected and what it holds.
template <typename T, typename Accepts, typename Read>
MaceStatus ReadAttr(const TfNode &node, const std::string &name,
                    const char *kind, const T &default_value, Accepts accepts,
                    Read read, T *value) {
  const tf::AttrValue *attr = node.FindAttr(name);
  if (attr == nullptr) {
    *value = default_value;
  } else if (accepts(*attr)) {
    *value = read(*attr);
  } else {
    return node.InvalidArgs("attribute '", name, "' should be ", kind, ", is ",
                            AttrKind(*attr));
  }
  return MaceStatus::MACE_SUCCESS;
}

// Accepts an attribute holding `kCase`.
template <tf::AttrValue::ValueCase kCase>
bool Holds(const tf::AttrValue &attr) {
  return attr.value_case() == kCase;
}

}  // namespace

MaceStatus TfNode::Int(const std::string &name, int64_t default_value,
                       int64_t *value) const {
  return ReadAttr(
      *this, name, "an int", default_value, Holds<tf::AttrValue::kI>,
      [](const tf::AttrValue &a) { return static_cast<int64_t>(a.i()); },
      value);
}

MaceStatus TfNode::Float(const std::string &name, float default_value,
                         float *value) const {
  return ReadAttr(
      *this, name, "a float", default_value, Holds<tf::AttrValue::kF>,
      [](const tf::AttrValue &a) { return a.f(); }, value);
}

MaceStatus TfNode::Bool(const std::string &name, bool default_value,
                        bool *value) const {
  return ReadAttr(
      *this, name, "a bool", default_value, Holds<tf::AttrValue::kB>,
      [](const tf::AttrValue &a) { return a.b(); }, value);
}

MaceStatus TfNode::String(const std::string &name,
                          const std::string &default_value,
                          std::string *value) const {
  return ReadAttr(
      *this, name, "a string", default_value, Holds<tf::AttrValue::kS>,
      [](const tf::AttrValue &a) { return a.s(); }, value);
}

MaceStatus TfNode::Type(const std::string &name, tf::DataType default_value,
                        tf::DataType *value) const {
  return ReadAttr(
      *this, name, "a type", default_value, Holds<tf::AttrValue::kType>,
      [](const tf::AttrValue &a) { return a.type(); }, value);
}

MaceStatus TfNode::Ints(const std::string &name,
                        const std::vector<int64_t> &default_value,
                        std::vector<int64_t> *value) const {
  // A list carries no element type: it is an int list when it holds no
  // strings or floats (an empty one included).
  return ReadAttr(
      *this, name, "an int list", default_value,
      [](const tf::AttrValue &a) {
        return a.value_case() == tf::AttrValue::kList &&
               a.list().s_size() == 0 && a.list().f_size() == 0;
      },
      [](const tf::AttrValue &a) {
        return std::vector<int64_t>(a.list().i().begin(), a.list().i().end());
      },
      value);
}

MaceStatus TfNode::ShapeAttr(const std::string &name,
                             std::vector<int64_t> *dims, bool *known) const {
  const tf::AttrValue *attr = FindAttr(name);
  dims->clear();
  *known = false;
  if (attr == nullptr) return MaceStatus::MACE_SUCCESS;
  if (attr->value_case() != tf::AttrValue::kShape) {
    return InvalidArgs("attribute '", name, "' should be a shape, is ",
                       AttrKind(*attr));
  }
  if (attr->shape().unknown_rank()) return MaceStatus::MACE_SUCCESS;
  for (const auto &dim : attr->shape().dim()) dims->push_back(dim.size());
  *known = true;
  return MaceStatus::MACE_SUCCESS;
}

std::string TfContext::Resolve(const std::string &tf_name) const {
  auto it = renames_.find(tf_name);
  return it == renames_.end() ? tf_name : it->second;
}

void TfContext::Rename(const std::string &tf_name,
                       const std::string &graph_name) {
  renames_[tf_name] = graph_name;
}

MaceStatus TfContext::ConstInts(const TfNode &node, int input,
                                std::vector<int64_t> *values) const {
  const std::string name = node.Input(input);
  const Tensor *tensor = name.empty() ? nullptr : Find(name);
  if (tensor == nullptr || !tensor->is_constant()) {
    return node.Unsupported("input ", input, " '", node.RawInput(input),
                            "' must be a constant (or computable from "
                            "shapes at conversion time)");
  }
  // Every caller reads an argument (a shape, axes, paddings, a
  // permutation): a few values a dimension. A fuzzed BroadcastTo once
  // took a 226M-value constant for its shape and asked for GBs.
  if (tensor->size() > kMaxArgumentValues) {
    return node.InvalidArgs("input ", input, " '", node.RawInput(input),
                            "' holds ", tensor->size(), " values, more than ",
                            "the ", kMaxArgumentValues, " an argument (shape, ",
                            "axes, paddings) may have");
  }
  ConstantValues(*tensor, values);
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus TfContext::ConstFloats(const TfNode &node, int input,
                                  std::vector<float> *values) const {
  const std::string name = node.Input(input);
  const Tensor *tensor = name.empty() ? nullptr : Find(name);
  if (tensor == nullptr || !tensor->is_constant()) {
    return node.Unsupported("input ", input, " '", node.RawInput(input),
                            "' must be a constant");
  }
  ConstantValues(*tensor, values);
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus TfContext::ConstScalar(const TfNode &node, int input,
                                  float *value) const {
  std::vector<float> values;
  MACE_RETURN_IF_ERROR(ConstFloats(node, input, &values));
  if (values.size() != 1) {
    return node.InvalidArgs("input ", input, " '", node.RawInput(input),
                            "' must be a scalar, has ", values.size(),
                            " values");
  }
  *value = values[0];
  return MaceStatus::MACE_SUCCESS;
}

const TfLoweringTable &TfLowerings() {
  static const TfLoweringTable *table = [] {
    auto *built = new TfLoweringTable;
    RegisterTfConvOps(built);
    RegisterTfElementwiseOps(built);
    RegisterTfShapeOps(built);
    RegisterTfTensorOps(built);
    return built;
  }();
  return *table;
}

}  // namespace converter
}  // namespace mace
