// MaceEngine and CreateMaceEngineFromProto: binds the user's tensors to a
// prepared Net, owns the thread pool and (shares) the intermediate arena.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <string_view>

#include "mace/core/aligned_buffer.h"
#include "mace/core/logging.h"
#include "mace/core/net.h"
#include "mace/core/packed_weight_arena.h"
#include "mace/core/packed_weight_cache.h"
#include "mace/core/status.h"
#include "mace/core/thread_pool.h"
#include "mace/kernels/sgemm.h"
#include "mace/model/model_loader.h"
#include "mace/ops/op_registry.h"
#include "mace/public/mace.h"

namespace mace {
namespace {

// One intermediate arena, shared by an engine and the engines it tutors.
struct SharedArena {
  AlignedBuffer storage;
  uint8_t *base = nullptr;
  int64_t bytes = 0;
  uint64_t generation = 0;

  // Maps the pages on `pool`'s threads (may be null).
  MaceStatus Reserve(int64_t needed, ThreadPool *pool) {
    if (base != nullptr && needed <= bytes) return MaceStatus::MACE_SUCCESS;
    const int64_t size = std::max<int64_t>(needed, bytes);
    static_assert(AlignedBuffer::kAlignment % kArenaAlignment == 0,
                  "the arena's planned offsets assume its alignment");
    // Never zero bytes: a null base means "not reserved yet".
    if (!storage.Allocate(static_cast<size_t>(
            std::max<int64_t>(size, kArenaAlignment)))) {
      base = nullptr;
      bytes = 0;
      return OutOfResources("cannot allocate the ", size,
                            "-byte intermediate arena (the machine has ",
                            PhysicalMemoryBytes(), " bytes of memory)");
    }
    // Every page is written by the first run: mapping them in one call
    // costs a quarter less than faulting them in one by one.
    storage.Prefault(pool);
    base = static_cast<uint8_t *>(storage.data());
    bytes = size;
    ++generation;
    return MaceStatus::MACE_SUCCESS;
  }

  void Release() {
    storage.Release();
    base = nullptr;
    bytes = 0;
    ++generation;
  }
};

// A read-only mapping of a weights file, unmapped on destruction.
class MappedFile {
 public:
  ~MappedFile() {
    if (data_ != nullptr) munmap(data_, size_);
  }
  MaceStatus Map(const std::string &path) {
    // Mapped lazily: the kernel maps a cached file's pages 64 KiB a fault,
    // cheaper than MAP_POPULATE's page-by-page walk, and weights served
    // packed from the packed weight cache are never touched. Interleaved
    // processes (2 threads, 5-7 each): load with the cache, MobileNet-v2
    // 3.67 -> 2.54 ms, ResNet-50 6.02 -> 1.53; packing at load 5.77 ->
    // 4.52 and 41.5 -> 25.3; first runs within the noise.
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return InvalidArgs("cannot open weights file '", path, "'");
    struct stat info;
    if (fstat(fd, &info) != 0) {
      close(fd);
      return InvalidArgs("cannot stat weights file '", path, "'");
    }
    size_ = static_cast<size_t>(info.st_size);
    modified_ns_ = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 +
                   info.st_mtim.tv_nsec;
    if (size_ > 0) {
      void *mapped =
          mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (mapped == MAP_FAILED) {
        close(fd);
        return InvalidArgs("cannot map weights file '", path, "'");
      }
      data_ = mapped;
    }
    close(fd);
    return MaceStatus::MACE_SUCCESS;
  }
  const unsigned char *data() const {
    return static_cast<const unsigned char *>(data_);
  }
  int64_t size() const { return static_cast<int64_t>(size_); }
  // The file's modification time, in ns since the epoch.
  int64_t modified_ns() const { return modified_ns_; }

