// The public API of mace: create an engine from a model, feed tensors, run.
// Names and meaning follow XiaoMi MACE's mace/public/mace.h so that
// applications written against MACE compile against this library.

#ifndef MACE_PUBLIC_MACE_H_
#define MACE_PUBLIC_MACE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mace {

class NetDef;
class MultiNetDef;

enum class DeviceType { CPU = 0, GPU = 2, HEXAGON = 3, HTA = 4, APU = 5,
                        CPU_GPU = 100 };

// Memory layouts of tensors crossing the API (values as in MACE's proto).
enum class DataFormat {
  NONE = 0, NHWC = 1, NCHW = 2,
  HWOI = 100, OIHW = 101, HWIO = 102, OHWI = 103,
  AUTO = 1000,
};

// How worker threads are placed on cores (Linux: by each core's max freq).
enum CPUAffinityPolicy {
  AFFINITY_NONE = 0,              // no binding; threads float
  AFFINITY_BIG_ONLY = 1,          // only the fastest cores
  AFFINITY_LITTLE_ONLY = 2,       // only the slowest cores
  AFFINITY_HIGH_PERFORMANCE = 3,  // fastest cores first
  AFFINITY_POWER_SAVE = 4,        // slowest cores first
};

enum GPUPerfHint { PERF_DEFAULT = 0, PERF_LOW = 1, PERF_NORMAL = 2,
                   PERF_HIGH = 3 };
enum GPUPriorityHint { PRIORITY_DEFAULT = 0, PRIORITY_LOW = 1,
                       PRIORITY_NORMAL = 2, PRIORITY_HIGH = 3 };

// Element types of tensors crossing the API.
enum IDataType { IDT_FLOAT = 0, IDT_FLOAT16 = 1, IDT_INT32 = 2 };

enum class MemoryType { CPU_BUFFER = 0, GPU_BUFFER = 1, GPU_IMAGE = 2 };

// A result code with a message that names the file, op, tensor or field.
class MaceStatus {
 public:
  enum Code {
    MACE_SUCCESS = 0,
    MACE_INVALID_ARGS = 1,
    MACE_OUT_OF_RESOURCES = 2,
    MACE_UNSUPPORTED = 3,
    MACE_RUNTIME_ERROR = 4,
  };

  MaceStatus();
  MaceStatus(const Code code);  // NOLINT: MACE allows `return MACE_SUCCESS`
  MaceStatus(const Code code, const std::string &information);
  MaceStatus(const MaceStatus &);
  MaceStatus(MaceStatus &&);
  MaceStatus &operator=(const MaceStatus &);
  MaceStatus &operator=(const MaceStatus &&);
  ~MaceStatus();
  Code code() const;
  std::string information() const;

  bool operator==(const MaceStatus &other) const;
  bool operator!=(const MaceStatus &other) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Start and end time of one op in one run, in microseconds.
struct CallStats {
  int64_t start_micros;
  int64_t end_micros;
};

struct ConvPoolArgs {
  std::vector<int> strides;
  int padding_type;
  std::vector<int> paddings;
  std::vector<int> dilations;
  std::vector<int64_t> kernels;
};

struct OperatorStats {
  std::string operator_name;
  std::string type;
  std::vector<std::vector<int64_t>> output_shape;
  ConvPoolArgs args;
  int64_t macs;
  CallStats stats;
};

// Per-op timings of one Run, filled when a RunMetadata is passed.
class RunMetadata {
 public:
  std::vector<OperatorStats> op_stats;
};

const char *MaceVersion();

// A tensor handed to or returned by the engine. Data is shared, not copied.
class MaceTensor {
 public:
  MaceTensor(const std::vector<int64_t> &shape, std::shared_ptr<void> data,
             const DataFormat format = DataFormat::NHWC,
             const IDataType data_type = IDataType::IDT_FLOAT,
             const MemoryType mem_type = MemoryType::CPU_BUFFER);
  MaceTensor();
  MaceTensor(const MaceTensor &other);
  MaceTensor(const MaceTensor &&other);
  MaceTensor &operator=(const MaceTensor &other);
  MaceTensor &operator=(const MaceTensor &&other);
  ~MaceTensor();

  const std::vector<int64_t> &shape() const;
  const std::shared_ptr<float> data();
  const std::shared_ptr<const float> data() const;
  template <typename T>
  const std::shared_ptr<T> data() {
    return std::static_pointer_cast<T>(raw_data());
  }
  template <typename T>
  const std::shared_ptr<const T> data() const {
    return std::static_pointer_cast<const T>(raw_data());
  }
  std::shared_ptr<void> raw_data() const;
  DataFormat data_format() const;
  IDataType data_type() const;
  MemoryType memory_type() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

class GPUContext;

// Builds the (optional) GPU context; kept for source compatibility with MACE.
class GPUContextBuilder {
 public:
  GPUContextBuilder();
  ~GPUContextBuilder();
  GPUContextBuilder(const GPUContextBuilder &) = delete;
  GPUContextBuilder &operator=(const GPUContextBuilder &) = delete;
  GPUContextBuilder &SetStoragePath(const std::string &path);
  GPUContextBuilder &SetOpenCLBinaryPaths(
      const std::vector<std::string> &paths);
  GPUContextBuilder &SetOpenCLParameterPath(const std::string &path);
  std::shared_ptr<GPUContext> Finalize();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// How an engine should run: device, threads, logging.
class MaceEngineConfig {
 public:
  MaceEngineConfig();
  explicit MaceEngineConfig(const DeviceType device_type);
  ~MaceEngineConfig();
  MaceEngineConfig(const MaceEngineConfig &);
  MaceEngineConfig &operator=(const MaceEngineConfig &);

