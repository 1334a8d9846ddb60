// What the libFuzzer targets share: values drawn from the fuzzer's bytes
// (small sizes most of the time, overflowing and special ones sometimes),
// the rule that every failure carries a message, and one run of a loaded
// model on fuzzer-chosen inputs.

#ifndef TESTS_FUZZ_FUZZ_UTIL_H_
#define TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "mace/model/model_builder.h"
#include "mace/public/mace.h"

namespace mace {
namespace fuzz {

// Each fuzzer defines it: what one input builds and checks.
// fuzz_main.cc hands it libFuzzer's inputs.
int FuzzOneInput(const uint8_t *bytes, size_t size);

template <typename T, size_t kN>
const T &Pick(FuzzedDataProvider *data, const T (&values)[kN]) {
  return values[data->ConsumeIntegralInRange<size_t>(0, kN - 1)];
}

template <typename T>
const T &Pick(FuzzedDataProvider *data, const std::vector<T> &values) {
  return values[data->ConsumeIntegralInRange<size_t>(0, values.size() - 1)];
}

// Mostly small integers, sometimes ones that overflow or mean "all".
inline int64_t AnyInt(FuzzedDataProvider *data) {
  static const int64_t kExtremes[] = {-1000,        -2,         -1,
                                      0,            1,          1000,
                                      1 << 20,      1LL << 31,  -(1LL << 31),
                                      1LL << 40,    INT64_MAX,  INT64_MIN};
  if (data->ConsumeBool()) return data->ConsumeIntegralInRange<int64_t>(-3, 8);
  return Pick(data, kExtremes);
}

inline float AnyFloat(FuzzedDataProvider *data) {
  switch (data->ConsumeIntegralInRange(0, 3)) {
    case 0:
      return static_cast<float>(data->ConsumeIntegralInRange(-4, 8));
    case 1:
      return data->ConsumeFloatingPointInRange<float>(-2.0f, 2.0f);
    case 2:
      return data->ConsumeFloatingPoint<float>();  // NaN, inf, denormals
    default:
      return static_cast<float>(AnyInt(data));
  }
}

// Elements of `dims`, or -1 when a dim is negative or the tensor is
// larger than a fuzz run should allocate.
inline int64_t ElementCount(const std::vector<int64_t> &dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0 || dim > 4096) return -1;
    count *= dim;
    if (count > (1 << 16)) return -1;
  }
  return count;
}

// A shape of rank 0 to max_rank: dims of 1 to 6, one in 16 any integer.
inline std::vector<int64_t> AnyDims(FuzzedDataProvider *data, int max_rank) {
  std::vector<int64_t> dims(data->ConsumeIntegralInRange(0, max_rank));
  for (int64_t &dim : dims) {
    dim = data->ConsumeIntegralInRange(0, 15) == 0
              ? AnyInt(data)
              : data->ConsumeIntegralInRange<int64_t>(1, 6);
  }
  return dims;
}

// A load or run that fails must say why.
inline void ExpectExplained(const MaceStatus &status, const char *stage) {
  if (status != MaceStatus::MACE_SUCCESS && status.information().empty()) {
    std::fprintf(stderr, "%s failed without a message\n", stage);
    std::abort();
  }
}

// Serializes `model` with fuzzer-chosen weight storage and loads it on
// one CPU thread. Each step that fails must say why.
inline MaceStatus LoadModel(FuzzedDataProvider *data, const ModelBuilder &model,
                            const std::vector<std::string> &input_names,
                            const std::vector<std::string> &output_names,
                            std::shared_ptr<MaceEngine> *engine) {
  static const WeightStorage kStorages[] = {WeightStorage::kFloat32,
                                            WeightStorage::kFloat16,
                                            WeightStorage::kBFloat16};
  std::string graph, weights;
  const MaceStatus serialized =
      model.Serialize(Pick(data, kStorages), &graph, &weights);
  ExpectExplained(serialized, "serialize");
  if (serialized != MaceStatus::MACE_SUCCESS) return serialized;
  MaceEngineConfig config(DeviceType::CPU);
  config.SetCPUThreadPolicy(1, AFFINITY_NONE);
  const MaceStatus loaded = CreateMaceEngineFromProto(
      reinterpret_cast<const unsigned char *>(graph.data()), graph.size(),
      reinterpret_cast<const unsigned char *>(weights.data()), weights.size(),
      input_names, output_names, config, engine);
  ExpectExplained(loaded, "load");
  return loaded;
}

// One input of a model to feed.
struct FuzzInput {
  std::string name;
  std::vector<int64_t> dims;
  bool is_int32 = false;
  DataFormat format = DataFormat::NHWC;
};

// Runs `engine` once on inputs of the given shapes filled from the
// fuzzer's bytes (zeros once they run out). Inputs too large to fill are
// skipped: such a run would only measure the machine.
inline void RunOnce(FuzzedDataProvider *data, MaceEngine *engine,
                    const std::vector<FuzzInput> &inputs) {
  std::map<std::string, MaceTensor> tensors;
  for (const FuzzInput &input : inputs) {
    const int64_t count = ElementCount(input.dims);
    if (count < 0) return;
    std::shared_ptr<float> buffer(new float[count + 1](),
                                  std::default_delete<float[]>());
    for (int64_t i = 0; i < count && data->remaining_bytes() > 0; ++i) {
      if (input.is_int32) {
        const int32_t value = static_cast<int32_t>(AnyInt(data));
        std::memcpy(buffer.get() + i, &value, sizeof(value));
      } else {
        buffer.get()[i] = AnyFloat(data);
      }
    }
    tensors.emplace(input.name,
                    MaceTensor(input.dims, buffer, input.format,
                               input.is_int32 ? IDT_INT32 : IDT_FLOAT));
  }
  std::map<std::string, MaceTensor> outputs;
  ExpectExplained(engine->Run(tensors, &outputs), "run");
}

}  // namespace fuzz
}  // namespace mace

#endif  // TESTS_FUZZ_FUZZ_UTIL_H_