 private:
  void *data_ = nullptr;
  size_t size_ = 0;
  int64_t modified_ns_ = 0;
};

// The hash of a graph's serialized bytes, which name it in the packed
// weights' key. Callers that parsed the graph from bytes hash those:
// serializing it again took 0.13 ms of EfficientNet-B0's 2.1 ms cached
// load (its 73 KB graph; perf over 40 loads).
uint64_t GraphBytesHash(const void *bytes, size_t size) {
  return static_cast<uint64_t>(std::hash<std::string_view>()(
      std::string_view(static_cast<const char *>(bytes), size)));
}

uint64_t GraphHash(const NetDef &net) {
  const std::string graph = net.SerializeAsString();
  return GraphBytesHash(graph.data(), graph.size());
}

// What packed weights depend on: the graph (shapes, kernels chosen by its
// arguments), the weights (by the file's size and modification time, as
// build tools judge files), the ISA the kernels packed for and the layouts
// of this build.
std::string PackedWeightKey(uint64_t graph_hash, const MappedFile &weights) {
  char key[256];
  std::snprintf(key, sizeof(key),
                "mace packed weights: layout %d, isa %s, graph %016" PRIx64
                ", weights %" PRId64 " bytes modified at %" PRId64 " ns",
                kernels::kPackedLayoutVersion,
                kernels::SgemmIsaName(kernels::SelectedSgemmIsa()), graph_hash,
                weights.size(), weights.modified_ns());
  return key;
}

DataType ToDataType(IDataType type) {
  switch (type) {
    case IDT_FLOAT: return DT_FLOAT;
    case IDT_INT32: return DT_INT32;
    default: return DT_INVALID;
  }
}

IDataType ToIDataType(DataType type) {
  return type == DT_INT32 ? IDT_INT32 : IDT_FLOAT;
}

bool IsImageFormat(int format) { return format == 1 || format == 2; }

// True when a rank-4 tensor stored in the model as `model_format` is
// handed over in the other image layout and must be transposed.
bool NeedsTranspose(const Tensor &tensor, int model_format,
                    DataFormat user_format) {
  const int user = static_cast<int>(user_format);
  return tensor.rank() == 4 && IsImageFormat(model_format) &&
         IsImageFormat(user) && user != model_format;
}

Shape PermuteShape(const Shape &shape, bool to_nchw) {
  return to_nchw ? Shape{shape[0], shape[3], shape[1], shape[2]}
                 : Shape{shape[0], shape[2], shape[3], shape[1]};
}

// Transposes 4-byte elements between NHWC and NCHW; `shape` is the
// source's.
void TransposeImage(const void *src, void *dst, const Shape &shape,
                    bool to_nchw) {
  const uint32_t *in = static_cast<const uint32_t *>(src);
  uint32_t *out = static_cast<uint32_t *>(dst);
  const int64_t n = shape[0], a = shape[1], b = shape[2], c = shape[3];
  // NHWC [n,a=h,b=w,c] → NCHW [n,c,h,w], or NCHW [n,a=c,b=h,c=w] → NHWC.
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t x = 0; x < a; ++x) {
      for (int64_t y = 0; y < b; ++y) {
        for (int64_t z = 0; z < c; ++z) {
          const int64_t src_index = ((i * a + x) * b + y) * c + z;
          const int64_t dst_index =
              to_nchw ? ((i * c + z) * a + x) * b + y
                      : ((i * b + y) * c + z) * a + x;
          out[dst_index] = in[src_index];
        }
      }
    }
  }
}

DataFormat ToDataFormat(int format) {
  return format == 2 ? DataFormat::NCHW
                     : format == 1 ? DataFormat::NHWC : DataFormat::NONE;
}

}  // namespace

class MaceEngine::Impl {
 public:
  explicit Impl(const MaceEngineConfig &config) : config_(config) {}

  // Load, with an allocation that fails inside it reported as a status.
  MaceStatus Init(NetDef net, const std::vector<std::string> &input_nodes,
                  const std::vector<std::string> &output_nodes,
                  const unsigned char *weights, int64_t weights_size,
                  bool *model_data_unused, MaceEngine *tutor,
                  PackedWeightStore *packed_weights = nullptr);
  // `graph_hash` (GraphBytesHash of the bytes `net` was parsed from) may
  // be null: the graph is then serialized again to hash it.
  MaceStatus InitFromFile(NetDef net,
                          const std::vector<std::string> &input_nodes,
                          const std::vector<std::string> &output_nodes,
                          const std::string &weights_file,
                          bool *model_data_unused, MaceEngine *tutor,
                          const uint64_t *graph_hash = nullptr);
  MaceStatus Run(const std::map<std::string, MaceTensor> &inputs,
                 std::map<std::string, MaceTensor> *outputs,
                 RunMetadata *run_metadata);
  MaceStatus ReleaseIntermediateBuffer();
  int64_t planned_peak_bytes() const { return net_.arena_bytes(); }