  // The device the engine must run on; only CPU is available in this build.
  void SetRuntimeType(const DeviceType runtime_type);
  MaceStatus SetGPUContext(std::shared_ptr<GPUContext> context);
  MaceStatus SetGPUHints(GPUPerfHint perf_hint, GPUPriorityHint priority_hint);
  // num_threads_hint <= 0 picks the number of cores the policy allows.
  MaceStatus SetCPUThreadPolicy(int num_threads_hint,
                                CPUAffinityPolicy policy);
  // Keeps the weights the CPU kernels repack at load (SGEMM panels,
  // Winograd-transformed filters) in the file `path`: the first engine
  // created from a weights file writes it, later ones map it and skip the
  // packing (a load then costs little more than reading the graph). The
  // file is tied to the graph, the weights file's size and modification
  // time, the CPU's kernel ISA and this library's packed layouts; a file
  // of another model or build is replaced, a damaged one ignored. Empty
  // (the default): no cache. Engines given their weights in memory do not
  // use it.
  void SetPackedWeightCache(const std::string &path);
  // Logging levels, as MACE_CPP_MIN_LOG_LEVEL / MACE_CPP_MIN_VLOG_LEVEL.
  // These override the environment variables for the whole process.
  void SetLogLevel(int min_log_level);
  void SetVLogLevel(int min_vlog_level);

  DeviceType runtime_type() const;
  int num_threads() const;
  CPUAffinityPolicy cpu_affinity_policy() const;
  const std::string &packed_weight_cache() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs one model. Create it through CreateMaceEngineFromProto.
class MaceEngine {
 public:
  explicit MaceEngine(const MaceEngineConfig &config);
  ~MaceEngine();
  MaceEngine(const MaceEngine &) = delete;
  MaceEngine &operator=(const MaceEngine &) = delete;

  // `model_data` must outlive the engine when fp32 weights are borrowed;
  // `*model_data_unused` tells the caller whether it may free it.
  MaceStatus Init(const NetDef *net_def,
                  const std::vector<std::string> &input_nodes,
                  const std::vector<std::string> &output_nodes,
                  const unsigned char *model_data, int64_t model_data_size,
                  bool *model_data_unused = nullptr,
                  MaceEngine *tutor = nullptr, bool fake_warmup = false);
  MaceStatus Init(const MultiNetDef *multi_net_def,
                  const std::vector<std::string> &input_nodes,
                  const std::vector<std::string> &output_nodes,
                  const unsigned char *model_data, int64_t model_data_size,
                  bool *model_data_unused = nullptr,
                  MaceEngine *tutor = nullptr, bool fake_warmup = false);
  // Maps the weights file; it is unmapped with the engine.
  MaceStatus Init(const NetDef *net_def,
                  const std::vector<std::string> &input_nodes,
                  const std::vector<std::string> &output_nodes,
                  const std::string &model_data_file,
                  bool *model_data_unused = nullptr,
                  MaceEngine *tutor = nullptr, bool fake_warmup = false);

  MaceStatus Run(const std::map<std::string, MaceTensor> &inputs,
                 std::map<std::string, MaceTensor> *outputs);
  MaceStatus Run(const std::map<std::string, MaceTensor> &inputs,
                 std::map<std::string, MaceTensor> *outputs,
                 RunMetadata *run_metadata);

  // Frees the intermediate arena; the next Run plans and allocates again.
  MaceStatus ReleaseIntermediateBuffer();

  // Bytes of the intermediate arena the memory planner asked for.
  int64_t planned_peak_bytes() const;

 private:
  class Impl;
  // Used by CreateMaceEngineFromProto, which hands over the graph it parsed
  // instead of having Init copy it.
  friend class EngineFactory;
  std::unique_ptr<Impl> impl_;
};

// Creates an engine from a serialized NetDef or MultiNetDef (`.pb` bytes)
// and the weights (`.data` bytes). Engines created with a `tutor` share its
// intermediate memory; they must not run concurrently with it.
MaceStatus CreateMaceEngineFromProto(
    const unsigned char *model_graph_proto, const size_t model_graph_proto_size,
    const unsigned char *model_weights_data,
    const size_t model_weights_data_size,
    const std::vector<std::string> &input_nodes,
    const std::vector<std::string> &output_nodes,
    const MaceEngineConfig &config, std::shared_ptr<MaceEngine> *engine,
    bool *model_data_unused = nullptr, MaceEngine *tutor = nullptr,
    bool fake_warmup = false);

// The same from files: the graph is read, the weights file is mapped.
MaceStatus CreateMaceEngineFromProto(
    const std::string &model_graph_file, const std::string &model_data_file,
    const std::vector<std::string> &input_nodes,
    const std::vector<std::string> &output_nodes,
    const MaceEngineConfig &config, std::shared_ptr<MaceEngine> *engine,
    MaceEngine *tutor = nullptr, bool fake_warmup = false);

// MACE's older signature: graph bytes in a vector, weights from a file.
MaceStatus CreateMaceEngineFromProto(
    const std::vector<unsigned char> &model_pb,
    const std::string &model_data_file,
    const std::vector<std::string> &input_nodes,
    const std::vector<std::string> &output_nodes,
    const MaceEngineConfig &config, std::shared_ptr<MaceEngine> *engine);

}  // namespace mace

#endif  // MACE_PUBLIC_MACE_H_
