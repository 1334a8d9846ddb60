#include "tests/common/op_tester.h"

#include <cstring>
#include <map>
#include <memory>

namespace mace {
namespace test {

OpTester::OpTester(const std::string &type, const std::string &name)
    : builder_("op_test") {
  op_ = builder_.AddOp(type, name, {}, {});
}

OpTester &OpTester::Input(const std::string &name,
                          const std::vector<int64_t> &shape,
                          const std::vector<float> &data) {
  op_->add_input(name);
  builder_.AddInput(name, shape, DT_FLOAT, 0);
  inputs_.push_back(Fed{name, shape, data, {}, false});
  return *this;
}

OpTester &OpTester::InputInt(const std::string &name,
                             const std::vector<int64_t> &shape,
                             const std::vector<int32_t> &data) {
  op_->add_input(name);
  builder_.AddInput(name, shape, DT_INT32, 0);
  inputs_.push_back(Fed{name, shape, {}, data, true});
  return *this;
}

OpTester &OpTester::Constant(const std::string &name,
                             const std::vector<int64_t> &shape,
                             const std::vector<float> &data) {
  op_->add_input(name);
  builder_.AddFloatTensor(name, shape, data);
  return *this;
}

OpTester &OpTester::ConstantInt(const std::string &name,
                                const std::vector<int64_t> &shape,
                                const std::vector<int32_t> &data) {
  op_->add_input(name);
  builder_.AddInt32Tensor(name, shape, data);
  return *this;
}

OpTester &OpTester::ConstantUint8(const std::string &name,
                                  const std::vector<int64_t> &shape,
                                  const std::vector<uint8_t> &data,
                                  float scale, int32_t zero_point) {
  op_->add_input(name);
  builder_.AddUint8Tensor(name, shape, data, scale, zero_point);
  return *this;
}

OpTester &OpTester::Output(const std::string &name) {
  op_->add_output(name);
  output_names_.push_back(name);
  output_is_int_.push_back(false);
  return *this;
}

OpTester &OpTester::OutputInt(const std::string &name) {
  op_->add_output(name);
  output_names_.push_back(name);
  output_is_int_.push_back(true);
  return *this;
}

OpTester &OpTester::Arg(const std::string &name, int64_t value) {
  ModelBuilder::AddIntArg(op_, name, value);
  return *this;
}
OpTester &OpTester::ArgFloat(const std::string &name, float value) {
  ModelBuilder::AddFloatArg(op_, name, value);
  return *this;
}
OpTester &OpTester::ArgString(const std::string &name,
                              const std::string &value) {
  ModelBuilder::AddStringArg(op_, name, value);
  return *this;
}
OpTester &OpTester::ArgInts(const std::string &name,
                            const std::vector<int64_t> &values) {
  ModelBuilder::AddIntsArg(op_, name, values);
  return *this;
}
OpTester &OpTester::ArgFloats(const std::string &name,
                              const std::vector<float> &values) {
  ModelBuilder::AddFloatsArg(op_, name, values);
  return *this;
}
OpTester &OpTester::Storage(WeightStorage storage) {
  storage_ = storage;
  return *this;
}
OpTester &OpTester::Threads(int num_threads) {
  num_threads_ = num_threads;
  return *this;
}

MaceStatus OpTester::Run() {
  for (size_t i = 0; i < output_names_.size(); ++i) {
    builder_.AddOutput(output_names_[i], {},
                       output_is_int_[i] ? DT_INT32 : DT_FLOAT, 0);
  }
  std::string graph, weights;
  MaceStatus status = builder_.Serialize(storage_, &graph, &weights);
  if (status != MaceStatus::MACE_SUCCESS) return status;
  MaceEngineConfig config(DeviceType::CPU);
  config.SetCPUThreadPolicy(num_threads_, AFFINITY_NONE);
  std::shared_ptr<MaceEngine> engine;
  std::vector<std::string> input_names;
  for (const Fed &fed : inputs_) input_names.push_back(fed.name);
  status = CreateMaceEngineFromProto(
      reinterpret_cast<const unsigned char *>(graph.data()), graph.size(),
      reinterpret_cast<const unsigned char *>(weights.data()), weights.size(),
      input_names, output_names_, config, &engine);
  if (status != MaceStatus::MACE_SUCCESS) return status;

  std::map<std::string, MaceTensor> inputs;
  for (const Fed &fed : inputs_) {
    const size_t count = fed.is_int ? fed.ints.size() : fed.floats.size();
    std::shared_ptr<void> buffer(new uint8_t[count * 4 + 4],
                                 std::default_delete<uint8_t[]>());
    std::memcpy(buffer.get(),
                fed.is_int ? static_cast<const void *>(fed.ints.data())
                           : static_cast<const void *>(fed.floats.data()),
                count * 4);
    inputs[fed.name] = MaceTensor(fed.shape, buffer, DataFormat::NONE,
                                  fed.is_int ? IDT_INT32 : IDT_FLOAT);
  }
  std::map<std::string, MaceTensor> outputs;
  status = engine->Run(inputs, &outputs);
  if (status != MaceStatus::MACE_SUCCESS) return status;
  outputs_.clear();
  for (const std::string &name : output_names_) {
    const MaceTensor &tensor = outputs.at(name);
    TensorValue value;
    value.shape = tensor.shape();
    int64_t count = 1;
    for (int64_t d : value.shape) count *= d;
    value.is_int = tensor.data_type() == IDT_INT32;
    if (value.is_int) {
      const int32_t *data = tensor.data<int32_t>().get();
      value.ints.assign(data, data + count);
    } else {
      const float *data = tensor.data<float>().get();
      value.floats.assign(data, data + count);
    }
    outputs_.push_back(std::move(value));
  }
  return MaceStatus::MACE_SUCCESS;
}

const TensorValue &OpTester::output(const std::string &name) const {
  for (size_t i = 0; i < output_names_.size(); ++i) {
    if (output_names_[i] == name) return outputs_[i];
  }
  static const TensorValue kEmpty;
  return kEmpty;
}

}  // namespace test
}  // namespace mace