 private:
  MaceStatus Load(NetDef net, const std::vector<std::string> &input_nodes,
                  const std::vector<std::string> &output_nodes,
                  const unsigned char *weights, int64_t weights_size,
                  bool *model_data_unused, MaceEngine *tutor,
                  PackedWeightStore *packed_weights);
  // Run without the workers' rest that follows it.
  MaceStatus RunSteps(const std::map<std::string, MaceTensor> &inputs,
                      std::map<std::string, MaceTensor> *outputs,
                      RunMetadata *run_metadata);
  MaceStatus BindInputs(const std::map<std::string, MaceTensor> &inputs);
  MaceStatus CopyOutputs(std::map<std::string, MaceTensor> *outputs);
  MaceStatus CopyOutput(const std::string &name, MaceTensor *user);
  std::unique_ptr<PackedWeightCache> OpenPackedWeightCache(
      const NetDef &net, const uint64_t *graph_hash);
  void LogInitTimes(std::chrono::steady_clock::time_point start,
                    std::chrono::steady_clock::time_point pool_ready,
                    std::chrono::steady_clock::time_point net_ready) const;
  void SavePackedWeightCache();

  MaceEngineConfig config_;
  std::unique_ptr<ThreadPool> thread_pool_;
  // Before net_: the ops' packed weights live in one of them.
  std::unique_ptr<PackedWeightCache> packed_weights_;
  std::unique_ptr<PackedWeightArena> packed_arena_;
  Net net_;
  std::shared_ptr<SharedArena> arena_;
  uint64_t bound_generation_ = ~uint64_t{0};
  std::map<std::string, std::unique_ptr<Tensor>> staging_;
  std::vector<unsigned char> owned_weights_;
  MappedFile mapped_weights_;
  bool initialized_ = false;
};

MaceStatus MaceEngine::Impl::Init(NetDef net,
                                  const std::vector<std::string> &input_nodes,
                                  const std::vector<std::string> &output_nodes,
                                  const unsigned char *weights,
                                  int64_t weights_size, bool *model_data_unused,
                                  MaceEngine *tutor,
                                  PackedWeightStore *packed_weights) {
  return OutOfMemoryAsStatus("loading the model", [&] {
    return Load(std::move(net), input_nodes, output_nodes, weights,
                weights_size, model_data_unused, tutor, packed_weights);
  });
}

MaceStatus MaceEngine::Impl::Load(NetDef net,
                                  const std::vector<std::string> &input_nodes,
                                  const std::vector<std::string> &output_nodes,
                                  const unsigned char *weights,
                                  int64_t weights_size, bool *model_data_unused,
                                  MaceEngine *tutor,
                                  PackedWeightStore *packed_weights) {
  if (initialized_) return InvalidArgs("the engine is already initialized");
  if (config_.runtime_type() != DeviceType::CPU) {
    return Unsupported("runtime ", static_cast<int>(config_.runtime_type()),
                       " is not available in this build (cpu only)");
  }
  if (weights_size < 0 || (weights == nullptr && weights_size > 0)) {
    return InvalidArgs("weights: null buffer or negative size ",
                       weights_size);
  }
  if (model_data_unused == nullptr && weights != mapped_weights_.data() &&
      weights_size > 0) {
    // The caller cannot learn whether it must keep the buffer: keep a copy.
    owned_weights_.assign(weights, weights + weights_size);
    weights = owned_weights_.data();
  }
  const auto start = std::chrono::steady_clock::now();
  thread_pool_ = std::make_unique<ThreadPool>(config_.num_threads(),
                                              config_.cpu_affinity_policy());
  MACE_RETURN_IF_ERROR(thread_pool_->Init());
  const auto pool_ready = std::chrono::steady_clock::now();
  const OpRegistry &registry = OpRegistry::Global();
  auto factory = [&registry](const std::string &type) {
    return registry.Create(type);
  };
  if (packed_weights == nullptr) {
    packed_arena_ = std::make_unique<PackedWeightArena>(weights_size);
    packed_weights = packed_arena_.get();
  }
  bool borrowed = false;
  MACE_RETURN_IF_ERROR(net_.Init(
      std::move(net), weights, weights_size, input_nodes, output_nodes, factory,
      thread_pool_.get(), &borrowed, packed_weights));
  if (model_data_unused != nullptr) *model_data_unused = !borrowed;
  for (const std::string &name : net_.input_names()) {
    const Tensor *input = net_.input(name);
    if (input->rank() == 4 && IsImageFormat(net_.input_data_format(name))) {
      // Allocated by the first input given in the other layout: most
      // callers never need it.
      staging_[name] =
          std::make_unique<Tensor>(name, input->dtype(), input->shape());
    }
  }
  arena_ = tutor != nullptr ? tutor->impl_->arena_
                            : std::make_shared<SharedArena>();
  const auto net_ready = std::chrono::steady_clock::now();
  MACE_RETURN_IF_ERROR(
      arena_->Reserve(net_.arena_bytes(), thread_pool_.get()));
  initialized_ = true;
  LogInitTimes(start, pool_ready, net_ready);
  return MaceStatus::MACE_SUCCESS;
}

