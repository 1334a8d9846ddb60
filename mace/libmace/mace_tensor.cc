// MaceTensor, MaceEngineConfig, GPUContextBuilder and MaceVersion.

#include "mace/core/logging.h"
#include "mace/public/mace.h"

namespace mace {

const char *MaceVersion() { return "mace 0.1.0"; }

class MaceTensor::Impl {
 public:
  std::vector<int64_t> shape;
  std::shared_ptr<void> data;
  DataFormat format = DataFormat::NHWC;
  IDataType data_type = IDT_FLOAT;
  MemoryType mem_type = MemoryType::CPU_BUFFER;
};

MaceTensor::MaceTensor(const std::vector<int64_t> &shape,
                       std::shared_ptr<void> data, const DataFormat format,
                       const IDataType data_type, const MemoryType mem_type)
    : impl_(new Impl) {
  impl_->shape = shape;
  impl_->data = std::move(data);
  impl_->format = format;
  impl_->data_type = data_type;
  impl_->mem_type = mem_type;
}
MaceTensor::MaceTensor() : impl_(new Impl) {}
MaceTensor::MaceTensor(const MaceTensor &other)
    : impl_(new Impl(*other.impl_)) {}
MaceTensor::MaceTensor(const MaceTensor &&other)
    : impl_(new Impl(*other.impl_)) {}
MaceTensor &MaceTensor::operator=(const MaceTensor &other) {
  *impl_ = *other.impl_;
  return *this;
}
MaceTensor &MaceTensor::operator=(const MaceTensor &&other) {
  *impl_ = *other.impl_;
  return *this;
}
MaceTensor::~MaceTensor() = default;

const std::vector<int64_t> &MaceTensor::shape() const { return impl_->shape; }
const std::shared_ptr<float> MaceTensor::data() {
  return std::static_pointer_cast<float>(impl_->data);
}
const std::shared_ptr<const float> MaceTensor::data() const {
  return std::static_pointer_cast<const float>(impl_->data);
}
std::shared_ptr<void> MaceTensor::raw_data() const { return impl_->data; }
DataFormat MaceTensor::data_format() const { return impl_->format; }
IDataType MaceTensor::data_type() const { return impl_->data_type; }
MemoryType MaceTensor::memory_type() const { return impl_->mem_type; }

class GPUContext {};

class GPUContextBuilder::Impl {};
GPUContextBuilder::GPUContextBuilder() : impl_(new Impl) {}
GPUContextBuilder::~GPUContextBuilder() = default;
GPUContextBuilder &GPUContextBuilder::SetStoragePath(const std::string &) {
  return *this;
}
GPUContextBuilder &GPUContextBuilder::SetOpenCLBinaryPaths(
    const std::vector<std::string> &) {
  return *this;
}
GPUContextBuilder &GPUContextBuilder::SetOpenCLParameterPath(
    const std::string &) {
  return *this;
}
std::shared_ptr<GPUContext> GPUContextBuilder::Finalize() {
  return std::make_shared<GPUContext>();
}

class MaceEngineConfig::Impl {
 public:
  DeviceType runtime = DeviceType::CPU;
  int num_threads = 1;
  CPUAffinityPolicy policy = AFFINITY_NONE;
  std::string packed_weight_cache;
};

MaceEngineConfig::MaceEngineConfig() : impl_(new Impl) {}
MaceEngineConfig::MaceEngineConfig(const DeviceType device_type)
    : impl_(new Impl) {
  impl_->runtime = device_type;
}
MaceEngineConfig::~MaceEngineConfig() = default;
MaceEngineConfig::MaceEngineConfig(const MaceEngineConfig &other)
    : impl_(new Impl(*other.impl_)) {}
MaceEngineConfig &MaceEngineConfig::operator=(const MaceEngineConfig &other) {
  *impl_ = *other.impl_;
  return *this;
}

void MaceEngineConfig::SetRuntimeType(const DeviceType runtime_type) {
  impl_->runtime = runtime_type;
}
MaceStatus MaceEngineConfig::SetGPUContext(std::shared_ptr<GPUContext>) {
  return MaceStatus(MaceStatus::MACE_UNSUPPORTED,
                    "runtime gpu is not available in this build");
}
MaceStatus MaceEngineConfig::SetGPUHints(GPUPerfHint, GPUPriorityHint) {
  return MaceStatus(MaceStatus::MACE_UNSUPPORTED,
                    "runtime gpu is not available in this build");
}
MaceStatus MaceEngineConfig::SetCPUThreadPolicy(int num_threads_hint,
                                                CPUAffinityPolicy policy) {
  if (policy < AFFINITY_NONE || policy > AFFINITY_POWER_SAVE) {
    return MaceStatus(MaceStatus::MACE_INVALID_ARGS,
                      "unknown CPU affinity policy " +
                          std::to_string(static_cast<int>(policy)));
  }
  impl_->num_threads = num_threads_hint;
  impl_->policy = policy;
  return MaceStatus::MACE_SUCCESS;
}
void MaceEngineConfig::SetPackedWeightCache(const std::string &path) {
  impl_->packed_weight_cache = path;
}
void MaceEngineConfig::SetLogLevel(int min_log_level) {
  logging::SetMinLogLevel(min_log_level);
}
void MaceEngineConfig::SetVLogLevel(int min_vlog_level) {
  logging::SetMinVLogLevel(min_vlog_level);
}
DeviceType MaceEngineConfig::runtime_type() const { return impl_->runtime; }
int MaceEngineConfig::num_threads() const { return impl_->num_threads; }
CPUAffinityPolicy MaceEngineConfig::cpu_affinity_policy() const {
  return impl_->policy;
}
const std::string &MaceEngineConfig::packed_weight_cache() const {
  return impl_->packed_weight_cache;
}

}  // namespace mace
