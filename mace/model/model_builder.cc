#include "mace/model/model_builder.h"

#include <cstring>
#include <fstream>

#include "mace/core/status.h"
#include "mace/model/float_storage.h"

namespace mace {
namespace {

Argument *NewArg(OperatorDef *op, const std::string &name) {
  Argument *arg = op->add_arg();
  arg->set_name(name);
  return arg;
}

void AppendBytes(std::string *out, const void *data, size_t bytes) {
  out->append(static_cast<const char *>(data), bytes);
}

void AlignTo4(std::string *out) {
  while (out->size() % 4 != 0) out->push_back('\0');
}

MaceStatus WriteFile(const std::string &path, const std::string &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return InvalidArgs("cannot open '", path, "' for writing");
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) return RuntimeError("failed writing '", path, "'");
  return MaceStatus::MACE_SUCCESS;
}

}  // namespace

ModelBuilder::ModelBuilder(const std::string &name) { net_.set_name(name); }

OperatorDef *ModelBuilder::AddOp(const std::string &type,
                                 const std::string &name,
                                 const std::vector<std::string> &inputs,
                                 const std::vector<std::string> &outputs) {
  OperatorDef *op = net_.add_op();
  op->set_type(type);
  op->set_name(name);
  for (const std::string &input : inputs) op->add_input(input);
  for (const std::string &output : outputs) op->add_output(output);
  return op;
}

void ModelBuilder::AddIntArg(OperatorDef *op, const std::string &name,
                             int64_t value) {
  NewArg(op, name)->set_i(value);
}

void ModelBuilder::AddFloatArg(OperatorDef *op, const std::string &name,
                               float value) {
  NewArg(op, name)->set_f(value);
}

void ModelBuilder::AddStringArg(OperatorDef *op, const std::string &name,
                                const std::string &value) {
  NewArg(op, name)->set_s(value);
}

void ModelBuilder::AddIntsArg(OperatorDef *op, const std::string &name,
                              const std::vector<int64_t> &values) {
  Argument *arg = NewArg(op, name);
  for (int64_t v : values) arg->add_ints(v);
}

void ModelBuilder::AddFloatsArg(OperatorDef *op, const std::string &name,
                                const std::vector<float> &values) {
  Argument *arg = NewArg(op, name);
  for (float v : values) arg->add_floats(v);
}

void ModelBuilder::AddFloatTensor(const std::string &name,
                                  const std::vector<int64_t> &dims,
                                  const std::vector<float> &values) {
  ConstTensor *tensor = net_.add_tensors();
  tensor->set_name(name);
  for (int64_t d : dims) tensor->add_dims(d);
  tensor->set_data_type(DT_FLOAT);
  tensor->set_data_size(static_cast<int64_t>(values.size()));
  values_.push_back(PendingTensor{values, {}, {}});
}

void ModelBuilder::AddInt32Tensor(const std::string &name,
                                  const std::vector<int64_t> &dims,
                                  const std::vector<int32_t> &values) {
  ConstTensor *tensor = net_.add_tensors();
  tensor->set_name(name);
  for (int64_t d : dims) tensor->add_dims(d);
  tensor->set_data_type(DT_INT32);
  tensor->set_data_size(static_cast<int64_t>(values.size()));
  values_.push_back(PendingTensor{{}, values, {}});
}

void ModelBuilder::AddUint8Tensor(const std::string &name,
                                  const std::vector<int64_t> &dims,
                                  const std::vector<uint8_t> &values,
                                  float scale, int32_t zero_point) {
  ConstTensor *tensor = net_.add_tensors();
  tensor->set_name(name);
  for (int64_t d : dims) tensor->add_dims(d);
  tensor->set_data_type(DT_UINT8);
  tensor->set_data_size(static_cast<int64_t>(values.size()));
  tensor->set_scale(scale);
  tensor->set_zero_point(zero_point);
  values_.push_back(PendingTensor{{}, {}, values});
}

void ModelBuilder::AddInput(const std::string &name,
                            const std::vector<int64_t> &dims, DataType type,
                            int data_format) {
  InputOutputInfo *info = net_.add_input_info();
  info->set_name(name);
  for (int64_t d : dims) info->add_dims(static_cast<int32_t>(d));
  info->set_data_type(type);
  info->set_data_format(data_format);
}

void ModelBuilder::AddOutput(const std::string &name,
                             const std::vector<int64_t> &dims, DataType type,
                             int data_format) {
  InputOutputInfo *info = net_.add_output_info();
  info->set_name(name);
  for (int64_t d : dims) info->add_dims(static_cast<int32_t>(d));
  info->set_data_type(type);
  info->set_data_format(data_format);
}

MaceStatus ModelBuilder::Serialize(WeightStorage storage, std::string *graph,
                                   std::string *weights) const {
  NetDef net = net_;
  weights->clear();
  for (int i = 0; i < net.tensors_size(); ++i) {
    ConstTensor *tensor = net.mutable_tensors(i);
    const PendingTensor &value = values_[i];
    if (tensor->data_type() != DT_UINT8) AlignTo4(weights);
    tensor->set_offset(static_cast<int64_t>(weights->size()));
    if (tensor->data_type() == DT_INT32) {
      AppendBytes(weights, value.ints.data(), value.ints.size() * 4);
      continue;
    }
    if (tensor->data_type() == DT_UINT8) {
      AppendBytes(weights, value.bytes.data(), value.bytes.size());
      continue;
    }
    switch (storage) {
      case WeightStorage::kFloat32:
        AppendBytes(weights, value.floats.data(), value.floats.size() * 4);
        break;
      case WeightStorage::kFloat16:
      case WeightStorage::kBFloat16: {
        const bool half = storage == WeightStorage::kFloat16;
        tensor->set_data_type(half ? DT_HALF : DT_BFLOAT16);
        for (float v : value.floats) {
          const uint16_t bits = half ? FloatToHalf(v) : FloatToBFloat16(v);
          AppendBytes(weights, &bits, 2);
        }
        break;
      }
    }
  }
  AlignTo4(weights);
  net.set_data_type(storage == WeightStorage::kFloat32   ? DT_FLOAT
                    : storage == WeightStorage::kFloat16 ? DT_HALF
                                                         : DT_BFLOAT16);
  net.set_data_offset(0);
  net.set_data_size(static_cast<int32_t>(weights->size()));
  if (!net.SerializeToString(graph)) {
    return RuntimeError("cannot serialize model '", net.name(), "'");
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus ModelBuilder::WriteFiles(const std::string &graph_path,
                                    const std::string &weights_path,
                                    WeightStorage storage) const {
  std::string graph, weights;
  MACE_RETURN_IF_ERROR(Serialize(storage, &graph, &weights));
  MACE_RETURN_IF_ERROR(WriteFile(graph_path, graph));
  return WriteFile(weights_path, weights);
}

}  // namespace mace