void MaceEngine::Impl::LogInitTimes(
    std::chrono::steady_clock::time_point start,
    std::chrono::steady_clock::time_point pool_ready,
    std::chrono::steady_clock::time_point net_ready) const {
  if (logging::MinVLogLevel() < 1) return;
  using Ms = std::chrono::duration<double, std::milli>;
  const Net::InitTimes &net = net_.init_times();
  VLOG(1) << "init ms: threads " << Ms(pool_ready - start).count()
          << ", validate and tensors " << net.validate_micros / 1e3
          << ", prepare " << net.prepare_micros / 1e3
          << " (deferred packing " << net.packing_micros / 1e3 << ")"
          << ", plan " << net.plan_micros / 1e3 << ", arena "
          << Ms(std::chrono::steady_clock::now() - net_ready).count()
          << " (" << net_.arena_bytes() << " bytes)"
          << (AlignedBuffer::HugePagesFoundSlow() ? ", huge pages found slow"
                                                  : "");
}

MaceStatus MaceEngine::Impl::InitFromFile(
    NetDef net, const std::vector<std::string> &input_nodes,
    const std::vector<std::string> &output_nodes,
    const std::string &weights_file, bool *model_data_unused, MaceEngine *tutor,
    const uint64_t *graph_hash) {
  const auto start = std::chrono::steady_clock::now();
  MACE_RETURN_IF_ERROR(mapped_weights_.Map(weights_file));
  packed_weights_ = OpenPackedWeightCache(net, graph_hash);
  VLOG(1) << "init ms: weights file and packed weight cache mapped "
          << std::chrono::duration<double, std::milli>(
                 std::chrono::steady_clock::now() - start)
                 .count()
          << " (" << mapped_weights_.size() << " bytes)";
  bool unused = false;
  MACE_RETURN_IF_ERROR(WithContext(
      Init(std::move(net), input_nodes, output_nodes, mapped_weights_.data(),
           mapped_weights_.size(),
           model_data_unused != nullptr ? model_data_unused : &unused, tutor,
           packed_weights_.get()),
      "weights '" + weights_file + "'"));
  SavePackedWeightCache();
  return MaceStatus::MACE_SUCCESS;
}

std::unique_ptr<PackedWeightCache> MaceEngine::Impl::OpenPackedWeightCache(
    const NetDef &net, const uint64_t *graph_hash) {
  const std::string &path = config_.packed_weight_cache();
  if (path.empty()) return nullptr;
  const uint64_t hash = graph_hash != nullptr ? *graph_hash : GraphHash(net);
  auto cache = std::make_unique<PackedWeightCache>(
      path, PackedWeightKey(hash, mapped_weights_), mapped_weights_.size());
  std::string reason;
  if (!cache->Load(&reason)) {
    VLOG(1) << "packed weights are packed anew: " << reason;
  }
  return cache;
}

// A cache that cannot be written costs the next load its packing, nothing
// more: a warning, not an error.
void MaceEngine::Impl::SavePackedWeightCache() {
  if (packed_weights_ == nullptr) return;
  VLOG(1) << "packed weight cache '" << packed_weights_->path()
          << "': " << packed_weights_->hits() << " arrays mapped, "
          << packed_weights_->misses() << " packed";
  const MaceStatus saved = packed_weights_->Save();
  if (saved != MaceStatus::MACE_SUCCESS) {
    LOG(WARNING) << saved.information();
  }
}

