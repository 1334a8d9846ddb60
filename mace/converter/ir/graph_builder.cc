#include "mace/converter/ir/graph_builder.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <set>

#include "mace/core/operation.h"
#include "mace/core/status.h"
#include "mace/ops/op_registry.h"

namespace mace {
namespace converter {
namespace {

// The most bytes (outputs and scratch) an op folded at conversion may use.
constexpr int64_t kMaxFoldedBytes = int64_t{256} << 20;

// AddConstant has no status to return: its caller already holds the
// values in a vector of the same size, so a failure here is the same
// out-of-memory as that vector's would have been, and is reported the
// same way (the mace command reports std::bad_alloc).
void AllocateOrThrow(Tensor *tensor) {
  if (tensor->AllocateOwned() != MaceStatus::MACE_SUCCESS) {
    throw std::bad_alloc();
  }
}

// The model keeps the dims of its inputs and outputs as int32.
MaceStatus CheckInfoDims(const char *kind, const std::string &name,
                         const Shape &shape) {
  for (int64_t dim : shape) {
    if (dim > std::numeric_limits<int32_t>::max()) {
      return InvalidArgs(kind, " '", name, "' has shape ",
                         ShapeToString(shape), "; a model holds dims up to ",
                         std::numeric_limits<int32_t>::max());
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

OpArg OpArg::Int(const std::string &name, int64_t value) {
  OpArg arg;
  arg.proto.set_name(name);
  arg.proto.set_i(value);
  return arg;
}
OpArg OpArg::Float(const std::string &name, float value) {
  OpArg arg;
  arg.proto.set_name(name);
  arg.proto.set_f(value);
  return arg;
}
OpArg OpArg::String(const std::string &name, const std::string &value) {
  OpArg arg;
  arg.proto.set_name(name);
  arg.proto.set_s(value);
  return arg;
}
OpArg OpArg::Ints(const std::string &name,
                  const std::vector<int64_t> &values) {
  OpArg arg;
  arg.proto.set_name(name);
  for (int64_t v : values) arg.proto.add_ints(v);
  return arg;
}
OpArg OpArg::Floats(const std::string &name,
                    const std::vector<float> &values) {
  OpArg arg;
  arg.proto.set_name(name);
  for (float v : values) arg.proto.add_floats(v);
  return arg;
}

GraphBuilder::GraphBuilder()
    : thread_pool_(std::make_unique<ThreadPool>(1, AFFINITY_NONE)) {
  thread_pool_->Init();
}

GraphBuilder::~GraphBuilder() = default;

Tensor *GraphBuilder::NewTensor(const std::string &name) {
  auto tensor = std::make_unique<Tensor>(name, DT_FLOAT, Shape{});
  Tensor *raw = tensor.get();
  tensors_[name] = std::move(tensor);
  return raw;
}

MaceStatus GraphBuilder::AddInput(const std::string &name, DataType dtype,
                                  const Shape &shape, int data_format) {
  if (Has(name)) return InvalidArgs("input '", name, "' is defined twice");
  if (!HasValidSize(shape, dtype)) {
    return InvalidArgs("input '", name, "': shape ", ShapeToString(shape),
                       " is invalid or holds more than ",
                       kMaxTensorBytes >> 30, " GiB");
  }
  Tensor *tensor = NewTensor(name);
  tensor->set_dtype(dtype);
  tensor->set_shape(shape);
  inputs_.push_back(name);
  input_formats_[name] = data_format;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus GraphBuilder::AddOutput(const std::string &name, int data_format) {
  if (!Has(name)) {
    return InvalidArgs("output '", name, "' is not produced by the graph");
  }
  if (IsGraphOutput(name)) {
    return InvalidArgs("output '", name, "' is listed twice");
  }
  outputs_.push_back(name);
  output_formats_[name] = data_format;
  return MaceStatus::MACE_SUCCESS;
}

void GraphBuilder::AddConstant(const std::string &name, const Shape &shape,
                               const std::vector<float> &values) {
  Tensor *tensor = NewTensor(name);
  tensor->set_shape(shape);
  tensor->set_dtype(DT_FLOAT);
  AllocateOrThrow(tensor);
  // Empty constants (a reduction over no axes) have no data to copy, and
  // memcpy must not see their null pointer.
  if (!values.empty()) {
    std::memcpy(tensor->raw_mutable_data(), values.data(),
                std::min<size_t>(values.size(), tensor->size()) * 4);
  }
  tensor->set_constant(true);
}

void GraphBuilder::AddConstantInt(const std::string &name, const Shape &shape,
                                  const std::vector<int32_t> &values) {
  Tensor *tensor = NewTensor(name);
  tensor->set_shape(shape);
  tensor->set_dtype(DT_INT32);
  AllocateOrThrow(tensor);
  // Empty constants (a reduction over no axes) have no data to copy, and
  // memcpy must not see their null pointer.
  if (!values.empty()) {
    std::memcpy(tensor->raw_mutable_data(), values.data(),
                std::min<size_t>(values.size(), tensor->size()) * 4);
  }
  tensor->set_constant(true);
}

void GraphBuilder::SetConstant(const std::string &name, const Shape &shape,
                               const std::vector<float> &values) {
  tensors_.erase(name);
  AddConstant(name, shape, values);
}

bool GraphBuilder::Has(const std::string &name) const {
  return tensors_.count(name) > 0;
}

const Tensor *GraphBuilder::Find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.get();
}

bool GraphBuilder::IsConstant(const std::string &name) const {
  const Tensor *tensor = Find(name);
  return tensor != nullptr && tensor->is_constant();
}

bool GraphBuilder::IsGraphOutput(const std::string &name) const {
  return std::find(outputs_.begin(), outputs_.end(), name) != outputs_.end();
}

bool GraphBuilder::IsGraphInput(const std::string &name) const {
  return input_formats_.count(name) > 0;
}

std::string GraphBuilder::UniqueName(const std::string &base) {
  std::string name = base;
  while (Has(name) || op_names_.count(name)) {
    name = base + "_" + std::to_string(++unique_counter_);
  }
  op_names_.insert(name);
  return name;
}

MaceStatus GraphBuilder::Infer(const OperatorDef &def, bool fold,
                               bool *folded) {
  *folded = false;
  std::unique_ptr<Operation> op = OpRegistry::Global().Create(def.type());
  if (op == nullptr) {
    return Unsupported("op '", def.name(), "': no MACE op '", def.type(),
                       "'");
  }
  std::vector<Tensor *> inputs;
  bool all_constant = true;
  for (const std::string &name : def.input()) {
    auto it = tensors_.find(name);
    if (it == tensors_.end()) {
      return InvalidArgs("op '", def.name(), "': input '", name,
                         "' is not defined");
    }
    inputs.push_back(it->second.get());
    all_constant = all_constant && it->second->is_constant();
  }
  std::vector<Tensor *> outputs;
  for (const std::string &name : def.output()) {
    auto it = tensors_.find(name);
    outputs.push_back(it != tensors_.end() ? it->second.get()
                                           : NewTensor(name));
  }
  OpContext context(def, inputs, outputs, thread_pool_.get());
  // Only folded ops run here; the others need nothing but their shapes.
  context.set_will_run(fold && all_constant);
  MACE_RETURN_IF_ERROR(op->Prepare(&context));
  int64_t output_bytes = 0;
  for (Tensor *output : outputs) {
    if (!HasValidSize(*output)) {
      return InvalidArgs("op '", def.name(), "': output '", output->name(),
                         "' has invalid shape ",
                         ShapeToString(output->shape()), " or type ",
                         DataTypeName(output->dtype()));
    }
    output_bytes += output->bytes();
  }
  // Larger results (or ones that need more scratch) stay ops, which the
  // engine folds at load: the converter neither allocates them nor writes
  // them into the weights.
  if (!fold || !all_constant ||
      output_bytes + context.scratch_bytes() > kMaxFoldedBytes) {
    return MaceStatus::MACE_SUCCESS;
  }
  for (Tensor *output : outputs) {
    MACE_RETURN_IF_ERROR(output->AllocateOwned());
  }
  const bool alias = op->output_memory() == OutputMemory::kAliasInput0;
  if (alias && outputs[0]->bytes() > 0) {
    std::memcpy(outputs[0]->raw_mutable_data(), inputs[0]->raw_data(),
                outputs[0]->bytes());
  }
  Tensor scratch("scratch", DT_UINT8, {context.scratch_bytes()});
  MACE_RETURN_IF_ERROR(scratch.AllocateOwned());
  context.BindScratch(scratch.raw_mutable_data());
  if (!alias) MACE_RETURN_IF_ERROR(op->Run(&context));
  for (Tensor *output : outputs) output->set_constant(true);
  *folded = true;
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus GraphBuilder::AddOp(const std::string &type,
                               const std::string &name,
                               const std::vector<std::string> &inputs,
                               const std::vector<std::string> &outputs,
                               const std::vector<OpArg> &args) {
  OperatorDef def;
  def.set_type(type);
  def.set_name(name);
  for (const std::string &input : inputs) def.add_input(input);
  for (const std::string &output : outputs) {
    if (Has(output)) {
      return InvalidArgs("op '", name, "': output '", output,
                         "' is already defined");
    }
    def.add_output(output);
  }
  for (const OpArg &arg : args) *def.add_arg() = arg.proto;
  op_names_.insert(name);
  bool folded = false;
  MaceStatus status = Infer(def, true, &folded);
  if (status != MaceStatus::MACE_SUCCESS) {
    for (const std::string &output : outputs) tensors_.erase(output);
    return status;
  }
  if (!folded) ops_.push_back(std::move(def));
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus GraphBuilder::Reinfer(size_t index) {
  bool folded = false;
  return Infer(ops_[index], false, &folded);
}

MaceStatus GraphBuilder::Finish(const std::string &model_name,
                                ModelBuilder *model) {
  *model = ModelBuilder(model_name);
  // An output that folded to a constant still needs an op producing it.
  for (const std::string &output : outputs_) {
    if (!IsConstant(output)) continue;
    const std::string source = UniqueName(output + "__const");
    tensors_[source] = std::move(tensors_[output]);
    tensors_[source]->set_name(source);
    tensors_.erase(output);
    OperatorDef def;
    def.set_type("Identity");
    def.set_name(output);
    def.add_input(source);
    def.add_output(output);
    bool folded = false;
    MACE_RETURN_IF_ERROR(Infer(def, false, &folded));
    ops_.push_back(def);
  }
  std::set<std::string> needed(outputs_.begin(), outputs_.end());
  std::vector<bool> keep(ops_.size(), false);
  for (size_t i = ops_.size(); i-- > 0;) {
    const OperatorDef &op = ops_[i];
    for (const std::string &out : op.output()) {
      if (needed.count(out)) keep[i] = true;
    }
    if (keep[i]) needed.insert(op.input().begin(), op.input().end());
  }
  // An output may be a graph input too, but some op must compute one.
  if (std::find(keep.begin(), keep.end(), true) == keep.end()) {
    return InvalidArgs("no op computes the outputs: each is a graph input");
  }
  for (const auto *names : {&inputs_, &outputs_}) {
    for (const std::string &name : *names) {
      MACE_RETURN_IF_ERROR(CheckInfoDims(
          names == &inputs_ ? "input" : "output", name,
          tensors_.at(name)->shape()));
    }
  }
  for (const std::string &name : inputs_) {
    const Tensor &tensor = *tensors_.at(name);
    model->AddInput(name, tensor.shape(), tensor.dtype(),
                    input_formats_.at(name));
  }
  for (const auto &entry : tensors_) {
    const Tensor &tensor = *entry.second;
    if (!tensor.is_constant() || !needed.count(entry.first)) continue;
    if (tensor.dtype() == DT_INT32) {
      const int32_t *data = tensor.data<int32_t>();
      model->AddInt32Tensor(entry.first, tensor.shape(),
                            std::vector<int32_t>(data, data + tensor.size()));
    } else {
      const float *data = tensor.data<float>();
      model->AddFloatTensor(entry.first, tensor.shape(),
                            std::vector<float>(data, data + tensor.size()));
    }
  }
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (keep[i]) *model->mutable_net()->add_op() = ops_[i];
  }
  for (const std::string &name : outputs_) {
    const Tensor &tensor = *tensors_.at(name);
    model->AddOutput(name, tensor.shape(), tensor.dtype(),
                     output_formats_.at(name));
  }
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace converter
}  // namespace mace