MaceStatus MaceEngine::Impl::BindInputs(
    const std::map<std::string, MaceTensor> &inputs) {
  for (const auto &entry : inputs) {
    const auto &names = net_.input_names();
    if (std::find(names.begin(), names.end(), entry.first) == names.end()) {
      return InvalidArgs("input '", entry.first,
                         "' is not an input of this engine");
    }
  }
  for (const std::string &name : net_.input_names()) {
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      return InvalidArgs("input '", name, "' was not given");
    }
    const MaceTensor &user = it->second;
    Tensor *tensor = net_.input(name);
    if (user.raw_data() == nullptr) {
      return InvalidArgs("input '", name, "' has no data");
    }
    if (user.memory_type() != MemoryType::CPU_BUFFER) {
      return Unsupported("input '", name, "': only CPU buffers are supported");
    }
    if (ToDataType(user.data_type()) != tensor->dtype()) {
      return InvalidArgs("input '", name, "': data type ",
                         static_cast<int>(user.data_type()),
                         " given, the model expects ",
                         DataTypeName(tensor->dtype()));
    }
    const int model_format = net_.input_data_format(name);
    const bool transpose =
        NeedsTranspose(*tensor, model_format, user.data_format());
    const Shape expected =
        transpose ? PermuteShape(tensor->shape(), model_format == 1)
                  : tensor->shape();
    if (user.shape() != expected) {
      return InvalidArgs("input '", name, "': shape ",
                         ShapeToString(user.shape()), " given, expected ",
                         ShapeToString(expected));
    }
    if (transpose) {
      Tensor *staging = staging_.at(name).get();
      if (!staging->has_data()) {
        MACE_RETURN_IF_ERROR(staging->AllocateOwned());
      }
      TransposeImage(user.raw_data().get(), staging->raw_mutable_data(),
                     user.shape(), model_format == 2);
      tensor->BindData(staging->raw_mutable_data());
    } else {
      tensor->BindData(user.raw_data().get());
    }
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus MaceEngine::Impl::CopyOutput(const std::string &name,
                                        MaceTensor *user) {
  const Tensor *tensor = net_.output(name);
  const int model_format = net_.output_data_format(name);
  const DataFormat user_format =
      user->raw_data() == nullptr && user->shape().empty()
          ? ToDataFormat(model_format)
          : user->data_format();
  const bool transpose = NeedsTranspose(*tensor, model_format, user_format);
  const Shape expected =
      transpose ? PermuteShape(tensor->shape(), model_format == 1)
                : tensor->shape();
  if (user->raw_data() == nullptr) {
    const int64_t bytes = std::max<int64_t>(tensor->bytes(), 4);
    std::shared_ptr<void> buffer(new (std::nothrow) uint8_t[bytes],
                                 std::default_delete<uint8_t[]>());
    if (buffer == nullptr) {
      return OutOfResources("output '", name, "': cannot allocate ", bytes,
                            " bytes");
    }
    *user = MaceTensor(expected, buffer, user_format,
                       ToIDataType(tensor->dtype()));
  }
  if (ToDataType(user->data_type()) != tensor->dtype()) {
    return InvalidArgs("output '", name, "': data type ",
                       static_cast<int>(user->data_type()),
                       " given, the model produces ",
                       DataTypeName(tensor->dtype()));
  }
  const bool same_count = ShapeElementCount(user->shape()) == tensor->size();
  if (user->shape() != expected && (transpose || !same_count)) {
    return InvalidArgs("output '", name, "': buffer shape ",
                       ShapeToString(user->shape()), " does not match ",
                       ShapeToString(expected));
  }
  if (transpose) {
    TransposeImage(tensor->raw_data(), user->raw_data().get(),
                   tensor->shape(), model_format == 1);
  } else if (tensor->bytes() > 0) {
    std::memcpy(user->raw_data().get(), tensor->raw_data(), tensor->bytes());
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus MaceEngine::Impl::CopyOutputs(
    std::map<std::string, MaceTensor> *outputs) {
  const auto &names = net_.output_names();
  for (const auto &entry : *outputs) {
    if (std::find(names.begin(), names.end(), entry.first) == names.end()) {
      return InvalidArgs("output '", entry.first,
                         "' is not an output of this engine");
    }
  }
  for (const std::string &name : names) {
    MACE_RETURN_IF_ERROR(CopyOutput(name, &(*outputs)[name]));
  }
  return MaceStatus::MACE_SUCCESS;
}

MaceStatus MaceEngine::Impl::Run(
    const std::map<std::string, MaceTensor> &inputs,
    std::map<std::string, MaceTensor> *outputs, RunMetadata *run_metadata) {
  if (!initialized_) return InvalidArgs("the engine is not initialized");
  if (outputs == nullptr) return InvalidArgs("outputs must not be null");
  MaceStatus status = OutOfMemoryAsStatus("running the model", [&] {
    return RunSteps(inputs, outputs, run_metadata);
  });
  // Nothing follows soon: the workers sleep now rather than spin.
  thread_pool_->Rest();
  return status;
}

MaceStatus MaceEngine::Impl::RunSteps(
    const std::map<std::string, MaceTensor> &inputs,
    std::map<std::string, MaceTensor> *outputs, RunMetadata *run_metadata) {
  MACE_RETURN_IF_ERROR(BindInputs(inputs));
  MACE_RETURN_IF_ERROR(
      arena_->Reserve(net_.arena_bytes(), thread_pool_.get()));
  if (arena_->generation != bound_generation_) {
    net_.BindArena(arena_->base);
    bound_generation_ = arena_->generation;
  }
  MACE_RETURN_IF_ERROR(net_.Run(run_metadata));
  return CopyOutputs(outputs);
}

MaceStatus MaceEngine::Impl::ReleaseIntermediateBuffer() {
  if (arena_ != nullptr) arena_->Release();
  return MaceStatus::MACE_SUCCESS;
}

MaceEngine::MaceEngine(const MaceEngineConfig &config)
    : impl_(new Impl(config)) {}
MaceEngine::~MaceEngine() = default;

MaceStatus MaceEngine::Init(const NetDef *net_def,
                            const std::vector<std::string> &input_nodes,
                            const std::vector<std::string> &output_nodes,
                            const unsigned char *model_data,
                            int64_t model_data_size, bool *model_data_unused,
                            MaceEngine *tutor, bool fake_warmup) {
  if (net_def == nullptr) return InvalidArgs("net_def must not be null");
  return impl_->Init(*net_def, input_nodes, output_nodes, model_data,
                     model_data_size, model_data_unused, tutor);
}

MaceStatus MaceEngine::Init(const MultiNetDef *multi_net_def,
                            const std::vector<std::string> &input_nodes,
                            const std::vector<std::string> &output_nodes,
                            const unsigned char *model_data,
                            int64_t model_data_size, bool *model_data_unused,
                            MaceEngine *tutor, bool fake_warmup) {
  if (multi_net_def == nullptr) {
    return InvalidArgs("multi_net_def must not be null");
  }
  std::string bytes;
  multi_net_def->SerializeToString(&bytes);
  NetDef net;
  MACE_RETURN_IF_ERROR(ParseModelGraph(
      reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(),
      &net));
  return impl_->Init(std::move(net), input_nodes, output_nodes, model_data,
                     model_data_size, model_data_unused, tutor);
}

MaceStatus MaceEngine::Init(const NetDef *net_def,
                            const std::vector<std::string> &input_nodes,
                            const std::vector<std::string> &output_nodes,
                            const std::string &model_data_file,
                            bool *model_data_unused, MaceEngine *tutor,
                            bool fake_warmup) {
  if (net_def == nullptr) return InvalidArgs("net_def must not be null");
  return impl_->InitFromFile(*net_def, input_nodes, output_nodes,
                             model_data_file, model_data_unused, tutor);
}

MaceStatus MaceEngine::Run(const std::map<std::string, MaceTensor> &inputs,
                           std::map<std::string, MaceTensor> *outputs) {
  return impl_->Run(inputs, outputs, nullptr);
}

MaceStatus MaceEngine::Run(const std::map<std::string, MaceTensor> &inputs,
                           std::map<std::string, MaceTensor> *outputs,
                           RunMetadata *run_metadata) {
  return impl_->Run(inputs, outputs, run_metadata);
}

MaceStatus MaceEngine::ReleaseIntermediateBuffer() {
  return impl_->ReleaseIntermediateBuffer();
}

int64_t MaceEngine::planned_peak_bytes() const {
  return impl_->planned_peak_bytes();
}

// The creation functions' access to a new engine's Impl: the graph they
// parsed is moved into it rather than copied by MaceEngine::Init (a
// transformer's 70-op graph cost a tenth of its load to copy and destroy).
class EngineFactory {
 public:
  // From weights in memory (`model_data_unused` as MaceEngine::Init).
  static MaceStatus Create(NetDef net, const unsigned char *weights,
                           int64_t weights_size,
                           const std::vector<std::string> &input_nodes,
                           const std::vector<std::string> &output_nodes,
                           const MaceEngineConfig &config,
                           bool *model_data_unused, MaceEngine *tutor,
                           std::shared_ptr<MaceEngine> *engine) {
    auto created = std::make_shared<MaceEngine>(config);
    MACE_RETURN_IF_ERROR(
        created->impl_->Init(std::move(net), input_nodes, output_nodes, weights,
                             weights_size, model_data_unused, tutor));
    *engine = std::move(created);
    return MaceStatus::MACE_SUCCESS;
  }

  // From a weights file, mapped; `graph_hash` as Impl::InitFromFile.
  static MaceStatus Create(NetDef net, const std::string &weights_file,
                           const std::vector<std::string> &input_nodes,
                           const std::vector<std::string> &output_nodes,
                           const MaceEngineConfig &config, MaceEngine *tutor,
                           std::shared_ptr<MaceEngine> *engine,
                           const uint64_t *graph_hash) {
    auto created = std::make_shared<MaceEngine>(config);
    MACE_RETURN_IF_ERROR(
        created->impl_->InitFromFile(std::move(net), input_nodes, output_nodes,
                                     weights_file, nullptr, tutor, graph_hash));
    *engine = std::move(created);
    return MaceStatus::MACE_SUCCESS;
  }
};

MaceStatus CreateMaceEngineFromProto(
    const unsigned char *model_graph_proto, const size_t model_graph_proto_size,
    const unsigned char *model_weights_data,
    const size_t model_weights_data_size,
    const std::vector<std::string> &input_nodes,
    const std::vector<std::string> &output_nodes,
    const MaceEngineConfig &config, std::shared_ptr<MaceEngine> *engine,
    bool *model_data_unused, MaceEngine *tutor, bool fake_warmup) {
  if (engine == nullptr) return InvalidArgs("engine must not be null");
  NetDef net;
  MACE_RETURN_IF_ERROR(
      ParseModelGraph(model_graph_proto, model_graph_proto_size, &net));
  return EngineFactory::Create(std::move(net), model_weights_data,
                               static_cast<int64_t>(model_weights_data_size),
                               input_nodes, output_nodes, config,
                               model_data_unused, tutor, engine);
}

MaceStatus CreateMaceEngineFromProto(
    const std::string &model_graph_file, const std::string &model_data_file,
    const std::vector<std::string> &input_nodes,
    const std::vector<std::string> &output_nodes,
    const MaceEngineConfig &config, std::shared_ptr<MaceEngine> *engine,
    MaceEngine *tutor, bool fake_warmup) {
  if (engine == nullptr) return InvalidArgs("engine must not be null");
  std::string graph;
  MACE_RETURN_IF_ERROR(ReadFileToString(model_graph_file, &graph));
  NetDef net;
  MACE_RETURN_IF_ERROR(WithContext(
      ParseModelGraph(reinterpret_cast<const unsigned char *>(graph.data()),
                      graph.size(), &net),
      "'" + model_graph_file + "'"));
  const uint64_t graph_hash = GraphBytesHash(graph.data(), graph.size());
  return WithContext(
      EngineFactory::Create(std::move(net), model_data_file, input_nodes,
                            output_nodes, config, tutor, engine, &graph_hash),
      "model '" + model_graph_file + "'");
}

MaceStatus CreateMaceEngineFromProto(
    const std::vector<unsigned char> &model_pb,
    const std::string &model_data_file,
    const std::vector<std::string> &input_nodes,
    const std::vector<std::string> &output_nodes,
    const MaceEngineConfig &config, std::shared_ptr<MaceEngine> *engine) {
  if (engine == nullptr) return InvalidArgs("engine must not be null");
  NetDef net;
  MACE_RETURN_IF_ERROR(ParseModelGraph(model_pb.data(), model_pb.size(), &net));
  const uint64_t graph_hash = GraphBytesHash(model_pb.data(), model_pb.size());
  return EngineFactory::Create(std::move(net), model_data_file, input_nodes,
                               output_nodes, config, nullptr, engine,
                               &graph_hash);
}

}  // namespace mace
